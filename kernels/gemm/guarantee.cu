// The accuracy plan's pairing rule (ozfft/scheme/gemm.py, _reduced_deficits; docs/numerics.md,
// "The accuracy guarantee of matmul"): for the lower-bound products g (batches x m x n,
// row-major, non-negative float64 integers) and powers of two rs (batches x m), cs (batches x n)
//   rmin[b][i] = min_j g[b][i][j] cs[b][j],    cmin[b][j] = min_i g[b][i][j] rs[b][i].
// Every product is exact (scaling by a power of two; the caller clips the exponents so that
// nothing overflows), so both minima are exact and do not depend on the order of the
// comparisons. cmin holds the bit patterns of non-negative doubles, which order like unsigned
// integers, merged with atomicMin; the caller starts it at +inf's bits.
#include "common/ozaki_common.cuh"

#ifndef OZ_MIN_ROWS  // rows per block (from ozfft/engines/cuda/engine.py): n atomics per block
#define OZ_MIN_ROWS 16
#endif

// grid: x over blocks of OZ_MIN_ROWS rows of one item, y over items (grid-stride);
// the block's threads stride over the columns.
extern "C" __global__ void __launch_bounds__(256)
    oz_scaled_minima(const double* __restrict__ g, long long batches, long long m, long long n,
                     const double* __restrict__ rs, const double* __restrict__ cs,
                     double* __restrict__ rmin, oz_u64* __restrict__ cmin) {
    __shared__ double part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (int)(blockDim.x >> 5);
    const long long i0 = blockIdx.x * (long long)OZ_MIN_ROWS;
    if (i0 >= m) return;
    const int rows = (int)(m - i0 < OZ_MIN_ROWS ? m - i0 : OZ_MIN_ROWS);
    for (long long b = blockIdx.y; b < batches; b += gridDim.y) {
        const double* gb = g + (b * m + i0) * n;
        const double* csb = cs + b * n;
        double row_scale[OZ_MIN_ROWS], row_min[OZ_MIN_ROWS];
#pragma unroll
        for (int r = 0; r < OZ_MIN_ROWS; ++r) {
            row_scale[r] = r < rows ? rs[b * m + i0 + r] : 0.0;
            row_min[r] = OZ_INF;
        }
        for (long long j = threadIdx.x; j < n; j += blockDim.x) {
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
        // the rows' minima: one block reduction each
#pragma unroll
        for (int r = 0; r < OZ_MIN_ROWS; ++r) {
            if (r >= rows) break;
            double v = row_min[r];
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) v = fmin(v, __shfl_down_sync(0xffffffffu, v, off));
            if (lane == 0) part[warp] = v;
            __syncthreads();
            if (warp == 0) {
                v = lane < warps ? part[lane] : OZ_INF;
#pragma unroll
                for (int off = 16; off > 0; off >>= 1)
                    v = fmin(v, __shfl_down_sync(0xffffffffu, v, off));
                if (lane == 0) rmin[b * m + i0 + r] = v;
            }
            __syncthreads();
        }
    }
}
