// The accuracy plan's pairing rule (ozfft/scheme/gemm.py, _reduced_deficits; docs/numerics.md,
// "The accuracy guarantee of matmul"): for the lower-bound products g (batches x m x n,
// row-major, non-negative float64 integers) and powers of two rs (batches x m), cs (batches x n)
//   rmin[b][i] = min_j g[b][i][j] cs[b][j],    cmin[b][j] = min_i g[b][i][j] rs[b][i].
// Every product is exact (scaling by a power of two; the caller clips the exponents so that
// nothing overflows), so both minima are exact and do not depend on the order of the
// comparisons. rmin and cmin hold the bit patterns of non-negative doubles, which order like
// unsigned integers, merged with atomicMin; the caller starts them at +inf's bits.
#include "common/ozaki_common.cuh"
#include "common/block_reduce.cuh"

struct OzMinDouble {
    __device__ double operator()(double a, double b) const { return fmin(a, b); }
};

#ifndef OZ_MIN_ROWS  // rows per block (from ozfft/engines/cuda/engine.py)
#define OZ_MIN_ROWS 32
#endif

// grid: x over blocks of OZ_MIN_ROWS rows of one item, y over chunks of columns (the
// block's threads stride over its chunk), z over items (grid-stride). The rows' minima of
// a chunk are merged with atomicMin on the bits as well (rmin starts at +inf's bits).
extern "C" __global__ void __launch_bounds__(256)
    oz_scaled_minima(const double* __restrict__ g, long long batches, long long m, long long n,
                     long long chunk, const double* __restrict__ rs,
                     const double* __restrict__ cs, oz_u64* __restrict__ rmin,
                     oz_u64* __restrict__ cmin) {
    __shared__ double part[32];
    __shared__ double row_scale[OZ_MIN_ROWS];
    const long long i0 = blockIdx.x * (long long)OZ_MIN_ROWS;
    const long long j0 = blockIdx.y * chunk;
    if (i0 >= m || j0 >= n) return;
    const int rows = (int)(m - i0 < OZ_MIN_ROWS ? m - i0 : OZ_MIN_ROWS);
    const long long j1 = j0 + chunk < n ? j0 + chunk : n;
    for (long long b = blockIdx.z; b < batches; b += gridDim.z) {
        const double* gb = g + (b * m + i0) * n;
        const double* csb = cs + b * n;
        __syncthreads();  // the previous item's row_scale is no longer read
        if (threadIdx.x < rows) row_scale[threadIdx.x] = rs[b * m + i0 + threadIdx.x];
        __syncthreads();
        double row_min[OZ_MIN_ROWS];
#pragma unroll
        for (int r = 0; r < OZ_MIN_ROWS; ++r) row_min[r] = OZ_INF;
        for (long long j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
            const double c = csb[j];
            double col = OZ_INF;
#pragma unroll
            for (int r = 0; r < OZ_MIN_ROWS; ++r) {
                if (r < rows) {
                    const double v = gb[r * n + j];
                    row_min[r] = fmin(row_min[r], v * c);
                    col = fmin(col, v * row_scale[r]);
                }
            }
            atomicMin(cmin + b * n + j, (oz_u64)__double_as_longlong(col));
        }
        // the rows' minima over the chunk: one block reduction each
#pragma unroll
        for (int r = 0; r < OZ_MIN_ROWS; ++r) {
            if (r >= rows) break;
            const double v = oz_block_reduce(row_min[r], OzMinDouble(), (double)OZ_INF, part);
            if (threadIdx.x == 0) atomicMin(rmin + b * m + i0 + r, (oz_u64)__double_as_longlong(v));
        }
    }
}

// The accuracy plan's sample of the inner indices (ozfft/scheme/gemm.py, _subset;
// Engine.column_hash): for x viewed as rows x cols 64-bit words,
//   h[c] = sum_r x[r][c] w_r  (mod 2**64),  w_r = ((v ^ (v >> 31)) MIX) | 1,
//   v = (r + salt) MULT  (salt = 2 s + 1; ozfft/ozaki/bounds.py, index_hash_weights).
// grid: x over tiles of blockDim.x columns (a thread per column: coalesced rows), y over
// chunks of row_chunk rows; each thread's partial sum is added with one atomicAdd, which
// wraps modulo 2**64 like the sum, so the order does not matter. One read of x.
extern "C" __global__ void __launch_bounds__(256)
    oz_column_hash(const oz_u64* __restrict__ x, long long rows, long long cols,
                   long long row_chunk, oz_u64 salt, oz_u64* __restrict__ h) {
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= cols) return;
    const long long r0 = blockIdx.y * row_chunk;
    const long long r1 = r0 + row_chunk < rows ? r0 + row_chunk : rows;
    oz_u64 acc = 0;
#pragma unroll 4
    for (long long r = r0; r < r1; ++r) {
        oz_u64 v = ((oz_u64)r + salt) * OZ_HASH_MULT;
        v = ((v ^ (v >> 31)) * OZ_HASH_MIX) | 1ULL;
        acc += x[r * cols + c] * v;
    }
    atomicAdd(reinterpret_cast<unsigned long long*>(h + c), (unsigned long long)acc);
}
