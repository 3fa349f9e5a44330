// The accuracy plan's first test (ozfft/scheme/gemm.py, _Pairing.tiled and
// _Planner._single_deficits at the default moduli count; docs/numerics.md, "The accuracy
// guarantee of matmul") in three launches (or one, oz_probe_items_*), where the staged
// decision takes ~100 small ones.
// The same integers as that path, so the same plan:
//
//   (the host zeroes the state's head)
//   oz_probe_rows_*, a block per 64 rows of one operand of one item (grid x: row blocks,
//   y: items, z: A or Bt): the rows' fast-mode statistics (computed here for k <= OZ_PROBE_K,
//   gemm/warp_row_stats.cuh, with the NaN and Inf counts; or given, from gemm/scaling.cu),
//   nb (oz_norm1_exponent_of), q_off = offset - (sigma + E) (sigma: the fast-mode shift for
//   `budget`; zero rows OZ_PROBE_EXACT), the maxima of nb and E; per tile of OZ_PROBE_TILE
//   rows the minima of the g-bit magnitudes floor(2**(g - E)|x|) of the `size` inner indices
//   (all of k, or `index`; zero rows and rows past the end: 2**g) and the power of two
//   2**-clip(max d) of d = nb - E (zero rows: -never). Each row is read by one block, once
//   where its statistics are formed here (a warp per tile of rows, held in registers).
//   There, with bt_out, B is read in place (bt holds B): a block of Bt's rows stages its
//   columns of B transposed in shared memory and writes them out as Bt's rows, the
//   operand the product reads (no separate transposed copy); oz_probe_rows_in_place_*
//   read B in place the same way and write nothing of it (their product reads B in place
//   as well; bt_out then only marks that bt holds B).
//   oz_probe_pairs_*, a block per 64 x 64 tile pair of one item (grid x: column tiles, y:
//   row tiles, z: items; 2 x 2 pairs of tiles a thread): each pair of tiles (I of A, J of
//   Bt) gives the exact lower-bound product G_IJ (real: Ma Mb^T; complex: the smaller of
//   its Re- and Im-forms; exact, since terms 2**(2g) <= 2**53: uint64 sums of 32 x 32-bit
//   products), and rmin[I] = min_J G_IJ
//   2**-clip(dB_J), cmin[J] = min_I G_IJ 2**-clip(dA_I) over the item are merged with
//   atomicMin on the bits (non-negative doubles order like their bits), where smaller than
//   the minimum read just before.
//   oz_probe_deficits, over every row of A and Bt: the row's deficit max(q_off + R, 0),
//   R = -floor_log2(rmin of its tile) (0 for zero rows), reduced to the largest per operand.
//   oz_probe_items_*: for items of at most 64 rows and columns (statistics formed here),
//   the three in one launch, a block per item.
//
// state (int64): out[0] A's deficit, [1] Bt's, [2] max nb of A, [3] max E of Bt, [4] max nb
// of Bt, [5] max E of A (the maxima with their sign bit flipped: OZ_PROBE_MAX_BIAS), [6..9]
// NaN and Inf counts of A, then of Bt (OZ_PROBE_OUT values, zeroed by the host before the
// rows), then rmin (items x ceil(m / 4)) and cmin (items x ceil(n / 4)), the bits of doubles,
// set to +inf by the rows kernel (each tile's by the block of its rows).
// q (int32): q_off of A's rows (items x m), then of Bt's (items x n);
// shifts (int32, null: not written): sigma of the same rows, the shifts the fast-mode
// product on `budget` scales them by (gemm/small_product.cu reads them).
// tiles (uint32): the tile minima, items x ceil(m / 4) x width for A, then Bt's; scale
// (double): the tiles' powers of two, A's then Bt's.
#include "common/ozaki_common.cuh"
#include "gemm/warp_row_stats.cuh"

#define OZ_PROBE_ROWS 64                  // rows per block (of each operand)
#define OZ_PROBE_K 64                     // the longest k whose statistics are formed here
#define OZ_PROBE_TILE 4                   // rows per tile (ozfft/scheme/gemm.py, TILE)
#define OZ_PROBE_TILES (OZ_PROBE_ROWS / OZ_PROBE_TILE)
#define OZ_PROBE_THREADS 256              // threads of the rows kernels
#define OZ_PROBE_PAIR_THREADS 64          // OZ_PROBE_TILES**2 / 4: 2 x 2 tile pairs a thread
#define OZ_PROBE_FILL_ROWS 4              // rows of minima a warp loads together
#define OZ_PROBE_FILL_WORDS 8             // words a lane of each: 2 OZ_PROBE_SUBSET / 32
#define OZ_PROBE_SUBSET 128               // the most inner indices (ozfft/scheme/gemm.py, SUBSET)
#define OZ_PROBE_STRIDE (2 * OZ_PROBE_SUBSET + 2)  // words per row of tile minima (2 mod 32:
                                                   // 8-byte loads of 16 rows hit 32 banks)
static_assert(32 * OZ_PROBE_FILL_WORDS >= 2 * OZ_PROBE_SUBSET, "a row of minima a batch");
#define OZ_PROBE_MINIMA_BYTES (2 * OZ_PROBE_TILES * OZ_PROBE_STRIDE * 4)  // both operands'
#define OZ_PROBE_EXACT (-2147483647 - 1)  // q_off of a zero row: it needs nothing
#define OZ_PROBE_CLIP 960                 // scaling exponents are clipped to +-960 (no overflow)
#define OZ_PROBE_OUT 10                   // results at the head of the state

__device__ __forceinline__ void oz_atomic_max_i64(oz_i64* address, oz_i64 v) {
    atomicMax(reinterpret_cast<long long*>(address), (long long)v);
}

// A maximum of the state's head, kept with its sign bit flipped (OZ_PROBE_MAX_BIAS), so that
// unsigned order is the values' order and the head's zeros (the host's memset) are the least.
#define OZ_PROBE_MAX_BIAS 0x8000000000000000ULL
__device__ __forceinline__ void oz_atomic_max_biased(oz_i64* address, oz_i64 v) {
    atomicMax(reinterpret_cast<unsigned long long*>(address),
              (unsigned long long)v ^ OZ_PROBE_MAX_BIAS);
}

// The tile's minima of this lane's V entries (column lane + 32 v) over its R rows: the
// g-bit magnitudes floor(2**(g - E)|x|) of the rows that exist (v0 + r < valid) and have a
// nonzero entry, else top. words: every entry zero or normal, the word forms without
// branches (oz_floor_scaled_top26: g <= 26), else oz_floor_scaled.
template <int R, int V, bool words>
__device__ __forceinline__ void oz_probe_tile_minima(const oz_u64 (&mag)[R][V],
                                                     const int (&row_max)[R], int v0, int valid,
                                                     int g, oz_u32 top, oz_u32 (&lo)[V]) {
#pragma unroll
    for (int v = 0; v < V; ++v) lo[v] = top;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const bool row_in = v0 + r < valid && row_max[r] != OZ_ZERO_ROW_EXP;  // warp-uniform
        const int t = g - row_max[r];
#pragma unroll
        for (int v = 0; v < V; ++v) {
            if constexpr (words) {
                const oz_u32 hi = (oz_u32)(mag[r][v] >> 32);
                const oz_u32 m = oz_floor_scaled_top26(oz_mantissa_top26(hi, (oz_u32)mag[r][v]),
                                                       hi, t);
                lo[v] = row_in && m < lo[v] ? m : lo[v];
            } else if (row_in) {
                const oz_u32 m = oz_floor_scaled(mag[r][v], t);
                lo[v] = m < lo[v] ? m : lo[v];
            }
        }
    }
}

// The staged rows of Bt where a block reads B in place (dynamic shared memory: OZ_PROBE_ROWS
// rows of k + 1 entries, oz_probe_stage_stride).
extern __shared__ __align__(16) double oz_probe_stage[];

// Doubles per staged row: one entry more than the row, so that the transposing stores of
// consecutive Bt rows fall in different banks (8-byte real entries: rows 2 banks apart,
// 16-byte complex ones: 4 apart; a warp's stores take the fewest wavefronts).
__host__ __device__ constexpr int oz_probe_stage_stride(int k, int planes) {
    return (k + 1) * planes;
}

// One entry of an operand as one load: a double, or a complex's two as a double2.
template <int planes>
struct OzProbeEntry {
    using type = double;
};
template <>
struct OzProbeEntry<2> {
    using type = double2;
};

// a, bt: the whole stacks; blocks y from item item0 (launches of at most 65535 items).
// bt_out (not null only without given statistics): bt holds B itself (items x k x n, rows
// over n) and the blocks of Bt's rows stage their 64 columns of B transposed in shared
// memory, with write_bt write them out at bt_out as Bt's rows (items x n x k, what the
// product reads; no separate transposed copy; without, bt_out is only that mark) and read
// the staged rows.
// Given statistics: exp (int32) and sumsq (int64) of A's rows (items x m), then of Bt's.
template <int planes, bool given, bool write_bt>
__device__ __forceinline__ void oz_probe_rows_body(
    const double* __restrict__ a, const double* __restrict__ bt, long long items,
    long long item0, long long m, long long n, long long k, long long size,
    const long long* __restrict__ index, const int* __restrict__ exp_a,
    const oz_i64* __restrict__ sumsq_a, const int* __restrict__ exp_b,
    const oz_i64* __restrict__ sumsq_b, int g, int budget, int terms_bits, int offset,
    int never, oz_i64* __restrict__ state, int* __restrict__ q, oz_u32* __restrict__ tiles,
    double* __restrict__ scale, int* __restrict__ shifts, double* __restrict__ bt_out, int side,
    long long item, long long row_block) {
    __shared__ int row_exp[OZ_PROBE_ROWS], row_nb[OZ_PROBE_ROWS];
    __shared__ int block_max[2];  // nb, E
    __shared__ unsigned block_counts[2];
    const long long rows = side ? n : m;
    const long long row0 = row_block * OZ_PROBE_ROWS;
    if (row0 >= rows) return;
    const int valid = (int)(rows - row0 < OZ_PROBE_ROWS ? rows - row0 : OZ_PROBE_ROWS);
    const int row_len = (int)(k * planes), width = (int)(size * planes);
    const double* x = (side ? bt : a) + (item * rows + row0) * row_len;
    const long long m4 = (m + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const long long tiles0 = (side ? items * m4 + item * ((n + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE)
                                   : item * m4) + row0 / OZ_PROBE_TILE;
    int* q_row = q + (side ? items * m : 0) + item * rows + row0;
    int* shift_row = shifts != nullptr ? shifts + (side ? items * m : 0) + item * rows + row0
                                       : nullptr;
    const bool transposing = !given && side == 1 && bt_out != nullptr;  // (uniform)
    const int stride = oz_probe_stage_stride((int)k, planes);
    // whole entries (16-byte double2 for complex: the host passes aligned arrays only)
    using entry_t = typename OzProbeEntry<planes>::type;
    entry_t* stage = reinterpret_cast<entry_t*>(oz_probe_stage);
    if (transposing) {  // B's rows 0 .. k of columns row0 .. row0 + valid, 8 loads ahead
        const entry_t* b = reinterpret_cast<const entry_t*>(bt) + item * k * n + row0;
        const int entries = (int)k * OZ_PROBE_ROWS;
        for (int e0 = threadIdx.x; e0 < entries; e0 += 8 * OZ_PROBE_THREADS) {
            entry_t v[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) {  // entry e: column e % 64 of B's row e / 64
                const int e = e0 + u * OZ_PROBE_THREADS, col = e % OZ_PROBE_ROWS;
                if (e < entries && col < valid) v[u] = b[(long long)(e / OZ_PROBE_ROWS) * n + col];
            }
#pragma unroll
            for (int u = 0; u < 8; ++u) {
                const int e = e0 + u * OZ_PROBE_THREADS, col = e % OZ_PROBE_ROWS;
                if (e < entries && col < valid)
                    stage[col * (stride / planes) + e / OZ_PROBE_ROWS] = v[u];
            }
        }
    }
    if (threadIdx.x < 2) {
        block_max[threadIdx.x] = -2147483647 - 1;
        block_counts[threadIdx.x] = 0u;
    }
    __syncthreads();
    if (write_bt && transposing) {  // Bt's rows for the product, from the staged rows: a
                                    // warp per row
        entry_t* out = reinterpret_cast<entry_t*>(bt_out) + (item * rows + row0) * k;
        for (int row = threadIdx.x / 32; row < valid; row += OZ_PROBE_THREADS / 32)
            for (int h = threadIdx.x % 32; h < k; h += 32)
                out[row * k + h] = stage[row * (stride / planes) + h];
    }

    const oz_u32 top = 1u << g;  // the magnitude of a zero row or a row past the end

    // 1. the rows' statistics, nb, q_off and the maxima
    auto take = [&](int local, int e, oz_i64 s) {
        const int nb = (int)oz_norm1_exponent_of(e, s, terms_bits);
        row_exp[local] = e;
        row_nb[local] = nb;
        if (local < valid) {
            const int sigma = (int)oz_fast_shift_of(e, s, budget);
            q_row[local] = e == OZ_ZERO_ROW_EXP ? OZ_PROBE_EXACT : offset - (sigma + e);
            if (shift_row != nullptr) shift_row[local] = sigma;
            atomicMax(&block_max[0], nb);
            atomicMax(&block_max[1], e);
        }
    };
    if constexpr (given) {
        const int* exps = side ? exp_b : exp_a;
        const oz_i64* sums = side ? sumsq_b : sumsq_a;
        for (int local = threadIdx.x; local < OZ_PROBE_ROWS; local += blockDim.x) {
            const long long row = item * rows + row0 + local;
            take(local, local < valid ? exps[row] : OZ_ZERO_ROW_EXP, local < valid ? sums[row] : 0);
        }
    } else {  // a tile of rows per warp at a time: their statistics here (k <= OZ_PROBE_K,
              // all of k: width = row_len), and the tile's minima (2.) from the same registers
        constexpr int V = OZ_PROBE_K * planes / 32, R = OZ_PROBE_TILE;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
        unsigned nans = 0u, infs = 0u;
        for (int v0 = warp * R; v0 < OZ_PROBE_ROWS; v0 += warps * R) {
            oz_u64 mag[R][V];
            if (transposing) {
                oz_warp_load_strided<R, V>(oz_probe_stage + v0 * stride, stride, valid - v0,
                                           row_len, mag);  // (the staged rows as doubles)
            } else {
                oz_warp_load_strided<R, V>(x + (long long)v0 * row_len, row_len, valid - v0,
                                           row_len, mag);
            }
            int row_max[R];
            oz_i64 sumsq;  // row lane's, in lanes 0 .. R - 1
            // words: zero and normal entries only (warp-uniform), the word forms apply
            const bool words = oz_warp_row_stats_of<R, V>(mag, row_max, sumsq, nans, infs) &&
                               g <= 26;  // (lower_bound_bits: always)
            if (v0 < valid) {  // the tile exists: its minima, per lane V entries
                oz_u32 lo[V];
                if (words) {
                    oz_probe_tile_minima<R, V, true>(mag, row_max, v0, valid, g, top, lo);
                } else {
                    oz_probe_tile_minima<R, V, false>(mag, row_max, v0, valid, g, top, lo);
                }
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const int h = lane + 32 * v;
                    if (h < width) tiles[(tiles0 + v0 / OZ_PROBE_TILE) * width + h] = lo[v];
                }
            }
            if (lane < R) {  // lane r takes row v0 + r (unrolled select: registers stay registers)
                int e = 0;
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (r == lane) e = row_max[r];
                take(v0 + lane, e, sumsq);
            }
        }
        if (nans) atomicAdd(&block_counts[0], nans);
        if (infs) atomicAdd(&block_counts[1], infs);
    }
    __syncthreads();

    // 2. per tile of 4 rows: the magnitudes' minima over its rows (given statistics: read
    // again, the columns of `index`) and d's maximum
    const int tiles_here = (valid + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    for (int idx = threadIdx.x; given && idx < tiles_here * width; idx += blockDim.x) {
        const int tile = idx / width, h = idx % width;
        const long long j = h / planes;
        const long long col = (index != nullptr ? index[j] : j) * planes + h % planes;
        oz_u32 lo = top;
#pragma unroll
        for (int r = 0; r < OZ_PROBE_TILE; ++r) {
            const int local = OZ_PROBE_TILE * tile + r;
            const int e = row_exp[local];
            if (local < valid && e != OZ_ZERO_ROW_EXP) {
                const oz_u64 bits = reinterpret_cast<const oz_u64*>(x)[local * row_len + col];
                const oz_u32 mag = oz_floor_scaled(bits & 0x7fffffffffffffffULL, g - e);
                lo = mag < lo ? mag : lo;
            }
        }
        tiles[(tiles0 + tile) * width + h] = lo;
    }
    if (threadIdx.x < tiles_here) {
        const int tile = threadIdx.x;
        long long d = -(long long)never;
#pragma unroll
        for (int r = 0; r < OZ_PROBE_TILE; ++r) {
            const int local = OZ_PROBE_TILE * tile + r;
            if (local < valid && row_exp[local] != OZ_ZERO_ROW_EXP) {
                const long long dr = (long long)row_nb[local] - row_exp[local];
                d = dr > d ? dr : d;
            }
        }
        d = d < -OZ_PROBE_CLIP ? -OZ_PROBE_CLIP : (d > OZ_PROBE_CLIP ? OZ_PROBE_CLIP : d);
        scale[tiles0 + tile] = scalbn(1.0, (int)-d);
        // the tile's rmin (A) or cmin (Bt), which the pairs merge into: +inf
        state[OZ_PROBE_OUT + tiles0 + tile] = 0x7ff0000000000000LL;
    }
    if (threadIdx.x < 2) {  // nb of A -> [2], E of A -> [5]; nb of Bt -> [4], E of Bt -> [3]
        const int slot = threadIdx.x == 0 ? (side ? 4 : 2) : (side ? 3 : 5);
        oz_atomic_max_biased(state + slot, block_max[threadIdx.x]);
        const unsigned c = block_counts[threadIdx.x];
        if (c) atomicAdd(reinterpret_cast<oz_u64*>(state + 6 + 2 * side + threadIdx.x), (oz_u64)c);
    }
}

#define OZ_PROBE_ROWS_PARAMS                                                                 \
    const double *__restrict__ a, const double *__restrict__ bt, long long items,            \
        long long item0, long long m, long long n, long long k, long long size,              \
        const long long *__restrict__ index, const int *__restrict__ exp_a,                  \
        const oz_i64 *__restrict__ sumsq_a, const int *__restrict__ exp_b,                   \
        const oz_i64 *__restrict__ sumsq_b, int g, int budget, int terms_bits, int offset,   \
        int never, oz_i64 *__restrict__ state, int *__restrict__ q,                          \
        oz_u32 *__restrict__ tiles, double *__restrict__ scale, int *__restrict__ shifts,    \
        double *__restrict__ bt_out
#define OZ_PROBE_ROWS_ARGS a, bt, items, item0, m, n, k, size, index, exp_a, sumsq_a, exp_b, \
    sumsq_b, g, budget, terms_bits, offset, never, state, q, tiles, scale, shifts, bt_out

// The rows kernels: `planes` 1 (real) or 2 (complex); `given`: the shifts come from the
// caller's table rather than the fast-mode rule; `write_bt`: B read in place is written
// out as Bt's rows. At least three blocks per SM: the warps hold a tile's entries in
// registers (without the bound the complex kernel takes 108 and runs two blocks).
#define OZ_PROBE_ROWS_KERNEL(name, planes, given, write_bt)                                \
    extern "C" __global__ void __launch_bounds__(OZ_PROBE_THREADS, 3)                      \
        name(OZ_PROBE_ROWS_PARAMS) {                                                       \
        oz_probe_rows_body<planes, given, write_bt>(OZ_PROBE_ROWS_ARGS, blockIdx.z,        \
                                                    item0 + blockIdx.y, blockIdx.x);       \
    }
OZ_PROBE_ROWS_KERNEL(oz_probe_rows_real, 1, false, true)
OZ_PROBE_ROWS_KERNEL(oz_probe_rows_complex, 2, false, true)
OZ_PROBE_ROWS_KERNEL(oz_probe_rows_in_place_real, 1, false, false)
OZ_PROBE_ROWS_KERNEL(oz_probe_rows_in_place_complex, 2, false, false)
OZ_PROBE_ROWS_KERNEL(oz_probe_rows_given_real, 1, true, false)
OZ_PROBE_ROWS_KERNEL(oz_probe_rows_given_complex, 2, true, false)

// The tile pairs of one 64 x 64 block of an item (blocks z from item item0), 2 x 2 of them
// a thread (OZ_PROBE_PAIR_THREADS): tiles I in {i, i + 8} of A against J in {j, j + 8} of
// Bt, so that each 8-byte load of shared memory feeds two pairs. The block's fill of the
// minima and its fixed work weigh as much as the products (docs/perf-notes.md, "The probe's
// tile pairs two by two").
// fused: the same block (OZ_PROBE_THREADS) wrote the minima and the scales (read from L2,
// __ldcg: never the read-only path, which the const restrict pointers would allow) and
// takes a pair a thread.
template <int planes, bool fused>
__device__ __forceinline__ void oz_probe_pairs_body(long long items, long long item,
                                                    long long m, long long n, int width,
                                                    const oz_u32* __restrict__ tiles,
                                                    const double* __restrict__ scale,
                                                    oz_i64* __restrict__ state, long long row_tiles,
                                                    long long column_tiles) {
    // the minima: the pairs kernels' own; the items kernels' in the dynamic shared memory
    // the rows staged B's columns in (done with by now: OZ_PROBE_MINIMA_BYTES)
    using minima_rows = oz_u32[OZ_PROBE_TILES][OZ_PROBE_STRIDE];
    minima_rows* minima;
    if constexpr (fused) {
        minima = reinterpret_cast<minima_rows*>(oz_probe_stage);
    } else {
        __shared__ __align__(8) oz_u32 own[2][OZ_PROBE_TILES][OZ_PROBE_STRIDE];
        minima = own;
    }
    __shared__ double tile_scale[2][OZ_PROBE_TILES];
    __shared__ double row_part[OZ_PROBE_TILES][OZ_PROBE_TILES + 1];  // G_IJ 2**-clip(dB_J)
    __shared__ double col_part[OZ_PROBE_TILES][OZ_PROBE_TILES + 1];  // G_IJ 2**-clip(dA_I)
    const long long m4 = (m + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const long long n4 = (n + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const long long ti0 = row_tiles * OZ_PROBE_TILES;  // the block's first tiles
    const long long tj0 = column_tiles * OZ_PROBE_TILES;
    const int tiles_a = (int)(m4 - ti0 < OZ_PROBE_TILES ? m4 - ti0 : OZ_PROBE_TILES);
    const int tiles_b = (int)(n4 - tj0 < OZ_PROBE_TILES ? n4 - tj0 : OZ_PROBE_TILES);
    const long long first[2] = {item * m4 + ti0, items * m4 + item * n4 + tj0};
    // a warp per OZ_PROBE_FILL_ROWS rows of minima at a time, its lanes along the rows, all
    // their loads issued before the stores: one trip to memory per batch of rows, not one
    // per 32 words (a loop of load-then-store spent most of the kernel waiting on them)
    const int warps = blockDim.x / 32, lane = threadIdx.x % 32;
    for (int row0 = threadIdx.x / 32; row0 < 2 * OZ_PROBE_TILES;
         row0 += OZ_PROBE_FILL_ROWS * warps) {
        oz_u32 v[OZ_PROBE_FILL_ROWS][OZ_PROBE_FILL_WORDS];
#pragma unroll
        for (int r = 0; r < OZ_PROBE_FILL_ROWS; ++r) {
            const int row = row0 + r * warps;
            const int side = row / OZ_PROBE_TILES, tile = row % OZ_PROBE_TILES;
            const bool live = row < 2 * OZ_PROBE_TILES && tile < (side ? tiles_b : tiles_a);
            const oz_u32* src = tiles + (first[side % 2] + tile) * width;
#pragma unroll
            for (int u = 0; u < OZ_PROBE_FILL_WORDS; ++u) {
                const int h = lane + 32 * u;
                v[r][u] = live && h < width ? (fused ? __ldcg(src + h) : __ldg(src + h)) : 0u;
            }
        }
#pragma unroll
        for (int r = 0; r < OZ_PROBE_FILL_ROWS; ++r) {
            const int row = row0 + r * warps;
            const int side = row / OZ_PROBE_TILES, tile = row % OZ_PROBE_TILES;
            if (row >= 2 * OZ_PROBE_TILES || tile >= (side ? tiles_b : tiles_a)) continue;
#pragma unroll
            for (int u = 0; u < OZ_PROBE_FILL_WORDS; ++u) {
                const int h = lane + 32 * u;
                if (h < width) minima[side][tile][h] = v[r][u];
            }
        }
    }
    if (threadIdx.x < 2 * OZ_PROBE_TILES) {
        const int side = threadIdx.x / OZ_PROBE_TILES, tile = threadIdx.x % OZ_PROBE_TILES;
        if (tile < (side ? tiles_b : tiles_a))
            tile_scale[side][tile] = fused ? __ldcg(scale + first[side] + tile) : scale[first[side] + tile];
    }
    __syncthreads();
    constexpr int half = OZ_PROBE_TILES / 2;
    // P x P pairs a thread: (ti + 8 (u0 + u), tj + 8 (v0 + v)); the pairs kernels' 64 threads
    // take 2 x 2 each (u0 = v0 = 0), the items kernels' 256 one each (thread group g of 64:
    // u0 = g / 2, v0 = g % 2)
    constexpr int P = fused ? 1 : 2;
    static_assert(!fused || OZ_PROBE_THREADS == 4 * OZ_PROBE_PAIR_THREADS, "a pair a thread");
    const int local = threadIdx.x % OZ_PROBE_PAIR_THREADS, group = threadIdx.x / OZ_PROBE_PAIR_THREADS;
    const int ti = local / half, tj = local % half, u0 = group / 2, v0 = group % 2;
    oz_u64 sum[P][P];  // exact: below 2**53
    {
        const uint2* a2[P];
        const uint2* b2[P];
#pragma unroll
        for (int u = 0; u < P; ++u) {
            a2[u] = reinterpret_cast<const uint2*>(minima[0][ti + (u0 + u) * half]);
            b2[u] = reinterpret_cast<const uint2*>(minima[1][tj + (v0 + u) * half]);
        }
        // real: two entries per 8-byte load, independent sums (s0 even h, s1 odd h; an odd
        // width's last entry after the loop); complex, interleaved parts: s0 the Re-form
        // sum mr nr + mi ni, s1 the Im-form sum mr ni + mi nr
        oz_u64 s0[P][P] = {}, s1[P][P] = {};
#pragma unroll 4
        for (int h = 0; h + (planes == 1) < width; h += 2) {
            uint2 x[P], y[P];
#pragma unroll
            for (int u = 0; u < P; ++u) {
                x[u] = a2[u][h / 2];
                y[u] = b2[u][h / 2];
            }
#pragma unroll
            for (int u = 0; u < P; ++u)
#pragma unroll
                for (int v = 0; v < P; ++v) {
                    const oz_u64 xy = (oz_u64)x[u].x * y[v].x, xy2 = (oz_u64)x[u].y * y[v].y;
                    if (planes == 1) {
                        s0[u][v] += xy;
                        s1[u][v] += xy2;
                    } else {
                        s0[u][v] += xy + xy2;
                        s1[u][v] += (oz_u64)x[u].x * y[v].y + (oz_u64)x[u].y * y[v].x;
                    }
                }
        }
#pragma unroll
        for (int u = 0; u < P; ++u)
#pragma unroll
            for (int v = 0; v < P; ++v) {
                if (planes == 1) {
                    sum[u][v] = s0[u][v] + s1[u][v];
                    if (width % 2)
                        sum[u][v] += (oz_u64)minima[0][ti + (u0 + u) * half][width - 1] *
                                     minima[1][tj + (v0 + v) * half][width - 1];
                } else {
                    sum[u][v] = s0[u][v] < s1[u][v] ? s0[u][v] : s1[u][v];
                }
            }
    }
#pragma unroll
    for (int u = 0; u < P; ++u)
#pragma unroll
        for (int v = 0; v < P; ++v) {
            const int i = ti + (u0 + u) * half, j = tj + (v0 + v) * half;
            const bool valid = i < tiles_a && j < tiles_b;
            const double gij = (double)sum[u][v];  // below 2**53: exact
            row_part[i][j] = valid ? gij * tile_scale[1][j] : OZ_INF;
            col_part[i][j] = valid ? gij * tile_scale[0][i] : OZ_INF;
        }
    __syncthreads();
    // rmin[I] = min_J, cmin[J] = min_I over the item, merged with atomicMin on the bits
    oz_u64* rmin = reinterpret_cast<oz_u64*>(state + OZ_PROBE_OUT) + item * m4 + ti0;
    oz_u64* cmin = reinterpret_cast<oz_u64*>(state + OZ_PROBE_OUT) + items * m4 + item * n4 + tj0;
    const int t = threadIdx.x % OZ_PROBE_TILES;
    if (threadIdx.x < OZ_PROBE_TILES ? t < tiles_a : threadIdx.x < 2 * OZ_PROBE_TILES && t < tiles_b) {
        const bool rows = threadIdx.x < OZ_PROBE_TILES;
        double v = OZ_INF;
#pragma unroll
        for (int o = 0; o < OZ_PROBE_TILES; ++o) v = fmin(v, rows ? row_part[t][o] : col_part[o][t]);
        // every block of the row (column) merges into the same minimum: read it first and
        // merge only a smaller one (the minima only fall, so a stale read costs an atomic,
        // never a result)
        oz_u64* target = (rows ? rmin : cmin) + t;
        const oz_u64 bits = (oz_u64)__double_as_longlong(v);
        if (bits < *reinterpret_cast<volatile oz_u64*>(target)) atomicMin(target, bits);
    }
}

#define OZ_PROBE_PAIRS_PARAMS                                                                \
    long long items, long long item0, long long m, long long n, int width,                   \
        const oz_u32 *__restrict__ tiles, const double *__restrict__ scale,                  \
        oz_i64 *__restrict__ state

extern "C" __global__ void __launch_bounds__(OZ_PROBE_PAIR_THREADS)
    oz_probe_pairs_real(OZ_PROBE_PAIRS_PARAMS) {
    oz_probe_pairs_body<1, false>(items, item0 + blockIdx.z, m, n, width, tiles, scale, state,
                                  blockIdx.y, blockIdx.x);
}
extern "C" __global__ void __launch_bounds__(OZ_PROBE_PAIR_THREADS)
    oz_probe_pairs_complex(OZ_PROBE_PAIRS_PARAMS) {
    oz_probe_pairs_body<2, false>(items, item0 + blockIdx.z, m, n, width, tiles, scale, state,
                                  blockIdx.y, blockIdx.x);
}

// A row's deficit q_off - floor_log2(min) (ozfft/scheme/gemm.py, _floor_log2; the caller
// keeps its largest positive one), or 0 for a zero row; min: the bits of its tile's rmin
// (A) or cmin (Bt).
__device__ __forceinline__ long long oz_probe_row_deficit(int q_off, oz_u64 min_bits,
                                                          int never) {
    if (q_off == OZ_PROBE_EXACT) return 0;
    const double v = __longlong_as_double((long long)min_bits);
    long long floor_log2;
    if (isinf(v)) {
        floor_log2 = never;
    } else if (v > 0.0) {
        int e;
        frexp(v, &e);
        floor_log2 = e - 1;
    } else {
        floor_log2 = -(long long)never;
    }
    return (long long)q_off - floor_log2;
}

// The block's largest deficits per operand (deficit[s], each thread's) into the head: one
// atomicMax per block and operand.
__device__ __forceinline__ void oz_probe_merge_deficits(oz_i64* __restrict__ out,
                                                        const long long (&deficit)[2]) {
    __shared__ long long block_deficit[2];
    if (threadIdx.x < 2) block_deficit[threadIdx.x] = 0;
    __syncthreads();
#pragma unroll
    for (int s = 0; s < 2; ++s)
        if (deficit[s] > 0) atomicMax(&block_deficit[s], deficit[s]);
    __syncthreads();
    if (threadIdx.x < 2 && block_deficit[threadIdx.x] > 0)
        oz_atomic_max_i64(out + threadIdx.x, block_deficit[threadIdx.x]);
}

// Each row's deficit and the largest per operand: rows [0, items m) are A's (their q, rmin
// over tiles of A's rows), then [items m, items (m + n)) Bt's (cmin). Grid-stride; one
// atomicMax per block and operand.
extern "C" __global__ void __launch_bounds__(256)
    oz_probe_deficits(oz_i64* __restrict__ state, const int* __restrict__ q, long long items,
                      long long m, long long n, int never) {
    const oz_u64* rmin = reinterpret_cast<const oz_u64*>(state + OZ_PROBE_OUT);
    const long long rows_a = items * m, total = items * (m + n);
    const long long m4 = (m + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const long long n4 = (n + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const oz_u64* cmin = rmin + items * m4;
    long long deficit[2] = {0, 0};
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int side = idx >= rows_a;
        const long long local = side ? idx - rows_a : idx;
        const long long rows = side ? n : m, tiles = side ? n4 : m4;
        const long long item = local / rows, row = local % rows;
        const long long d = oz_probe_row_deficit(
            q[idx], (side ? cmin : rmin)[item * tiles + row / OZ_PROBE_TILE], never);
        deficit[side] = d > deficit[side] ? d : deficit[side];
    }
    oz_probe_merge_deficits(state, deficit);
}

// The whole probe of items of at most OZ_PROBE_ROWS rows and columns and k <= OZ_PROBE_K in
// one launch, a block per item (grid y: items from item0): A's rows, Bt's rows (the rows
// kernels' body, side 0 then 1), the item's tile pairs (the pairs body on the minima this
// block wrote) and its rows' deficits, where the three launches above take three. The
// same integers, the same state; the minima and the rows' q go through global memory
// (L2) between the steps, read back by the block that wrote them.
template <int planes, bool write_bt>
__device__ __forceinline__ void oz_probe_items_body(OZ_PROBE_ROWS_PARAMS) {
    const long long item = item0 + blockIdx.y;
    oz_probe_rows_body<planes, false, write_bt>(OZ_PROBE_ROWS_ARGS, 0, item, 0);
    __syncthreads();  // (the body's shared rows are taken again)
    oz_probe_rows_body<planes, false, write_bt>(OZ_PROBE_ROWS_ARGS, 1, item, 0);
    __syncthreads();
    oz_probe_pairs_body<planes, true>(items, item, m, n, (int)(size * planes), tiles, scale,
                                      state, 0, 0);
    __syncthreads();
    const long long m4 = (m + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const long long n4 = (n + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const oz_u64* rmin = reinterpret_cast<const oz_u64*>(state + OZ_PROBE_OUT) + item * m4;
    const oz_u64* cmin =
        reinterpret_cast<const oz_u64*>(state + OZ_PROBE_OUT) + items * m4 + item * n4;
    long long deficit[2] = {0, 0};
    for (int idx = threadIdx.x; idx < m + n; idx += blockDim.x) {
        const int side = idx >= m;
        const int row = side ? idx - (int)m : idx;
        const int q_off = __ldcg(q + (side ? items * m + item * n : item * m) + row);
        // (the minima were merged by atomics, at L2: read from there)
        const oz_u64 bits = __ldcg((side ? cmin : rmin) + row / OZ_PROBE_TILE);
        const long long d = oz_probe_row_deficit(q_off, bits, never);
        deficit[side] = d > deficit[side] ? d : deficit[side];
    }
    oz_probe_merge_deficits(state, deficit);
}

// Three blocks an SM (the host counts them: _probe_items_per_sm): the dynamic shared
// memory holds B's staged columns (where B is read in place; complex, k = 64: 66.5 KB), then the pairs'
// minima (33 KB, OZ_PROBE_MINIMA_BYTES).
#define OZ_PROBE_ITEMS_KERNEL(name, planes, write_bt)                                     \
    extern "C" __global__ void __launch_bounds__(OZ_PROBE_THREADS, 3)                     \
        name(OZ_PROBE_ROWS_PARAMS) {                                                      \
        oz_probe_items_body<planes, write_bt>(OZ_PROBE_ROWS_ARGS);                        \
    }
OZ_PROBE_ITEMS_KERNEL(oz_probe_items_real, 1, true)
OZ_PROBE_ITEMS_KERNEL(oz_probe_items_complex, 2, true)
OZ_PROBE_ITEMS_KERNEL(oz_probe_items_in_place_real, 1, false)
OZ_PROBE_ITEMS_KERNEL(oz_probe_items_in_place_complex, 2, false)
