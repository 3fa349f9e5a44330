// The accuracy plan's first test for products with k <= OZ_PROBE_K (ozfft/scheme/gemm.py,
// _Pairing.tiled and _Planner._single_deficits at the default moduli count; docs/numerics.md,
// "The accuracy guarantee of matmul") in two launches, where the general path takes ~100
// small ones. The same integers as that path, so the same plan:
//
//   oz_probe_tiles_*, one block per 64 x 64 tile pair of one item (grid x: column tiles,
//   y: row tiles, z: items). Each block computes the fast-mode statistics of its 64 A rows
//   and 64 Bt rows (gemm/warp_row_stats.cuh), nb (oz_norm1_exponent_of) and, per tile of
//   OZ_PROBE_TILE rows, the minima of the g-bit magnitudes floor(2**(g - E)|x|) (zero rows
//   and rows past the end: 2**g) and the maxima of d = nb - E (zero rows: -never). Each
//   pair of tiles (I of A, J of Bt) gives the exact lower-bound product G_IJ (real: Ma Mb^T;
//   complex: the smaller of its Re- and Im-forms; exact, since terms 2**(2g) <= 2**53), and
//   rmin[I] = min_J G_IJ 2**-clip(dB_J), cmin[J] = min_I G_IJ 2**-clip(dA_I) over the item
//   are merged with atomicMin on the bits (non-negative doubles order like their bits). The
//   blocks of the first column (row) tile also write each A (Bt) row's
//   q_off = offset - (sigma + E) (sigma: the fast-mode shift for `budget`; zero rows
//   OZ_PROBE_EXACT), the maxima of nb and E, and the NaN and Inf counts.
//
//   oz_probe_deficits, over every row of A and Bt: the row's deficit
//   max(q_off + R, 0), R = -floor_log2(rmin of its tile) (0 for zero rows), reduced to the
//   largest per operand.
//
// state (int64), set by oz_probe_start: out[0] A's deficit, [1] Bt's, [2] max nb of A, [3]
// max E of Bt, [4] max nb of Bt, [5] max E of A, [6..9] NaN and Inf counts of A, then of Bt
// (OZ_PROBE_OUT values), then rmin (items x ceil(m / 4)) and cmin (items x ceil(n / 4)), the
// bits of doubles. q (int32): q_off of A's rows (items x m), then of Bt's (items x n).
#include "common/ozaki_common.cuh"
#include "gemm/warp_row_stats.cuh"

#define OZ_PROBE_ROWS 64                  // rows of A and of Bt per block
#define OZ_PROBE_K 64                     // the longest k
#define OZ_PROBE_TILE 4                   // rows per tile (ozfft/scheme/gemm.py, TILE)
#define OZ_PROBE_TILES (OZ_PROBE_ROWS / OZ_PROBE_TILE)
#define OZ_PROBE_THREADS 256              // OZ_PROBE_TILES**2: a thread per pair of tiles
#define OZ_PROBE_STRIDE (2 * OZ_PROBE_K + 1)  // doubles per row of tile minima (odd: no bank conflicts)
#define OZ_PROBE_EXACT (-2147483647 - 1)  // q_off of a zero row: it needs nothing
#define OZ_PROBE_CLIP 960                 // scaling exponents are clipped to +-960 (no overflow)
#define OZ_PROBE_OUT 10                   // results at the head of the state

// The state's start: deficits 0, maxima at the int64 minimum, counts 0, minima +inf.
extern "C" __global__ void oz_probe_start(oz_i64* __restrict__ state, long long items,
                                          long long m, long long n) {
    const long long minima = items * ((m + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE +
                                      (n + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < OZ_PROBE_OUT + minima;
         i += (long long)gridDim.x * blockDim.x) {
        state[i] = i >= OZ_PROBE_OUT ? 0x7ff0000000000000LL  // +inf
                   : i >= 2 && i < 6  ? (oz_i64)(-9223372036854775807LL - 1)
                                      : 0;
    }
}

__device__ __forceinline__ void oz_atomic_max_i64(oz_i64* address, oz_i64 v) {
    atomicMax(reinterpret_cast<long long*>(address), (long long)v);
}

template <int planes>
__device__ __forceinline__ void oz_probe_tiles_body(
    const double* __restrict__ a, const double* __restrict__ bt, long long items,
    long long item0, long long m, long long n, long long k, int g, int budget, int terms_bits,
    int offset, int never, oz_i64* __restrict__ state, int* __restrict__ q) {
    __shared__ int row_exp[2 * OZ_PROBE_ROWS], row_nb[2 * OZ_PROBE_ROWS];
    __shared__ double minima[2][OZ_PROBE_TILES][OZ_PROBE_STRIDE];
    __shared__ double scale[2][OZ_PROBE_TILES];
    __shared__ double col_part[OZ_PROBE_TILES][OZ_PROBE_TILES];
    __shared__ int block_max[4];  // nb of A, E of Bt, nb of Bt, E of A
    __shared__ unsigned block_counts[4];
    const long long item = item0 + blockIdx.z;
    const int width = (int)(k * planes);
    a += item * m * width;
    bt += item * n * width;
    const long long m4 = (m + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    const long long n4 = (n + OZ_PROBE_TILE - 1) / OZ_PROBE_TILE;
    oz_i64* out = state;
    oz_u64* rmin = reinterpret_cast<oz_u64*>(state + OZ_PROBE_OUT) + item * m4;
    oz_u64* cmin = reinterpret_cast<oz_u64*>(state + OZ_PROBE_OUT) + items * m4 + item * n4;
    int* q_a = q + item * m;
    int* q_b = q + items * m + item * n;
    const long long row0 = (long long)blockIdx.y * OZ_PROBE_ROWS, col0 = (long long)blockIdx.x * OZ_PROBE_ROWS;
    // rows of this block on each side (A: from row0, Bt: from col0)
    const int valid[2] = {(int)(m - row0 < OZ_PROBE_ROWS ? m - row0 : OZ_PROBE_ROWS),
                          (int)(n - col0 < OZ_PROBE_ROWS ? n - col0 : OZ_PROBE_ROWS)};
    // the first column tile's blocks write A's rows, the first row tile's Bt's
    const bool writes[2] = {blockIdx.x == 0, blockIdx.y == 0};
    if (threadIdx.x < 4) {
        block_max[threadIdx.x] = -2147483647 - 1;
        block_counts[threadIdx.x] = 0u;
    }
    __syncthreads();

    // 1. the statistics of the 128 rows, R rows per warp at a time
    {
        constexpr int V = OZ_PROBE_K * planes / 32, R = 8 / V;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
        for (int v0 = warp * R; v0 < 2 * OZ_PROBE_ROWS; v0 += warps * R) {
            const int side = v0 >= OZ_PROBE_ROWS;  // R divides 64: a batch is all A or all Bt
            const double* rows[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int local = (v0 + r) % OZ_PROBE_ROWS;
                rows[r] = local < valid[side]
                              ? (side ? bt + (col0 + local) * width : a + (row0 + local) * width)
                              : nullptr;
            }
            int row_max[R];
            oz_i64 sumsq[R];
            unsigned nans = 0u, infs = 0u;
            oz_warp_row_stats<R, V>(rows, width, row_max, sumsq, nans, infs);
            if (writes[side]) {
                if (nans) atomicAdd(&block_counts[2 * side], nans);
                if (infs) atomicAdd(&block_counts[2 * side + 1], infs);
            }
            if (lane < R) {  // lane r takes row v0 + r (unrolled select: registers stay registers)
                int e = 0;
                oz_i64 s = 0;
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (r == lane) {
                        e = row_max[r];
                        s = sumsq[r];
                    }
                const int v = v0 + lane, local = v % OZ_PROBE_ROWS;
                const int nb = (int)oz_norm1_exponent_of(e, s, terms_bits);
                row_exp[v] = e;
                row_nb[v] = nb;
                if (writes[side] && local < valid[side]) {
                    const int sigma = (int)oz_fast_shift_of(e, s, budget);
                    (side ? q_b[col0 + local] : q_a[row0 + local]) =
                        e == OZ_ZERO_ROW_EXP ? OZ_PROBE_EXACT : offset - (sigma + e);
                    atomicMax(&block_max[side ? 2 : 0], nb);
                    atomicMax(&block_max[side ? 1 : 3], e);
                }
            }
        }
    }
    __syncthreads();

    // 2. per tile of 4 rows: the magnitudes' minima over its rows and d's maximum
    const double top = scalbn(1.0, g);  // the magnitude of a zero row or a row past the end
    for (int idx = threadIdx.x; idx < 2 * OZ_PROBE_TILES * width; idx += blockDim.x) {
        const int side = idx / (OZ_PROBE_TILES * width);
        const int tile = idx / width % OZ_PROBE_TILES, h = idx % width;
        const double* x = side ? bt + col0 * width : a + row0 * width;
        double lo = top;
#pragma unroll
        for (int r = 0; r < OZ_PROBE_TILE; ++r) {
            const int local = OZ_PROBE_TILE * tile + r;
            const int e = row_exp[side * OZ_PROBE_ROWS + local];
            if (local < valid[side] && e != OZ_ZERO_ROW_EXP)
                lo = fmin(lo, floor(scalbn(fabs(x[local * width + h]), g - e)));
        }
        minima[side][tile][h] = lo;
    }
    if (threadIdx.x < 2 * OZ_PROBE_TILES) {
        const int side = threadIdx.x / OZ_PROBE_TILES, tile = threadIdx.x % OZ_PROBE_TILES;
        long long d = -(long long)never;
#pragma unroll
        for (int r = 0; r < OZ_PROBE_TILE; ++r) {
            const int local = OZ_PROBE_TILE * tile + r, v = side * OZ_PROBE_ROWS + local;
            if (local < valid[side] && row_exp[v] != OZ_ZERO_ROW_EXP) {
                const long long dr = (long long)row_nb[v] - row_exp[v];
                d = dr > d ? dr : d;
            }
        }
        d = d < -OZ_PROBE_CLIP ? -OZ_PROBE_CLIP : (d > OZ_PROBE_CLIP ? OZ_PROBE_CLIP : d);
        scale[side][tile] = scalbn(1.0, (int)-d);
    }
    __syncthreads();

    // 3. the lower-bound product of tile pair (I, J), exact, and its scaled minima
    const int ti = threadIdx.x / OZ_PROBE_TILES, tj = threadIdx.x % OZ_PROBE_TILES;
    const bool valid_i = OZ_PROBE_TILE * ti < valid[0], valid_j = OZ_PROBE_TILE * tj < valid[1];
    const double* ma = minima[0][ti];
    const double* mb = minima[1][tj];
    double gij = 0.0;
    if (planes == 1) {
        for (int h = 0; h < width; ++h) gij = fma(ma[h], mb[h], gij);
    } else {  // interleaved parts: Re-form sum mr nr + mi ni, Im-form sum mr ni + mi nr
        double re = 0.0, im = 0.0;
        for (int h = 0; h < width; h += 2) {
            re = fma(ma[h], mb[h], fma(ma[h + 1], mb[h + 1], re));
            im = fma(ma[h], mb[h + 1], fma(ma[h + 1], mb[h], im));
        }
        gij = fmin(re, im);
    }
    double row_v = valid_j ? gij * scale[1][tj] : OZ_INF;
#pragma unroll
    for (int off = OZ_PROBE_TILES / 2; off > 0; off >>= 1)  // the 16 lanes of tile I
        row_v = fmin(row_v, __shfl_xor_sync(0xffffffffu, row_v, off));
    if (tj == 0 && valid_i)
        atomicMin(rmin + row0 / OZ_PROBE_TILE + ti, (oz_u64)__double_as_longlong(row_v));
    col_part[ti][tj] = valid_i ? gij * scale[0][ti] : OZ_INF;
    __syncthreads();
    if (threadIdx.x < OZ_PROBE_TILES && OZ_PROBE_TILE * (int)threadIdx.x < valid[1]) {
        double col_v = OZ_INF;
#pragma unroll
        for (int i = 0; i < OZ_PROBE_TILES; ++i) col_v = fmin(col_v, col_part[i][threadIdx.x]);
        atomicMin(cmin + col0 / OZ_PROBE_TILE + threadIdx.x, (oz_u64)__double_as_longlong(col_v));
    }
    if (threadIdx.x < 4 && (writes[0] || writes[1])) {
        const int which = threadIdx.x, side = which == 0 || which == 3 ? 0 : 1;
        if (writes[side]) oz_atomic_max_i64(out + 2 + which, block_max[which]);
        const unsigned c = block_counts[which];
        if (writes[which / 2] && c) atomicAdd(reinterpret_cast<oz_u64*>(out + 6 + which), (oz_u64)c);
    }
}

// a, bt: the whole stacks; blocks z from item item0 (launches of at most 65535 items)
#define OZ_PROBE_TILES_PARAMS                                                                \
    const double *__restrict__ a, const double *__restrict__ bt, long long items,            \
        long long item0, long long m, long long n, long long k, int g, int budget,           \
        int terms_bits, int offset, int never, oz_i64 *__restrict__ state, int *__restrict__ q
#define OZ_PROBE_TILES_ARGS \
    a, bt, items, item0, m, n, k, g, budget, terms_bits, offset, never, state, q

extern "C" __global__ void __launch_bounds__(OZ_PROBE_THREADS)
    oz_probe_tiles_real(OZ_PROBE_TILES_PARAMS) {
    oz_probe_tiles_body<1>(OZ_PROBE_TILES_ARGS);
}

extern "C" __global__ void __launch_bounds__(OZ_PROBE_THREADS)
    oz_probe_tiles_complex(OZ_PROBE_TILES_PARAMS) {
    oz_probe_tiles_body<2>(OZ_PROBE_TILES_ARGS);
}

// Each row's deficit and the largest per operand: rows [0, items m) are A's (their q, rmin
// over tiles of A's rows), then [items m, items (m + n)) Bt's (cmin). Grid-stride; one
// atomicMax per block and operand.
extern "C" __global__ void __launch_bounds__(256)
    oz_probe_deficits(oz_i64* __restrict__ state, const int* __restrict__ q, long long items,
                      long long m, long long n, int never) {
    oz_i64* out = state;
    const oz_u64* rmin = reinterpret_cast<const oz_u64*>(state + OZ_PROBE_OUT);
    __shared__ long long block_deficit[2];
    if (threadIdx.x < 2) block_deficit[threadIdx.x] = 0;
    __syncthreads();
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
        const int q_off = q[idx];  // A's rows, then Bt's
        if (q_off == OZ_PROBE_EXACT) continue;
        const double v = __longlong_as_double(
            (long long)(side ? cmin : rmin)[item * tiles + row / OZ_PROBE_TILE]);
        long long floor_log2;  // ozfft/scheme/gemm.py, _floor_log2
        if (isinf(v)) {
            floor_log2 = never;
        } else if (v > 0.0) {
            int e;
            frexp(v, &e);
            floor_log2 = e - 1;
        } else {
            floor_log2 = -(long long)never;
        }
        const long long d = (long long)q_off - floor_log2;
        deficit[side] = d > deficit[side] ? d : deficit[side];
    }
#pragma unroll
    for (int s = 0; s < 2; ++s)
        if (deficit[s] > 0) atomicMax(&block_deficit[s], deficit[s]);
    __syncthreads();
    if (threadIdx.x < 2 && block_deficit[threadIdx.x] > 0)
        oz_atomic_max_i64(out + threadIdx.x, block_deficit[threadIdx.x]);
}
