// The accuracy plan's pairing rule (ozfft/scheme/gemm.py, _reduced_deficits; docs/numerics.md,
// "The accuracy guarantee of matmul"): for the lower-bound products g (batches x m x n,
// row-major, non-negative float64 integers) and powers of two rs (batches x m), cs (batches x n)
//   rmin[b][i] = min_j g[b][i][j] cs[b][j],    cmin[b][j] = min_i g[b][i][j] rs[b][i].
// Every product is exact (scaling by a power of two; the caller clips the exponents so that
// nothing overflows), so both minima are exact and do not depend on the order of the
// comparisons. rmin and cmin hold the bit patterns of non-negative doubles, which order like
// unsigned integers, merged with atomicMin; the caller starts them at +inf's bits.
#include "common/ozaki_common.cuh"

#ifndef OZ_MIN_ROWS  // rows per block (from ozfft/engines/cuda/engine.py)
#define OZ_MIN_ROWS 64
#endif

__device__ __forceinline__ oz_u64 oz_bits_of(double v) { return (oz_u64)__double_as_longlong(v); }

// grid: x over tiles of blockDim.x columns (a thread per column: coalesced rows), y over
// blocks of OZ_MIN_ROWS rows of one item, z over items (both grid-stride). A thread keeps
// its column's minimum over the block's rows (one atomicMin at the end); each row's minimum
// over the block's columns is a warp's shuffle reduction, merged in shared memory and then
// with one atomicMin per row. One read of g, and few registers (many blocks per SM: the
// reads are in flight together).
extern "C" __global__ void __launch_bounds__(256)
    oz_scaled_minima(const double* __restrict__ g, long long batches, long long m, long long n,
                     const double* __restrict__ rs, const double* __restrict__ cs,
                     oz_u64* __restrict__ rmin, oz_u64* __restrict__ cmin) {
    __shared__ oz_u64 row_part[OZ_MIN_ROWS];
    __shared__ double row_scale[OZ_MIN_ROWS];
    const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const bool live = j < n;
    const int lane = threadIdx.x % 32;
    for (long long i0 = blockIdx.y * (long long)OZ_MIN_ROWS; i0 < m;
         i0 += (long long)gridDim.y * OZ_MIN_ROWS) {
        const int rows = (int)(m - i0 < OZ_MIN_ROWS ? m - i0 : OZ_MIN_ROWS);
        for (long long b = blockIdx.z; b < batches; b += gridDim.z) {
            __syncthreads();  // the previous pass's row_part and row_scale are read
            if (threadIdx.x < rows) {
                row_part[threadIdx.x] = oz_bits_of(OZ_INF);
                row_scale[threadIdx.x] = rs[b * m + i0 + threadIdx.x];
            }
            __syncthreads();
            const double c = live ? cs[b * n + j] : 0.0;
            const double* gj = g + (b * m + i0) * n + j;
            double col = OZ_INF;
#pragma unroll 4
            for (int r = 0; r < rows; ++r) {
                const double v = live ? gj[r * n] : 0.0;
                col = fmin(col, v * row_scale[r]);
                double rv = live ? v * c : OZ_INF;
#pragma unroll
                for (int off = 16; off > 0; off >>= 1)
                    rv = fmin(rv, __shfl_xor_sync(0xffffffffu, rv, off));
                if (lane == 0)
                    atomicMin(reinterpret_cast<unsigned long long*>(row_part + r), oz_bits_of(rv));
            }
            if (live) atomicMin(cmin + b * n + j, oz_bits_of(col));
            __syncthreads();
            if (threadIdx.x < rows) atomicMin(rmin + b * m + i0 + threadIdx.x, row_part[threadIdx.x]);
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
