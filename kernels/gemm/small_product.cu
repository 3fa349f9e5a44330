// Stages 2-4 of small products in one kernel: for a 64 x 64 output tile of one item of a
// stack (k <= OZ_SP_K), the residues of the scaled integers (as gemm/residues.cu), the
// INT8 products of every modulus (mma.sync m16n8k32, INT32 sums reduced mod p on chip) and
// the CRT reconstruction with one rounding (as gemm/phase_b.cu): nothing but the operands,
// their shifts and the output touches device memory. The same integers as the staged
// kernels, so the same bits (the CRT integer is unique and rounded once).
//
// Block: 8 warps per residue plane (real 256 threads; a Gaussian system 512, its two
// products T+ = A+ B+, T- = A- B- side by side). Each warp owns 4 / planes of the tile's 32
// m16n8 output tiles and computes all its planes' products for them, so the residues of an
// output stay with one thread: kept as bytes in shared memory across the moduli (each
// thread its own), then summed into the CRT digits (common/ozaki_common.cuh, "CRT
// reconstruction").
// Shared memory holds the INT8 residues of OZ_SP_CHUNK moduli at a time, stored in the
// order of the mma fragments (PTX ISA, m16n8k32 with 8-bit A/B; g = lane / 4, q = lane %
// 4): an A fragment (16 rows x 32 k) is 32 lanes x 16 bytes, lane g 4 + q holding
// A[g][4q..], A[g+8][4q..], A[g][16+4q..], A[g+8][16+4q..]; a Bt fragment (8 rows x 32 k)
// is 32 lanes x 8 bytes, Bt[g][4q..], Bt[g][16+4q..]: each lane reads its fragment with one
// 16- or 8-byte load, conflict-free. The digits of the scaled entries are recomputed per
// chunk (cheaper than holding them).
#include "common/ozaki_common.cuh"
#include "gemm/output_format.cuh"
#ifdef OZ_SP_SHIFTS
#include "gemm/warp_row_stats.cuh"
#endif

// OZ_SP_B_COLUMNS: the slices kernels' second operand is B itself (items x k x n, C order),
// read in place (its fill takes B's columns as Bt's rows, and with OZ_SP_SHIFTS forms their
// statistics from the entries it holds: no transposed copy in front of the kernel); only
// with OZ_SP_SLICES, one item a block.
#if defined(OZ_SP_B_COLUMNS) && (!defined(OZ_SP_SLICES) || defined(OZ_SP_PACKED))
#error "OZ_SP_B_COLUMNS is a variant of the slices kernels (OZ_SP_SLICES) without OZ_SP_PACKED"
#endif
// 1 where B's fill forms B's shifts (B in place, shifts formed here): oz_sp_shifts then
// takes A's rows only
#if defined(OZ_SP_B_COLUMNS) && defined(OZ_SP_SHIFTS)
#define OZ_SP_FILL_FORMS_B_SHIFTS 1
#else
#define OZ_SP_FILL_FORMS_B_SHIFTS 0
#endif

#define OZ_SP_TILE 64                   // output rows and columns of a block
#define OZ_SP_K 64                      // the longest k (two k-steps of 32)
#define OZ_SP_KSTEPS (OZ_SP_K / 32)
static_assert(OZ_SP_K * 128 * 128 < (1 << 30), "INT32 sums fit oz_mod_nonneg_small");
#define OZ_SP_QUADS (OZ_SP_K / 4)       // 4-entry groups of a row
#define OZ_SP_A_FRAG 512                // bytes of one A fragment (16 x 32)
#define OZ_SP_B_FRAG 256                // bytes of one Bt fragment (8 x 32)
// bytes of one plane of one modulus: 4 A row tiles and 8 Bt row tiles, each OZ_SP_KSTEPS deep
#define OZ_SP_A_PLANE (4 * OZ_SP_KSTEPS * OZ_SP_A_FRAG)
#define OZ_SP_B_PLANE (8 * OZ_SP_KSTEPS * OZ_SP_B_FRAG)

#ifndef OZ_SP_CHUNK
#define OZ_SP_CHUNK OZ_NUM_MODULI
#endif
#define OZ_SP_CHUNKS ((OZ_NUM_MODULI + OZ_SP_CHUNK - 1) / OZ_SP_CHUNK)

// c += a b for one m16n8k32 INT8 tile (fragments as above).
__device__ __forceinline__ void oz_mma_s8(int (&c)[4], const uint4& a, const uint2& b) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));
}

// The tile row and column of C fragment element e (0 .. 3) of lane 4 g + q in the warp's
// output tile at row tile mt, column tile nt0 + u (m16n8: rows g and g + 8, columns 2 q
// and 2 q + 1).
__device__ __forceinline__ int oz_sp_cell_row(int mt, int g, int e) {
    return 16 * mt + g + 8 * (e / 2);
}
__device__ __forceinline__ int oz_sp_cell_col(int nt0, int q, int u, int e) {
    return 8 * (nt0 + u) + 2 * q + e % 2;
}

// acc[u] += the products of the warp's m16n8 output tiles (row tile mt, column tiles nt0 +
// u) over k, from the A plane pa and the Bt plane pb (fragment order above).
template <int tiles>
__device__ __forceinline__ void oz_sp_tile_products(int (&acc)[tiles][4], const char* pa,
                                                    const char* pb, int mt, int nt0, int lane) {
#pragma unroll
    for (int ks = 0; ks < OZ_SP_KSTEPS; ++ks) {
        const uint4 fa =
            *reinterpret_cast<const uint4*>(pa + (mt * OZ_SP_KSTEPS + ks) * OZ_SP_A_FRAG + lane * 16);
#pragma unroll
        for (int u = 0; u < tiles; ++u) {
            const uint2 fb = *reinterpret_cast<const uint2*>(
                pb + ((nt0 + u) * OZ_SP_KSTEPS + ks) * OZ_SP_B_FRAG + lane * 8);
            oz_mma_s8(acc[u], fa, fb);
        }
    }
}

// body(i, c) for each modulus i of chunk `chunk`, c its place in the chunk. Unrolled: with
// the chunk a constant (the caller's loop over chunks unrolled), i and c are constants in
// the body, and the moduli and their constants stay immediates.
template <typename F>
__device__ __forceinline__ void oz_sp_each_modulus(int chunk, F body) {
#pragma unroll
    for (int i = 0; i < OZ_NUM_MODULI; ++i)
        if (i / OZ_SP_CHUNK == chunk) body(i, i % OZ_SP_CHUNK);
}

// Shared-memory offset of the 4 residues of row r, entries h0 .. h0 + 3 (h0 % 4 == 0), in
// the fragment order of A (rows of 16) or of Bt (rows of 8); plane_base: the plane's start.
__device__ __forceinline__ int oz_sp_a_offset(int r, int h0) {
    const int tile = r / 16, rr = r % 16, ks = h0 / 32, kk = h0 % 32;
    const int lane = (rr % 8) * 4 + (kk % 16) / 4, reg = rr / 8 + 2 * (kk / 16);
    return (tile * OZ_SP_KSTEPS + ks) * OZ_SP_A_FRAG + lane * 16 + reg * 4;
}
__device__ __forceinline__ int oz_sp_b_offset(int r, int h0) {
    const int tile = r / 8, ks = h0 / 32, kk = h0 % 32;
    const int lane = (r % 8) * 4 + (kk % 16) / 4, reg = kk / 16;
    return (tile * OZ_SP_KSTEPS + ks) * OZ_SP_B_FRAG + lane * 8 + reg * 4;
}

// The rows of one operand in a block's tile: tile row r (< 64) is row row0 + r % span of
// item item0 + r / span, span = 2**span_shift = 64 / pack. One item per block (pack 1:
// rows row0 ..), or `pack` small items (m, n <= span) side by side, whose products are the
// tile's diagonal span x span blocks. Rows past `rows` and items past `items` are padding.
struct OzSpRows {
    const double* x;  // the launch's stack: items x rows x row_len doubles
    long long rows, row0, item0, items, row_len;
    int span_shift;
    __device__ __forceinline__ long long item(int r) const { return item0 + (r >> span_shift); }
    __device__ __forceinline__ long long row(int r) const {
        return row0 + (r & ((1 << span_shift) - 1));
    }
    __device__ __forceinline__ bool valid(int r) const {
#ifdef OZ_SP_PACKED
        return item(r) < items && row(r) < rows;
#else
        return row(r) < rows;  // (one item per block: every block's item exists)
#endif
    }
    // row r's index in the stack's (items x rows) rows, and its first double
    __device__ __forceinline__ long long index(int r) const { return item(r) * rows + row(r); }
    __device__ __forceinline__ const double* ptr(int r) const { return x + index(r) * row_len; }
    // With OZ_SP_B_COLUMNS, B's rows are its columns read in place: x is the stack of B
    // (items x (row_len / parts) x rows entries of `parts` doubles, C order), and column r's
    // entry h is at column(r) + h column_stride() doubles.
    template <int parts>
    __device__ __forceinline__ const double* column(int r) const {
        return x + item(r) * rows * row_len + parts * row(r);
    }
    template <int parts>
    __device__ __forceinline__ long long column_stride() const {
        return parts * rows;
    }
};

// A block's A rows (row tile blockIdx.y) and Bt rows (column tile col_tile, by default
// blockIdx.x, `columns` wide), rows of row_len doubles, of the items from blockIdx.z << (6 -
// span_shift).
struct OzSpBlockRows {
    OzSpRows a, b;
};
__device__ __forceinline__ OzSpBlockRows oz_sp_block_rows(const double* a, const double* bt,
                                                          long long m, long long n,
                                                          long long row_len, long long items,
                                                          int span_shift, int columns,
                                                          long long col_tile = -1) {
    const long long item0 = (long long)blockIdx.z << (6 - span_shift);
    if (col_tile < 0) col_tile = blockIdx.x;
    return {{a, m, (long long)blockIdx.y * OZ_SP_TILE, item0, items, row_len, span_shift},
            {bt, n, col_tile * columns, item0, items, row_len, span_shift}};
}

// The residues of moduli chunk * OZ_SP_CHUNK .. of the block's A rows (a tile of 64 rows
// of the item from row0) and Bt rows into shared memory: planes 1 (real) or 2 (Gaussian:
// rmod(re +- j im)), [modulus in chunk][plane][A | Bt]. Padding rows (OzSpRows) and quads
// past k are stored as zeros without their residue work; shift[r] is the shift of the
// tile's row r.
// (chunk is a constant once the caller's loop over chunks is unrolled, and so is each
// modulus index: the moduli and their constants stay immediates.)
template <int planes>
__device__ __forceinline__ void oz_sp_fill(char* smem, int chunk, const OzSpRows& src,
                                           long long k, const int* __restrict__ shift, bool is_b) {
    constexpr int per_modulus = planes * (OZ_SP_A_PLANE + OZ_SP_B_PLANE);
    for (int q = threadIdx.x; q < OZ_SP_TILE * OZ_SP_QUADS; q += blockDim.x) {
        const int r = q / OZ_SP_QUADS, h0 = 4 * (q % OZ_SP_QUADS);
        const int off = is_b ? planes * OZ_SP_A_PLANE + oz_sp_b_offset(r, h0)
                             : oz_sp_a_offset(r, h0);
        if (!src.valid(r) || h0 >= k) {  // padding (short rows, k < OZ_SP_K): zero residues
            oz_sp_each_modulus(chunk, [&](int, int c) {
                char* base = smem + c * per_modulus + off;
#pragma unroll
                for (int p = 0; p < planes; ++p)
                    *reinterpret_cast<int*>(base + p * (is_b ? OZ_SP_B_PLANE : OZ_SP_A_PLANE)) = 0;
            });
            continue;
        }
        if constexpr (planes == 1) {
            OzEntryDigits re[4], im[4];
            oz_row_digits<1>(src.ptr(r), h0, k, shift[r], re, im);
            oz_sp_each_modulus(chunk, [&](int i, int c) {
                *reinterpret_cast<char4*>(smem + c * per_modulus + off) =
                    make_char4(oz_residue(re[0], i), oz_residue(re[1], i), oz_residue(re[2], i),
                               oz_residue(re[3], i));
            });
        } else {
#ifdef OZ_GAUSSIAN
            const int plane_bytes = is_b ? OZ_SP_B_PLANE : OZ_SP_A_PLANE;
            OzDigits24 re[4], im[4];
            oz_row_digits<2>(src.ptr(r), h0, k, shift[r], re, im);
            oz_sp_each_modulus(chunk, [&](int i, int c) {
                int rp[4], rm[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) oz_gaussian_residues(re[e], im[e], i, rp[e], rm[e]);
                char* base = smem + c * per_modulus + off;
                *reinterpret_cast<char4*>(base) = make_char4(rp[0], rp[1], rp[2], rp[3]);
                *reinterpret_cast<char4*>(base + plane_bytes) = make_char4(rm[0], rm[1], rm[2], rm[3]);
            });
#endif
        }
    }
}

#ifdef OZ_SP_SHIFTS
// The fast-mode shifts of R rows of `width` (<= 32 V) doubles for the CRT budget `budget`,
// by one warp, into shift[0 .. R): the row statistics (gemm/warp_row_stats.cuh, the
// integers of gemm/scaling.cu) and oz_fast_shift_of, as oz_row_rule applies it.
template <int R, int V>
__device__ __forceinline__ void oz_sp_row_shifts(const double* const (&rows)[R], int width,
                                                 int budget, int* shift, unsigned& nans,
                                                 unsigned& infs) {
    int row_max[R];
    oz_i64 sumsq;  // row lane's, in lanes 0 .. R - 1
    oz_warp_row_stats<R, V>(rows, width, row_max, sumsq, nans, infs);
    const int lane = threadIdx.x % 32;
    if (lane < R) {  // lane r writes row r's (unrolled select: registers stay registers)
        int e = 0;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (r == lane) e = row_max[r];
        shift[lane] = (int)oz_fast_shift_of(e, sumsq, budget);
    }
}
#endif

// NaN/Inf counts: counts[0 .. 4) in device memory, zero before the launch, and
// counts[OZ_SP_FLAG_SLOT] the address of a mapped host flag (or 0) set with them, so that
// the host of a call on finite operands reads the flag alone, no counts (the engine's
// kept counts, ozfft/engines/cuda/flags.py).
#define OZ_SP_FLAG_SLOT 4
__device__ __forceinline__ void oz_sp_count(unsigned long long* counts, int slot, unsigned n) {
    atomicAdd(&counts[slot], (unsigned long long)n);
    const unsigned long long flag = counts[OZ_SP_FLAG_SLOT];
    if (flag) *reinterpret_cast<volatile int*>(flag) = 1;
}

// The shifts of the block's 64 A rows (unless not with_a) and b_rows Bt rows into shift[0 ..
// 64) and [64 .. 64 + b_rows) (zero for padding rows): read, or with OZ_SP_SHIFTS computed here (the
// fast-mode rule for `budget`; the blocks of the first column tile (count_a) count A's NaN
// and Inf entries into counts[0], counts[1], those of the first row tile Bt's into
// counts[2], counts[3]).
template <int planes, int b_rows = OZ_SP_TILE>
__device__ __forceinline__ void oz_sp_shifts(int* shift, const OzSpRows& rows_a,
                                             const OzSpRows& rows_b, long long k,
                                             const int* __restrict__ shift_a,
                                             const int* __restrict__ shift_b, int budget,
                                             unsigned long long* __restrict__ counts,
                                             bool count_a = blockIdx.x == 0, bool with_a = true) {
#ifdef OZ_SP_SHIFTS
    (void)shift_a;
    (void)shift_b;
    // a warp takes R consecutive rows of the 128 (A's, then Bt's) at a time
    constexpr int V = OZ_SP_K * planes / 32, R = 8 / V;
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const int width = (int)(k * planes);
    unsigned nans[2] = {0u, 0u}, infs[2] = {0u, 0u};
    static_assert(b_rows % R == 0, "a batch of rows is all A or all Bt");
    for (int v0 = (with_a ? 0 : OZ_SP_TILE) + warp * R; v0 < OZ_SP_TILE + b_rows;
         v0 += warps * R) {
        const bool is_b = v0 >= OZ_SP_TILE;  // R divides 64: a batch is all A or all Bt
        const double* rows[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {  // (no reference to either map: they stay in registers)
            const int t = (v0 + r) % OZ_SP_TILE;
            if (is_b) {
                rows[r] = rows_b.valid(t) ? rows_b.ptr(t) : nullptr;
            } else {
                rows[r] = rows_a.valid(t) ? rows_a.ptr(t) : nullptr;
            }
        }
        unsigned nn = 0u, ii = 0u;
        oz_sp_row_shifts<R, V>(rows, width, budget, shift + v0, nn, ii);
        // each entry counted once: A in the first column tile, Bt in the first row tile
        if (is_b ? blockIdx.y == 0 : count_a) {
            nans[is_b] += nn;
            infs[is_b] += ii;
        }
    }
#pragma unroll
    for (int t = 0; t < 2; ++t) {
        if (nans[t]) oz_sp_count(counts, 2 * t, nans[t]);
        if (infs[t]) oz_sp_count(counts, 2 * t + 1, infs[t]);
    }
#else
    (void)k;
    (void)budget;
    (void)counts;
    (void)count_a;
    for (int v = (with_a ? 0 : OZ_SP_TILE) + threadIdx.x; v < OZ_SP_TILE + b_rows;
         v += blockDim.x) {
        const int t = v % OZ_SP_TILE;
        if (v >= OZ_SP_TILE) {
            shift[v] = rows_b.valid(t) ? shift_b[rows_b.index(t)] : 0;
        } else {
            shift[v] = rows_a.valid(t) ? shift_a[rows_a.index(t)] : 0;
        }
    }
#endif
    __syncthreads();
}

// The whole kernel for one block: items pack blockIdx.z .. (pack = 2**(6 - span_shift): one
// item, or with OZ_SP_PACKED up to four small ones on the tile's diagonal), output rows 64 blockIdx.y ..,
// columns 64 blockIdx.x ..; a (items, m, k), bt (items, n, k) (complex: re, im
// interleaved), shift_a (items, m), shift_b (items, n) (with OZ_SP_SHIFTS: unused, the
// shifts computed for `budget`, NaN/Inf counts into counts), out (items, m, n).
template <int planes, typename O>
__device__ __forceinline__ void oz_small_product_body(const double* __restrict__ a,
                                                      const double* __restrict__ bt,
                                                      long long m, long long n, long long k,
                                                      const int* __restrict__ shift_a,
                                                      const int* __restrict__ shift_b,
                                                      O* __restrict__ out, int budget,
                                                      unsigned long long* __restrict__ counts,
                                                      long long items, int span_shift) {
    extern __shared__ __align__(16) char smem[];
    __shared__ int shift[2 * OZ_SP_TILE];  // the block's A rows, then its Bt rows
    constexpr int per_modulus = planes * (OZ_SP_A_PLANE + OZ_SP_B_PLANE);
    constexpr int tiles = 4 / planes;  // m16n8 output tiles of a warp
#ifndef OZ_SP_PACKED
    span_shift = 6;  // one item per block: the row maps' arithmetic folds to constants
#endif
    const OzSpBlockRows rows =
        oz_sp_block_rows(a, bt, m, n, k * planes, items, span_shift, OZ_SP_TILE);
    const OzSpRows &rows_a = rows.a, &rows_b = rows.b;
    oz_sp_shifts<planes>(shift, rows_a, rows_b, k, shift_a, shift_b, budget, counts);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int mt = warp * tiles / 8;  // the warp's 16-row tile; its 8-column tiles nt0 + u
    const int nt0 = warp * tiles % 8;
    // reduced residues, thread-private: byte (modulus i, plane p, output o) of thread t at
    // sums + ((i planes + p) 4 tiles + o) blockDim.x + t, after the residue chunks
    unsigned char* sums = reinterpret_cast<unsigned char*>(smem) + OZ_SP_CHUNK * per_modulus;
    auto sum_at = [&](int i, int p, int o) -> unsigned char& {
        return sums[((i * planes + p) * 4 * tiles + o) * blockDim.x + threadIdx.x];
    };

#pragma unroll
    for (int chunk = 0; chunk < OZ_SP_CHUNKS; ++chunk) {
        if (chunk > 0) __syncthreads();  // every warp is done with the previous chunk
        oz_sp_fill<planes>(smem, chunk, rows_a, k, shift, false);
        oz_sp_fill<planes>(smem, chunk, rows_b, k, shift + OZ_SP_TILE, true);
        __syncthreads();
        oz_sp_each_modulus(chunk, [&](int i, int c) {
            const int p_i = oz_moduli[i];
#pragma unroll
            for (int p = 0; p < planes; ++p) {
                const char* pa = smem + c * per_modulus + p * OZ_SP_A_PLANE;
                const char* pb = smem + c * per_modulus + planes * OZ_SP_A_PLANE + p * OZ_SP_B_PLANE;
                int acc[tiles][4];
#pragma unroll
                for (int u = 0; u < tiles; ++u)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[u][e] = 0;
                oz_sp_tile_products<tiles>(acc, pa, pb, mt, nt0, lane);
#pragma unroll
                for (int u = 0; u < tiles; ++u)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        sum_at(i, p, 4 * u + e) = (unsigned char)oz_mod_nonneg_small(acc[u][e], p_i);
            }
        });
    }

    // CRT reconstruction of the thread's outputs (C fragment element e of tile u:
    // oz_sp_cell_row, oz_sp_cell_col); an output of the tile pairs rows of one item
    // (packed items: the diagonal blocks)
    const int g = lane / 4, q = lane % 4;
#pragma unroll 1
    for (int o = 0; o < tiles * 4; ++o) {
        const int u = o / 4, e = o % 4;
        const int tr = oz_sp_cell_row(mt, g, e), tc = oz_sp_cell_col(nt0, q, u, e);
        if ((tr >> span_shift) != (tc >> span_shift) || !rows_a.valid(tr) || !rows_b.valid(tc))
            continue;
        const long long at = (rows_a.item(tr) * m + rows_a.row(tr)) * n + rows_b.row(tc);
        const int s = -(shift[tr] + shift[OZ_SP_TILE + tc]);
        auto residue = [&](int p, int i) -> int { return sum_at(i, p, o); };
        if constexpr (planes == 1) {
            oz_i64 acc[OZ_DIGITS];
            oz_crt_clear(acc);
#pragma unroll
            for (int i = 0; i < OZ_NUM_MODULI; ++i)
                oz_crt_add(acc, residue(0, i), oz_weight_digits + i * OZ_DIGITS);
            out[at] = (O)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc, s);
        } else {
#ifdef OZ_GAUSSIAN
            // Re = (T+ + T-) / 2, Im = (T+ - T-) / (2j) mod p_i, folded into the weights
            oz_i64 re[OZ_DIGITS], im[OZ_DIGITS];
            oz_crt_clear(re);
            oz_crt_clear(im);
#pragma unroll
            for (int i = 0; i < OZ_NUM_MODULI; ++i) {
                const int t1 = residue(0, i), t2 = residue(1, i);
                oz_crt_add(re, t1 + t2, oz_weight_re_digits + i * OZ_DIGITS);
                oz_crt_add(im, t1 - t2, oz_weight_im_digits + i * OZ_DIGITS);
            }
            O v;
            v.x = (decltype(v.x))oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(re, s);
            v.y = (decltype(v.y))oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(im, s);
            out[at] = v;
#endif
        }
    }
}

#ifndef OZ_SP_SLICES
extern "C" __global__ void __launch_bounds__(256, 2)
    oz_small_product_real(const double* __restrict__ a, const double* __restrict__ bt,
                          long long m, long long n, long long k, const int* __restrict__ shift_a,
                          const int* __restrict__ shift_b, oz_out_real* __restrict__ out,
                          int budget, unsigned long long* __restrict__ counts, long long items,
                          int span_shift) {
    oz_small_product_body<1>(a, bt, m, n, k, shift_a, shift_b, out, budget, counts, items,
                             span_shift);
}

#ifdef OZ_GAUSSIAN
extern "C" __global__ void __launch_bounds__(512, 1)
    oz_small_product_gaussian(const double* __restrict__ a, const double* __restrict__ bt,
                              long long m, long long n, long long k,
                              const int* __restrict__ shift_a, const int* __restrict__ shift_b,
                              oz_out_complex* __restrict__ out, int budget,
                              unsigned long long* __restrict__ counts, long long items,
                              int span_shift) {
    oz_small_product_body<2>(a, bt, m, n, k, shift_a, shift_b, out, budget, counts, items,
                             span_shift);
}
#endif
#endif  // OZ_SP_SLICES

#ifdef OZ_SP_SLICES
// ---- Exact slices: real products from signed base-256 digits -------------------------
// The same exact integer A'B' as the residues and the CRT give, from digits instead: with
// a' = sum_s a_s 256**s and b' = sum_t b_t 256**t (OZ_SP_SLICES signed digits in [-128,
// 128): the bytes of a' + C, C = 0x80 in every byte, each less 128), A'B' = sum_d D_d
// 256**d with D_d = sum_{s+t=d} A_s B_t: INT8 products whose INT32 sums are exact (|D_d| <=
// S k 2**14). D_d enters the base-2**31 digit sums of the CRT finish at digit 8d / 31,
// shifted by 8d mod 31; that sum is the integer itself (no quotient by P), normalized and
// rounded once: the CRT's bits. Per entry one set of digits (against a residue per
// modulus), per output one IMAD.WIDE per diagonal (against a weight per modulus), and S**2
// products per output tile (against one per modulus). docs/perf-notes.md, "Exact slices".
// The shifts are the fast-mode ones for the budget S was chosen for (the digits hold |a'|
// <= 2**((L - 1) / 2)): formed here (OZ_SP_SHIFTS) or read, as the plan probe wrote them.
// Block: 16 warps, each two m16n8 output tiles of the 64 x 64 tile; shared memory: slice s
// of the A rows and Bt rows at s OZ_SP_SLICE_BYTES, in the fragment order above.
#define OZ_SP_SLICE_BYTES (OZ_SP_A_PLANE + OZ_SP_B_PLANE)
#define OZ_SP_DIAGONALS (2 * OZ_SP_SLICES - 1)
#define OZ_SP_SLICE_TILES 2  // m16n8 output tiles of a warp
#define OZ_SP_SLICE_THREADS 512  // the real slices kernel's block: 16 warps
#define OZ_SP_SLICE_DIGITS (8 * (OZ_SP_DIAGONALS - 1) / 31 + 1)  // digit sums the diagonals reach
static_assert(OZ_SP_SLICE_DIGITS <= OZ_DIGITS, "every diagonal lands in a digit");

// The digits of the scaled integer a' of x (|a'| < 2**(8 S - 1), a fast-mode bound the
// engine checks): byte s is digit s (XOR 0x80 of byte s of a' + C, read as a signed byte).
__device__ __forceinline__ oz_u64 oz_slice_digits(double x, int shift) {
    constexpr oz_u64 c = 0x8080808080808080ULL;
    return ((oz_u64)__double2ll_rn(oz_scaled_integer(x, shift)) + c) ^ c;
}

// Byte s of each of four words, packed (word e's in byte e).
__device__ __forceinline__ int oz_byte_of_four(const oz_u64 (&d)[4], int s) {
    const int half = 32 * (s / 4), b = s % 4;
    const oz_u32 lo = __byte_perm((oz_u32)(d[0] >> half), (oz_u32)(d[1] >> half), b | ((b + 4) << 4));
    const oz_u32 hi = __byte_perm((oz_u32)(d[2] >> half), (oz_u32)(d[3] >> half), b | ((b + 4) << 4));
    return (int)__byte_perm(lo, hi, 0x5410);
}

// x 2**shift rounded once, x given by its base-2**31 digit sums (not normalized): the
// CRT finish without the quotient by P.
__device__ __forceinline__ double oz_round_slice_sums(const oz_i64 (&x)[OZ_SP_SLICE_DIGITS],
                                                      int shift) {
    oz_i64 r[OZ_DIGITS];
#pragma unroll
    for (int l = 0; l < OZ_DIGITS; ++l) r[l] = l < OZ_SP_SLICE_DIGITS ? x[l] : 0;
    oz_add_multiple_p(r, 0);  // normalize the digit sums
    return oz_round_digits<OZ_PREC, OZ_EMIN, OZ_EMAX>(r, oz_top_two(r), shift);
}

#ifdef OZ_SP_B_COLUMNS
// ---- B read in place: its columns, 8 lanes each ---------------------------------------
// A fill of B's columns gives column r of the tile to the 8 lanes 8 (r % 4) .. of warp r /
// 4, lane 4 ks + q of them the entries of its quads at 32 ks + 4 q and 32 ks + 16 + 4 q:
// what Bt's fragment lane 4 (r % 8) + q holds in k-step ks (both of its 4-byte groups). So
// a lane stores its slot of each slice at once (a warp's two runs of 4 slots, conflict-
// free), and a warp's load of one entry index reads 8 rows of B, 4 adjacent entries each.
#define OZ_SP_COLUMN_LANES (4 * OZ_SP_KSTEPS)
struct OzSpColumnLane {
    int r, ks, q, part;  // the column, the k-step, the quad, the lane among the column's
    __device__ __forceinline__ int h0() const { return 32 * ks + 4 * q; }  // quad j: + 16 j
};
__device__ __forceinline__ OzSpColumnLane oz_sp_column_lane() {
    const int lane = threadIdx.x % 32, part = lane % OZ_SP_COLUMN_LANES;
    return {(32 / OZ_SP_COLUMN_LANES) * (int)(threadIdx.x / 32) + lane / OZ_SP_COLUMN_LANES,
            part / 4, part % 4, part};
}

#ifdef OZ_SP_SHIFTS
// The fast-mode shift of a column of the tile for the CRT budget, from the magnitudes (the
// bits without the sign) of the N doubles of it that each of its 8 lanes holds: the integers of
// oz_warp_row_stats_of (the largest frexp exponent of a finite entry, then the fast-mode
// sum of squares relative to it, oz_warp_sumsq_terms: zero, NaN and Inf entries dropped)
// and oz_fast_shift_of, summed over the column's lanes by shuffles. NaN and Inf entries
// are counted into counts[2], counts[3] by the blocks of the first row tile (each once).
template <int N>
__device__ __forceinline__ int oz_sp_column_shift(const oz_u64 (&mag)[1][N], int budget,
                                                  unsigned long long* __restrict__ counts) {
    constexpr oz_u64 inf_bits = 0x7ff0000000000000ULL;
    oz_u64 top = 0;
    unsigned nans = 0u, infs = 0u;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        nans += mag[0][i] > inf_bits;
        infs += mag[0][i] == inf_bits;
        const oz_u64 finite = mag[0][i] < inf_bits ? mag[0][i] : 0ULL;
        top = finite > top ? finite : top;
    }
    int row_max = OZ_ZERO_ROW_EXP;
    if (top != 0) {
        int c;
        oz_frexp_bound(top, row_max, c);
    }
#pragma unroll
    for (int off = 1; off < OZ_SP_COLUMN_LANES; off <<= 1) {
        const int other = __shfl_xor_sync(0xffffffffu, row_max, off);
        row_max = other > row_max ? other : row_max;
    }
    const int column_max[1] = {row_max};
    oz_i64 sumsq[1];
    oz_warp_sumsq_terms<1, N, false>(mag, column_max, sumsq);
#pragma unroll
    for (int off = 1; off < OZ_SP_COLUMN_LANES; off <<= 1)
        sumsq[0] += __shfl_xor_sync(0xffffffffu, sumsq[0], off);
    if (blockIdx.y == 0) {
        if (nans) oz_sp_count(counts, 2, nans);
        if (infs) oz_sp_count(counts, 3, infs);
    }
    return (int)oz_fast_shift_of(row_max, sumsq[0], budget);
}
#endif  // OZ_SP_SHIFTS

// The bits of |x| (the sign dropped).
__device__ __forceinline__ oz_u64 oz_magnitude_bits(double x) {
    return (oz_u64)__double_as_longlong(x) & 0x7fffffffffffffffULL;
}

// The 8 entries of the calling lane's column (oz_sp_column_lane) of B read in place, T
// double (real) or double2 (complex, an entry's two doubles): entry h0 + 16 j + e at
// x[j][e], zero past k and in padding columns. A tile `columns` wide with all its columns,
// k = OZ_SP_K and (complex) 16-byte entries loads without bounds.
template <typename T, int columns>
__device__ __forceinline__ void oz_sp_load_column(const OzSpRows& src, long long k,
                                                  const OzSpColumnLane& at, T (&x)[2][4]) {
    constexpr int parts = sizeof(T) / sizeof(double);
    const int h0 = at.h0();
    if (k == OZ_SP_K && src.rows - src.row0 >= columns &&
        (parts == 1 || (reinterpret_cast<size_t>(src.x) & 15) == 0)) {
        const T* entries = reinterpret_cast<const T*>(src.column<parts>(at.r));
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) x[j][e] = __ldg(entries + (h0 + 16 * j + e) * src.rows);
        return;
    }
    const bool valid = src.valid(at.r);
    const double* col = valid ? src.column<parts>(at.r) : nullptr;
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int h = h0 + 16 * j + e;
            x[j][e] = T{};
            if (valid && h < k) {
                const double* entry = col + h * src.column_stride<parts>();
                if constexpr (parts == 2) {
                    x[j][e] = make_double2(entry[0], entry[1]);
                } else {
                    x[j][e] = entry[0];
                }
            }
        }
}

// The shift of the lane's column: with OZ_SP_SHIFTS formed from the entries x of it the
// lane holds (oz_sp_load_column; oz_sp_column_shift: B is read once) and written to
// shift[r] by the column's first lane, else read from shift[r].
template <typename T>
__device__ __forceinline__ int oz_sp_fill_column_shift(const T (&x)[2][4],
                                                       const OzSpColumnLane& at, int* shift,
                                                       int budget,
                                                       unsigned long long* __restrict__ counts) {
#ifdef OZ_SP_SHIFTS
    constexpr int parts = sizeof(T) / sizeof(double);
    oz_u64 mag[1][8 * parts];  // (one row, as oz_warp_sumsq_terms takes them)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            if constexpr (parts == 2) {
                mag[0][8 * j + 2 * e] = oz_magnitude_bits(x[j][e].x);
                mag[0][8 * j + 2 * e + 1] = oz_magnitude_bits(x[j][e].y);
            } else {
                mag[0][4 * j + e] = oz_magnitude_bits(x[j][e]);
            }
        }
    const int sh = oz_sp_column_shift(mag, budget, counts);
    if (at.part == 0) shift[at.r] = sh;
    return sh;
#else
    (void)x;
    (void)budget;
    (void)counts;
    return shift[at.r];
#endif
}
#endif  // OZ_SP_B_COLUMNS

#ifndef OZ_SP_COMPLEX_SLICES
static_assert(OZ_SP_SLICES <= 8, "the digits of a signed 64-bit integer");
static_assert((long long)OZ_SP_SLICES * OZ_SP_K * 128 * 128 < (1LL << 31),
              "the diagonal sums fit INT32");

// The digits of the block's A rows (is_b false) or Bt rows into the slices' planes; padding
// rows and quads past k are zero digits.
__device__ __forceinline__ void oz_sp_fill_slices(char* smem, const OzSpRows& src, long long k,
                                                  const int* __restrict__ shift, bool is_b) {
    for (int q = threadIdx.x; q < OZ_SP_TILE * OZ_SP_QUADS; q += blockDim.x) {
        const int r = q / OZ_SP_QUADS, h0 = 4 * (q % OZ_SP_QUADS);
        const int off = is_b ? OZ_SP_A_PLANE + oz_sp_b_offset(r, h0) : oz_sp_a_offset(r, h0);
        oz_u64 d[4] = {0ULL, 0ULL, 0ULL, 0ULL};
        if (src.valid(r) && h0 < k) {
            const double* xr = src.ptr(r);
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (h0 + e < k) d[e] = oz_slice_digits(xr[h0 + e], shift[r]);
        }
#pragma unroll
        for (int s = 0; s < OZ_SP_SLICES; ++s)
            *reinterpret_cast<int*>(smem + s * OZ_SP_SLICE_BYTES + off) = oz_byte_of_four(d, s);
    }
}

#ifdef OZ_SP_B_COLUMNS
static_assert(OZ_SP_SLICE_THREADS / 32 * (32 / OZ_SP_COLUMN_LANES) == OZ_SP_TILE,
              "the block's warps take the tile's columns, 8 lanes each");
// The digits of the block's 64 columns of B, read in place (src: OzSpRows::column), into
// B's slices, 8 lanes a column (oz_sp_column_lane): a lane's slot of each slice (both of
// its 4-byte groups) is one 8-byte store. Padding columns and entries past k are zero
// digits. The shifts as oz_sp_fill_complex_columns takes them.
__device__ __forceinline__ void oz_sp_fill_real_columns(char* smem, const OzSpRows& src,
                                                        long long k, int* shift, int budget,
                                                        unsigned long long* __restrict__ counts) {
    const OzSpColumnLane at = oz_sp_column_lane();
    double x[2][4];  // [quad][entry]
    oz_sp_load_column<double, OZ_SP_TILE>(src, k, at, x);
    const int sh = oz_sp_fill_column_shift(x, at, shift, budget, counts);
    oz_u64 d[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) d[j][e] = oz_slice_digits(x[j][e], sh);
    char* slot = smem + OZ_SP_A_PLANE + ((at.r / 8) * OZ_SP_KSTEPS + at.ks) * OZ_SP_B_FRAG +
                 (4 * (at.r % 8) + at.q) * 8;
#pragma unroll
    for (int s = 0; s < OZ_SP_SLICES; ++s)
        *reinterpret_cast<uint2*>(slot + s * OZ_SP_SLICE_BYTES) =
            make_uint2(oz_byte_of_four(d[0], s), oz_byte_of_four(d[1], s));
}
#endif  // OZ_SP_B_COLUMNS

// The whole slices kernel for one block (arguments as oz_small_product_body, real).
template <typename O>
__device__ __forceinline__ void oz_small_slices_body(const double* __restrict__ a,
                                                     const double* __restrict__ bt, long long m,
                                                     long long n, long long k,
                                                     const int* __restrict__ shift_a,
                                                     const int* __restrict__ shift_b,
                                                     O* __restrict__ out, int budget,
                                                     unsigned long long* __restrict__ counts,
                                                     long long items, int span_shift) {
    extern __shared__ __align__(16) char smem[];
    __shared__ int shift[2 * OZ_SP_TILE];  // the block's A rows, then its Bt rows
    constexpr int tiles = OZ_SP_SLICE_TILES;
#ifndef OZ_SP_PACKED
    span_shift = 6;
#endif
    const OzSpBlockRows rows = oz_sp_block_rows(a, bt, m, n, k, items, span_shift, OZ_SP_TILE);
    const OzSpRows &rows_a = rows.a, &rows_b = rows.b;
    oz_sp_shifts<1, OZ_SP_FILL_FORMS_B_SHIFTS ? 0 : OZ_SP_TILE>(shift, rows_a, rows_b, k, shift_a,
                                                                shift_b, budget, counts);
    oz_sp_fill_slices(smem, rows_a, k, shift, false);
#ifdef OZ_SP_B_COLUMNS  // (B's shifts come with its fill: B is read once)
    oz_sp_fill_real_columns(smem, rows_b, k, shift + OZ_SP_TILE, budget, counts);
#else
    oz_sp_fill_slices(smem, rows_b, k, shift + OZ_SP_TILE, true);
#endif
    __syncthreads();

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int mt = warp * tiles / 8, nt0 = warp * tiles % 8;
    oz_i64 x[tiles * 4][OZ_SP_SLICE_DIGITS];  // the thread's outputs' digit sums
#pragma unroll
    for (int o = 0; o < tiles * 4; ++o)
#pragma unroll
        for (int l = 0; l < OZ_SP_SLICE_DIGITS; ++l) x[o][l] = 0;
#pragma unroll
    for (int d = 0; d < OZ_SP_DIAGONALS; ++d) {
        int acc[tiles][4];
#pragma unroll
        for (int u = 0; u < tiles; ++u)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[u][e] = 0;
        // the pairs of this diagonal, one at a time (unrolled, the compiler hoists every
        // pair's fragments and spills)
#pragma unroll 1
        for (int s = d < OZ_SP_SLICES ? 0 : d - OZ_SP_SLICES + 1; s <= d && s < OZ_SP_SLICES; ++s) {
            const int t = d - s;
            const char* pa = smem + s * OZ_SP_SLICE_BYTES;
            const char* pb = smem + t * OZ_SP_SLICE_BYTES + OZ_SP_A_PLANE;
            oz_sp_tile_products<tiles>(acc, pa, pb, mt, nt0, lane);
        }
        const int l = 8 * d / 31, sh = 8 * d - 31 * l;  // 256**d = 2**sh 2**(31 l)
#pragma unroll
        for (int u = 0; u < tiles; ++u)
#pragma unroll
            for (int e = 0; e < 4; ++e) x[4 * u + e][l] += (oz_i64)acc[u][e] * (1LL << sh);
    }

    // the rounding of each output (C fragment element e of tile u: oz_sp_cell_row,
    // oz_sp_cell_col)
    const int g = lane / 4, q = lane % 4;
#pragma unroll
    for (int o = 0; o < tiles * 4; ++o) {
        const int u = o / 4, e = o % 4;
        const int tr = oz_sp_cell_row(mt, g, e), tc = oz_sp_cell_col(nt0, q, u, e);
        if ((tr >> span_shift) != (tc >> span_shift) || !rows_a.valid(tr) || !rows_b.valid(tc))
            continue;
        const long long at = (rows_a.item(tr) * m + rows_a.row(tr)) * n + rows_b.row(tc);
        out[at] = (O)oz_round_slice_sums(x[o], -(shift[tr] + shift[OZ_SP_TILE + tc]));
    }
}

extern "C" __global__ void __launch_bounds__(OZ_SP_SLICE_THREADS, 1)
    oz_small_product_slices_real(const double* __restrict__ a, const double* __restrict__ bt,
                                 long long m, long long n, long long k,
                                 const int* __restrict__ shift_a,
                                 const int* __restrict__ shift_b, oz_out_real* __restrict__ out,
                                 int budget, unsigned long long* __restrict__ counts,
                                 long long items, int span_shift) {
    oz_small_slices_body(a, bt, m, n, k, shift_a, shift_b, out, budget, counts, items,
                         span_shift);
}
#endif  // !OZ_SP_COMPLEX_SLICES
// ---- Exact slices: complex products -------------------------------------------------
// Re A'B' = Ar Br - Ai Bi and Im A'B' = Ar Bi + Ai Br from the slices of the four parts
// (the parts' scaled integers: one shift per complex row, as the Gaussian planes take
// them). A block computes a 64 x 32 complex tile (OZ_SP_CTILE_N columns); its 8 warps
// each one m16 row tile and two n8 column tiles (row tile warp / 2, column tiles 2 (warp %
// 2) ..), both parts: per lane 8 Re and 8 Im outputs. Shared memory per slice: Ar and Ai in
// A's fragment order (OZ_SP_A_PLANE each), then Br and Bi together, a lane's 8 bytes of Br
// then its 8 of Bi per (column tile, k-step), so one 16-byte load gives both.
// Order: by diagonal d = s + t, every pair's products into the same INT32 sums (|D_d| <= S
// 2 k 2**14 plus the carry), which gemm/diagonal_carry.cuh carries a byte at a time: no
// 64-bit digit sums in the loop, one fold per output and diagonal, not per pair. The
// subtraction Ar Br - Ai Bi stays in the sums: Ai (~Bi) = -Ai Bi - rowsum(Ai) (~b = -b - 1
// for every signed byte), so the Re sums take Ai against the complement of Bi's fragment
// and each diagonal adds its pairs' row sums of Ai (oz_sp_ai_row_sums). Diagonals d and
// d + 1 run together (one read of each operand's slice per two pairs), and each output's
// bytes 0 .. 7 wait in out (a whole tile's in coalesced slots of its own place, and its
// rounded outputs leave through shared memory). 128 registers, two blocks per SM: one
// block's fill and rounding overlap the other's products.
// docs/perf-notes.md, "Exact slices for complex small products", "The complex slices in
// diagonal order" and "Warpgroup products, and where the complex slices kernel's time goes".
#ifdef OZ_SP_COMPLEX_SLICES
#include "gemm/diagonal_carry.cuh"
#define OZ_SP_CTILE_N 32                                // complex output columns of a block
#define OZ_SP_CTHREADS 256                              // threads of a block: 8 warps
#define OZ_SP_CB_FRAG 512                               // Br and Bi fragments, 16 bytes a lane
#define OZ_SP_CB_PLANE ((OZ_SP_CTILE_N / 8) * OZ_SP_KSTEPS * OZ_SP_CB_FRAG)
// Shared memory: A's slices (Ar and Ai planes, OZ_SP_CA_SLICE bytes a slice), then B's (Br
// and Bi side by side, OZ_SP_CB_PLANE a slice): A's stay while the block's column tiles
// take their turns in B's region, which also stages each rounded tile.
#define OZ_SP_CA_SLICE (2 * OZ_SP_A_PLANE)
#define OZ_SP_CB_REGION (OZ_SP_SLICES * OZ_SP_CA_SLICE)  // B's first slice
#define OZ_SP_CWORDS OZ_CARRY_WORDS(OZ_SP_DIAGONALS)    // words of an output's bytes
static_assert(OZ_SP_SLICES <= 9, "the digits of a two-word integer below 2**71");
static_assert(2LL * OZ_SP_SLICES * OZ_SP_K * 128 * 128 + OZ_SP_SLICES * OZ_SP_K * 128 +
                      (1LL << 24) < (1LL << 31),
              "a diagonal's Re and Im sums, its row sums and the carry fit INT32");

// The digits of a' (oz_scaled_integer of x, |a'| < 2**(8 S - 1), S <= 9): a' + C, C = 0x80
// in each of 9 bytes, as a low word and a top byte, each byte XOR 0x80 (digit s is byte s,
// read as a signed byte). a' = h 2**32 + l with h = floor(a' 2**-32) (|h| < 2**39) and l in
// [0, 2**32), both exact in binary64.
struct OzSliceWord {
    oz_u64 lo;
    oz_u32 hi;
};
__device__ __forceinline__ OzSliceWord oz_slice_word(double x, int shift) {
    constexpr oz_u64 c = 0x8080808080808080ULL;
    if constexpr (OZ_SP_SLICES <= 8) return {oz_slice_digits(x, shift), 0u};  // one word
    const double y = oz_scaled_integer(x, shift);
    const double yh = floor(y * 0x1p-32);
    const oz_i64 h = (oz_i64)yh;
    const oz_u64 lo = ((oz_u64)h << 32) | (oz_u64)(oz_i64)(y - yh * 0x1p32);
    const oz_u64 lo_c = lo + c;
    const oz_i64 hi_c = (h >> 32) + 0x80 + (lo_c < lo ? 1 : 0);
    return {lo_c ^ c, (oz_u32)hi_c ^ 0x80u};
}

// Digit s of each of four entries, packed (entry e's in byte e).
__device__ __forceinline__ int oz_slice_of_four(const OzSliceWord (&w)[4], int s) {
    if (s < 8) {
        const oz_u64 d[4] = {w[0].lo, w[1].lo, w[2].lo, w[3].lo};
        return oz_byte_of_four(d, s);
    }
    return (int)__byte_perm(__byte_perm(w[0].hi, w[1].hi, 0x40), __byte_perm(w[2].hi, w[3].hi, 0x40),
                            0x5410);
}

// The digits of quad (4 entries from h0) of tile row r into the slices: A's planes Ar, Ai
// (is_b false) or Br, Bi, from the entries' words re, im.
template <bool is_b>
__device__ __forceinline__ void oz_sp_store_complex_quad(char* smem, int r, int h0,
                                                         const OzSliceWord (&re)[4],
                                                         const OzSliceWord (&im)[4]) {
    int off[2];  // the quad's real and imaginary digits in a slice
    if (is_b) {
        const int ks = h0 / 32, kk = h0 % 32;
        const int lane = (r % 8) * 4 + (kk % 16) / 4, reg = kk / 16;
        off[0] = OZ_SP_CB_REGION + ((r / 8) * OZ_SP_KSTEPS + ks) * OZ_SP_CB_FRAG + lane * 16 +
                 reg * 4;
        off[1] = off[0] + 8;
    } else {
        off[0] = oz_sp_a_offset(r, h0);
        off[1] = off[0] + OZ_SP_A_PLANE;
    }
    constexpr int stride = is_b ? OZ_SP_CB_PLANE : OZ_SP_CA_SLICE;  // between slices
#pragma unroll
    for (int s = 0; s < OZ_SP_SLICES; ++s) {
        char* slice = smem + s * stride;
        *reinterpret_cast<int*>(slice + off[0]) = oz_slice_of_four(re, s);
        *reinterpret_cast<int*>(slice + off[1]) = oz_slice_of_four(im, s);
    }
}

// The digits of the block's 64 A rows (is_b false: planes Ar, Ai) or its 32 Bt rows (Br,
// Bi) into the slices, a thread's quads (4 entries of a row) OZ_SP_CTHREADS apart; padding
// rows and quads past k are zero digits. Where the tile is whole (every row, k =
// OZ_SP_K, 16-byte aligned) the quads' entries come in 16-byte loads, issued ahead of
// their conversions (a few round trips to memory per thread, not one per entry).
template <bool is_b>
__device__ __forceinline__ void oz_sp_fill_complex_slices(char* smem, const OzSpRows& src,
                                                          long long k,
                                                          const int* __restrict__ shift) {
    constexpr int rows = is_b ? OZ_SP_CTILE_N : OZ_SP_TILE, quads = rows * OZ_SP_QUADS / OZ_SP_CTHREADS;
    static_assert(rows * OZ_SP_QUADS % OZ_SP_CTHREADS == 0, "every thread as many quads");
    const bool whole = k == OZ_SP_K && src.rows - src.row0 >= rows &&
                       (reinterpret_cast<size_t>(src.x) & 15) == 0;
    if (whole) {
        double2 x[quads][4];
#pragma unroll
        for (int i = 0; i < quads; ++i) {
            const int q = threadIdx.x + i * OZ_SP_CTHREADS;
            const double2* xr =
                reinterpret_cast<const double2*>(src.ptr(q / OZ_SP_QUADS)) + 4 * (q % OZ_SP_QUADS);
#pragma unroll
            for (int e = 0; e < 4; ++e) x[i][e] = __ldg(xr + e);
        }
#pragma unroll
        for (int i = 0; i < quads; ++i) {
            const int q = threadIdx.x + i * OZ_SP_CTHREADS, r = q / OZ_SP_QUADS;
            OzSliceWord re[4], im[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                re[e] = oz_slice_word(x[i][e].x, shift[r]);
                im[e] = oz_slice_word(x[i][e].y, shift[r]);
            }
            oz_sp_store_complex_quad<is_b>(smem, r, 4 * (q % OZ_SP_QUADS), re, im);
        }
        return;
    }
#pragma unroll 1
    for (int i = 0; i < quads; ++i) {
        const int q = threadIdx.x + i * OZ_SP_CTHREADS;
        const int r = q / OZ_SP_QUADS, h0 = 4 * (q % OZ_SP_QUADS);
        OzSliceWord re[4], im[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) re[e] = im[e] = OzSliceWord{0ULL, 0u};
        if (src.valid(r) && h0 < k) {
            const double* xr = src.ptr(r);
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if (h0 + e < k) {
                    re[e] = oz_slice_word(xr[2 * (h0 + e)], shift[r]);
                    im[e] = oz_slice_word(xr[2 * (h0 + e) + 1], shift[r]);
                }
            }
        }
        oz_sp_store_complex_quad<is_b>(smem, r, h0, re, im);
    }
}

#ifdef OZ_SP_B_COLUMNS
static_assert(OZ_SP_CTHREADS / 32 * (32 / OZ_SP_COLUMN_LANES) == OZ_SP_CTILE_N,
              "the block's warps take the tile's columns, 8 lanes each");
// The digits of the block's 32 columns of B, read in place (src: OzSpRows::column), into
// B's slices, 8 lanes a column (oz_sp_column_lane): a lane's slot of each slice (Br's two
// words, then Bi's) is one 16-byte store. Padding columns and entries past k are zero
// digits. The columns' shifts: with OZ_SP_SHIFTS formed here from the entries the fill
// holds (oz_sp_column_shift: B is read once) and written to shift[r], else read from it.
__device__ __forceinline__ void oz_sp_fill_complex_columns(char* smem, const OzSpRows& src,
                                                           long long k, int* shift, int budget,
                                                           unsigned long long* __restrict__ counts) {
    const OzSpColumnLane at = oz_sp_column_lane();
    double2 x[2][4];  // [quad][entry]
    oz_sp_load_column<double2, OZ_SP_CTILE_N>(src, k, at, x);
    const int sh = oz_sp_fill_column_shift(x, at, shift, budget, counts);
    OzSliceWord re[2][4], im[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            re[j][e] = oz_slice_word(x[j][e].x, sh);
            im[j][e] = oz_slice_word(x[j][e].y, sh);
        }
    char* slot = smem + OZ_SP_CB_REGION + ((at.r / 8) * OZ_SP_KSTEPS + at.ks) * OZ_SP_CB_FRAG +
                 (4 * (at.r % 8) + at.q) * 16;
#pragma unroll
    for (int s = 0; s < OZ_SP_SLICES; ++s)
        *reinterpret_cast<uint4*>(slot + s * OZ_SP_CB_PLANE) =
            make_uint4(oz_slice_of_four(re[0], s), oz_slice_of_four(re[1], s),
                       oz_slice_of_four(im[0], s), oz_slice_of_four(im[1], s));
}
#endif  // OZ_SP_B_COLUMNS

// B's fragments of one slice for the warp's two column tiles (Br and Bi, 16 bytes a lane
// per column tile and k-step); slice_b: the slice's plane at the warp's first tile and lane.
__device__ __forceinline__ void oz_sp_complex_b_frags(uint4 (&fb)[2][OZ_SP_KSTEPS],
                                                      const char* slice_b) {
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int ks = 0; ks < OZ_SP_KSTEPS; ++ks)
            fb[u][ks] = *reinterpret_cast<const uint4*>(slice_b + (u * OZ_SP_KSTEPS + ks) * OZ_SP_CB_FRAG);
}

// One pair's products into the sums of the warp's two column tiles: re[u] += Ar Br + Ai
// (~Bi), im[u] += Ar Bi + Ai Br (A's fragments ar, ai; B's fb as oz_sp_complex_b_frags).
__device__ __forceinline__ void oz_sp_complex_pair(int (&re)[2][4], int (&im)[2][4],
                                                   const uint4 (&ar)[OZ_SP_KSTEPS],
                                                   const uint4 (&ai)[OZ_SP_KSTEPS],
                                                   const uint4 (&fb)[2][OZ_SP_KSTEPS]) {
#pragma unroll
    for (int ks = 0; ks < OZ_SP_KSTEPS; ++ks)
#pragma unroll
        for (int u = 0; u < 2; ++u) {
            const uint2 br = make_uint2(fb[u][ks].x, fb[u][ks].y);
            const uint2 bi = make_uint2(fb[u][ks].z, fb[u][ks].w);
            oz_mma_s8(re[u], ar[ks], br);
            oz_mma_s8(re[u], ai[ks], make_uint2(~bi.x, ~bi.y));
            oz_mma_s8(im[u], ar[ks], bi);
            oz_mma_s8(im[u], ai[ks], br);
        }
}

// An output's first words of bytes (Re's and Im's) parked in an output's place in out (its
// own, or its slot in a whole tile: oz_sp_slot), whose bytes hold two words of each part
// (one for binary32 outputs), and read back.
template <typename O>
__device__ __forceinline__ void oz_park_words(O* at, const oz_u32 (&re)[OZ_SP_CWORDS],
                                              const oz_u32 (&im)[OZ_SP_CWORDS]) {
    if constexpr (sizeof(O) == 16) {
        *reinterpret_cast<uint4*>(at) = make_uint4(re[0], re[1], im[0], im[1]);
    } else {
        *reinterpret_cast<uint2*>(at) = make_uint2(re[0], im[0]);
    }
}
template <typename O>
__device__ __forceinline__ void oz_unpark_words(const O* at, oz_u32 (&re)[OZ_SP_CWORDS],
                                                oz_u32 (&im)[OZ_SP_CWORDS]) {
    if constexpr (sizeof(O) == 16) {
        const uint4 w = *reinterpret_cast<const uint4*>(at);
        re[0] = w.x, re[1] = w.y, im[0] = w.z, im[1] = w.w;
    } else {
        const uint2 w = *reinterpret_cast<const uint2*>(at);
        re[0] = w.x, im[0] = w.y;
    }
}

// rows[d][r] = the sum over the pairs (s, d - s) of diagonal d of row r's digits in Ai's
// slice s: what the Re sums of Ai (~Bi) lack of -Ai Bi. Four threads a row, each 16 of
// its digits per slice (__dp4a of 4-byte groups), summed by shuffles. Needs the 256
// threads of a block (64 rows x 4).
__device__ __forceinline__ void oz_sp_ai_row_sums(int (&rows)[OZ_SP_DIAGONALS][OZ_SP_TILE],
                                                  const char* smem) {
    const int r = threadIdx.x / 4, part = threadIdx.x % 4;
    int sum[OZ_SP_SLICES];
#pragma unroll
    for (int s = 0; s < OZ_SP_SLICES; ++s) {
        const char* ai = smem + s * OZ_SP_CA_SLICE + OZ_SP_A_PLANE;
        int acc = 0;
#pragma unroll
        for (int u = 0; u < OZ_SP_QUADS / 4; ++u)
            acc = __dp4a(*reinterpret_cast<const int*>(ai + oz_sp_a_offset(r, 4 * (4 * part + u))),
                         0x01010101, acc);
        acc += __shfl_xor_sync(0xffffffffu, acc, 1);
        sum[s] = acc + __shfl_xor_sync(0xffffffffu, acc, 2);
    }
#pragma unroll
    for (int d = 0; d < OZ_SP_DIAGONALS; ++d) {
        if (d % 4 != part) continue;
        int v = 0;
#pragma unroll
        for (int s = 0; s < OZ_SP_SLICES; ++s)
            if (d - s >= 0 && d - s < OZ_SP_SLICES) v += sum[s];
        rows[d][r] = v;
    }
}

// Output o (0 .. 7) of the calling thread's in a whole tile (first output at tile, rows n
// apart): the slot where it parks its words, tile row 8 o + warp, column lane (a warp's 32
// slots are one row).
template <typename O>
__device__ __forceinline__ O* oz_sp_slot(O* tile, long long n, int o) {
    return tile + (8 * o + threadIdx.x / 32) * n + threadIdx.x % 32;
}

// An output rounded from its Re and Im sums (the carries past the last diagonal) and bytes.
template <typename O>
__device__ __forceinline__ O oz_sp_round_output(const oz_u32 (&re_bytes)[OZ_SP_CWORDS],
                                                const oz_u32 (&im_bytes)[OZ_SP_CWORDS],
                                                int re, int im, int shift) {
    oz_i64 x[OZ_SP_SLICE_DIGITS];
    O v;
    oz_carried_digit_sums<OZ_SP_DIAGONALS>(re_bytes, re, x);
    v.x = (decltype(v.x))oz_round_slice_sums(x, shift);
    oz_carried_digit_sums<OZ_SP_DIAGONALS>(im_bytes, im, x);
    v.y = (decltype(v.y))oz_round_slice_sums(x, shift);
    return v;
}

// The rounded 64 x 32 tile is staged in B's region (the host sizes the shared memory so
// that it fits: small_complex_slice_shared in ozfft/engines/cuda/constants.py), column c
// of row r at c ^ (r % 8): the stores of a fragment's 8 rows and 4 column pairs then fall
// in every 16-byte bank group alike, and a row stays one 512-byte line.
__device__ __forceinline__ int oz_sp_staged_at(int r, int c) {
    return r * OZ_SP_CTILE_N + (c ^ (r % 8));
}

// The rounding of a whole tile (every row and column exists; its first output at tile, rows
// n apart): each thread's 8 outputs (parked words read back from their slots) rounded into
// B's region of the shared memory, free once every warp is done with its products, then
// written out a row per warp (coalesced, not 16 bytes at 32).
template <typename O>
__device__ __forceinline__ void oz_sp_round_staged(O* __restrict__ tile, long long n, char* smem,
                                                   const int* shift, const int (&re)[2][4],
                                                   const int (&im)[2][4],
                                                   oz_u32 (&re_bytes)[2][4][OZ_SP_CWORDS],
                                                   oz_u32 (&im_bytes)[2][4][OZ_SP_CWORDS]) {
    O* staged = reinterpret_cast<O*>(smem + OZ_SP_CB_REGION);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int mt = warp / 2, nt0 = 2 * (warp % 2), g = lane / 4, q = lane % 4;
    // every parked word read back first: one round trip to memory, not one per output
    // (the compiler keeps each load behind the shared stores of the outputs before it)
    if (OZ_SP_DIAGONALS > 8) {
#pragma unroll
        for (int u = 0; u < 2; ++u)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                oz_unpark_words(oz_sp_slot(tile, n, 4 * u + e), re_bytes[u][e], im_bytes[u][e]);
    }
    __syncthreads();  // every warp's products are done: the slices are free
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int tr = oz_sp_cell_row(mt, g, e), tc = oz_sp_cell_col(nt0, q, u, e);
            staged[oz_sp_staged_at(tr, tc)] = oz_sp_round_output<O>(
                re_bytes[u][e], im_bytes[u][e], re[u][e], im[u][e],
                -(shift[tr] + shift[OZ_SP_TILE + tc]));
        }
    __syncthreads();  // every parked word is read back: the tile is written now
#pragma unroll
    for (int r = warp; r < OZ_SP_TILE; r += OZ_SP_CTHREADS / 32)
        tile[r * n + lane] = staged[oz_sp_staged_at(r, lane)];
}

// The products and the rounding of one 64 x 32 complex tile of item `item` (its A rows and
// Bt rows; their slices, shifts and Ai's row sums in shared memory).
template <typename O>
__device__ __forceinline__ void oz_complex_slices_tile(
    const OzSpRows& rows_a, const OzSpRows& rows_b, long long item, long long m, long long n,
    char* smem, const int* shift, const int (&ai_rows)[OZ_SP_DIAGONALS][OZ_SP_TILE],
    O* __restrict__ out) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int mt = warp / 2, nt0 = 2 * (warp % 2), g = lane / 4, q = lane % 4;
    const char* frag_a = smem + mt * OZ_SP_KSTEPS * OZ_SP_A_FRAG + lane * 16;
    const char* frag_b = smem + OZ_SP_CB_REGION + nt0 * OZ_SP_KSTEPS * OZ_SP_CB_FRAG + lane * 16;
    // C fragment element e of column tile u (oz_sp_cell_row, oz_sp_cell_col): its Re and
    // Im sums (the carry of the diagonals before plus this one's products) and their bytes
    // so far; its place in out (-1: a padding output)
    int re[2][4], im[2][4];
    oz_u32 re_bytes[2][4][OZ_SP_CWORDS], im_bytes[2][4][OZ_SP_CWORDS];
    auto place = [&](int u, int e) -> long long {
        const int tr = oz_sp_cell_row(mt, g, e), tc = oz_sp_cell_col(nt0, q, u, e);
        if (!rows_a.valid(tr) || !rows_b.valid(tc)) return -1;
        return (item * m + rows_a.row(tr)) * n + rows_b.row(tc);
    };
    // a whole tile (all its 64 rows and 32 columns exist) parks output 4 u + e's words in
    // its slot (oz_sp_slot) and leaves through shared memory (oz_sp_round_staged)
    const bool whole =
        rows_a.rows - rows_a.row0 >= OZ_SP_TILE && rows_b.rows - rows_b.row0 >= OZ_SP_CTILE_N;
    O* const tile = out + (item * m + rows_a.row0) * n + rows_b.row0;
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int e = 0; e < 4; ++e) re[u][e] = im[u][e] = 0;
    // diagonals d and d + 1 together: pair (s, d - s) and pair (s, d + 1 - s) share A's
    // slice s, and B's slice d - s serves pair (s, d - s) and then pair (s + 1, d - s): one
    // slice of each operand read per two pairs
#pragma unroll
    for (int d = 0; d < OZ_SP_DIAGONALS; d += 2) {
        const bool next = d + 1 < OZ_SP_DIAGONALS;
        const int lo0 = d < OZ_SP_SLICES ? 0 : d - OZ_SP_SLICES + 1;  // diagonal d: s in lo0 .. hi0
        const int hi0 = d < OZ_SP_SLICES ? d : OZ_SP_SLICES - 1;
        const int lo1 = d + 1 < OZ_SP_SLICES ? 0 : d + 2 - OZ_SP_SLICES;  // d + 1: lo1 .. hi1
        const int hi1 = next && d + 1 < OZ_SP_SLICES ? d + 1 : hi0;
        int re1[2][4], im1[2][4];  // diagonal d + 1's products
#pragma unroll
        for (int u = 0; u < 2; ++u)
#pragma unroll
            for (int e = 0; e < 4; ++e) re1[u][e] = im1[u][e] = 0;
        uint4 fb[2][OZ_SP_KSTEPS];  // B's slice d + 1 - s
        if (next && lo1 == 0) oz_sp_complex_b_frags(fb, frag_b + (d + 1) * OZ_SP_CB_PLANE);
#pragma unroll 1
        for (int s = lo0; s <= hi1; ++s) {
            uint4 ar[OZ_SP_KSTEPS], ai[OZ_SP_KSTEPS];
            const char* pa = frag_a + s * OZ_SP_CA_SLICE;
#pragma unroll
            for (int ks = 0; ks < OZ_SP_KSTEPS; ++ks) {
                ar[ks] = *reinterpret_cast<const uint4*>(pa + ks * OZ_SP_A_FRAG);
                ai[ks] = *reinterpret_cast<const uint4*>(pa + OZ_SP_A_PLANE + ks * OZ_SP_A_FRAG);
            }
            if (next && s >= lo1) oz_sp_complex_pair(re1, im1, ar, ai, fb);
            if (s <= hi0) {
                oz_sp_complex_b_frags(fb, frag_b + (d - s) * OZ_SP_CB_PLANE);
                oz_sp_complex_pair(re, im, ar, ai, fb);
            }
        }
        // bytes d and d + 1: Re from its row sums of Ai; diagonal d + 1 from d's carry
#pragma unroll
        for (int dd = d; dd <= d + 1 && dd < OZ_SP_DIAGONALS; ++dd) {
            const int rows_lo = ai_rows[dd][16 * mt + g], rows_hi = ai_rows[dd][16 * mt + g + 8];
#pragma unroll
            for (int u = 0; u < 2; ++u)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    if (dd > d) {
                        re[u][e] += re1[u][e];
                        im[u][e] += im1[u][e];
                    }
                    re[u][e] += e < 2 ? rows_lo : rows_hi;
                    oz_carry_byte(dd, re[u][e], re_bytes[u][e]);
                    oz_carry_byte(dd, im[u][e], im_bytes[u][e]);
                }
        }
        // bytes 0 .. 7 done: their words wait in out (for the registers of the later
        // diagonals), read back for the rounding: a whole tile's in a slot of the tile's
        // place (coalesced), a partial tile's in each output's own place
        if (d + 1 == 7 && OZ_SP_DIAGONALS > 8) {
#pragma unroll
            for (int u = 0; u < 2; ++u)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    if (whole) {
                        oz_park_words(oz_sp_slot(tile, n, 4 * u + e), re_bytes[u][e],
                                      im_bytes[u][e]);
                    } else {
                        const long long at = place(u, e);
                        if (at >= 0) oz_park_words(out + at, re_bytes[u][e], im_bytes[u][e]);
                    }
                }
        }
    }

    if (whole) {
        oz_sp_round_staged(tile, n, smem, shift, re, im, re_bytes, im_bytes);
        return;
    }
    // the rounding of each output of a partial tile
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const long long at = place(u, e);
            if (at < 0) continue;
            if (OZ_SP_DIAGONALS > 8) oz_unpark_words(out + at, re_bytes[u][e], im_bytes[u][e]);
            const int tr = oz_sp_cell_row(mt, g, e), tc = oz_sp_cell_col(nt0, q, u, e);
            out[at] = oz_sp_round_output<O>(re_bytes[u][e], im_bytes[u][e], re[u][e], im[u][e],
                                            -(shift[tr] + shift[OZ_SP_TILE + tc]));
        }
}

// The complex slices kernel for one block: output rows 64 blockIdx.y .., complex column
// tiles of 32 from blockIdx.x, gridDim.x apart, item blockIdx.z (arguments as
// oz_small_product_body, Gaussian; one item per block). A's slices, shifts and Ai's row
// sums are formed once; each column tile fills B's region, then its products and rounding.
// With OZ_SP_B_COLUMNS, bt is B itself (items x k x n), read in place.
template <typename O>
__device__ __forceinline__ void oz_complex_slices_body(const double* __restrict__ a,
                                                       const double* __restrict__ bt,
                                                       long long m, long long n, long long k,
                                                       const int* __restrict__ shift_a,
                                                       const int* __restrict__ shift_b,
                                                       int budget,
                                                       unsigned long long* __restrict__ counts,
                                                       O* __restrict__ out) {
    extern __shared__ __align__(16) char smem[];
    __shared__ int shift[2 * OZ_SP_TILE];  // the block's A rows, then its Bt rows
    __shared__ int ai_rows[OZ_SP_DIAGONALS][OZ_SP_TILE];
    const long long col_tiles = (n + OZ_SP_CTILE_N - 1) / OZ_SP_CTILE_N;
    for (long long ct = blockIdx.x; ct < col_tiles; ct += gridDim.x) {
        const bool first = ct == blockIdx.x;
        const OzSpBlockRows rows = oz_sp_block_rows(a, bt, m, n, 2 * k, 1, 6, OZ_SP_CTILE_N, ct);
        if (!first) __syncthreads();  // the last tile is out: B's region and shift are free
        // where B's fill forms B's shifts, only the first tile has shifts to form here (A's;
        // a later tile's barrier is the one above)
        if (first || !OZ_SP_FILL_FORMS_B_SHIFTS)
            oz_sp_shifts<2, OZ_SP_FILL_FORMS_B_SHIFTS ? 0 : OZ_SP_CTILE_N>(
                shift, rows.a, rows.b, k, shift_a, shift_b, budget, counts, ct == 0, first);
        if (first) oz_sp_fill_complex_slices<false>(smem, rows.a, k, shift);
#ifdef OZ_SP_B_COLUMNS
        oz_sp_fill_complex_columns(smem, rows.b, k, shift + OZ_SP_TILE, budget, counts);
#else
        oz_sp_fill_complex_slices<true>(smem, rows.b, k, shift + OZ_SP_TILE);
#endif
        __syncthreads();
        if (first) {
            oz_sp_ai_row_sums(ai_rows, smem);
            __syncthreads();
        }
        oz_complex_slices_tile(rows.a, rows.b, (long long)blockIdx.z, m, n, smem, shift, ai_rows,
                               out);
    }
}

extern "C" __global__ void __launch_bounds__(OZ_SP_CTHREADS, 2)
    oz_small_product_slices_gaussian(const double* __restrict__ a, const double* __restrict__ bt,
                                     long long m, long long n, long long k,
                                     const int* __restrict__ shift_a,
                                     const int* __restrict__ shift_b,
                                     oz_out_complex* __restrict__ out, int budget,
                                     unsigned long long* __restrict__ counts, long long items,
                                     int span_shift) {
    (void)items;  // (the launch signature of the small products: one item per block)
    (void)span_shift;
    oz_complex_slices_body(a, bt, m, n, k, shift_a, shift_b, budget, counts, out);
}
#endif  // OZ_SP_COMPLEX_SLICES
#endif  // OZ_SP_SLICES
