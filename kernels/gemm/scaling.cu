// Stage 1: integer row statistics and the accurate-mode bound operand.
// Mirrors ozfft/engines/numpy/scaling.py exactly (same doubles, integer sums).
#include "common/ozaki_common.cuh"

#ifndef OZ_THREADS
#define OZ_THREADS 256
#endif

// Block-wide reduction with `op` (identity `none`); the result is valid in thread 0.
template <typename T, typename Op>
__device__ T oz_block_reduce(T v, Op op, T none, T* shared) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? shared[lane] : none;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    __syncthreads();
    return v;
}

struct OzMax {
    __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct OzSum {
    __device__ oz_i64 operator()(oz_i64 a, oz_i64 b) const { return a + b; }
};

// One block per row of `width` doubles (a complex row is 2k doubles: both parts count).
// max_exp: largest frexp exponent of a nonzero entry (OZ_ZERO_ROW_EXP if none);
// sumsq: sum of ceil(c*c*2**max(2(e-E)+F, MIN)) with c = ceil(128|f|) (fast mode);
// counts[0], counts[1]: NaN and Inf entries of the whole operand.
extern "C" __global__ void oz_row_stats(const double* __restrict__ x, long long rows,
                                        long long width, int need_sumsq,
                                        int* __restrict__ max_exp,
                                        long long* __restrict__ sumsq,
                                        unsigned long long* __restrict__ counts) {
    __shared__ int s_int[32];
    __shared__ oz_i64 s_i64[32];
    __shared__ int s_row_max;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const double* xr = x + row * width;
        int local = OZ_ZERO_ROW_EXP;
        unsigned nans = 0, infs = 0;
        for (long long h = threadIdx.x; h < width; h += blockDim.x) {
            double v = xr[h];
            if (isnan(v)) {
                ++nans;
            } else if (isinf(v)) {
                ++infs;
            } else if (v != 0.0) {
                int e;
                frexp(v, &e);
                local = e > local ? e : local;
            }
        }
        if (nans) atomicAdd(&counts[0], (unsigned long long)nans);
        if (infs) atomicAdd(&counts[1], (unsigned long long)infs);
        int row_max = oz_block_reduce(local, OzMax(), (int)OZ_ZERO_ROW_EXP, s_int);
        if (threadIdx.x == 0) {
            max_exp[row] = row_max;
            s_row_max = row_max;
        }
        __syncthreads();
        row_max = s_row_max;
        if (need_sumsq) {
            oz_i64 acc = 0;
            for (long long h = threadIdx.x; h < width; h += blockDim.x) {
                double v = xr[h];
                if (v != 0.0 && isfinite(v)) {
                    int e;
                    double f = frexp(v, &e);
                    double c = ceil(fabs(f) * (double)(1 << OZ_BOUND_MANTISSA_BITS));
                    int s = 2 * (e - row_max) + OZ_FRACTION_BITS;
                    s = s > OZ_MIN_TERM_SHIFT ? s : OZ_MIN_TERM_SHIFT;
                    acc += (oz_i64)ceil(scalbn(c * c, s));
                }
            }
            oz_i64 total = oz_block_reduce(acc, OzSum(), (oz_i64)0, s_i64);
            if (threadIdx.x == 0) sumsq[row] = total;
        }
        __syncthreads();
    }
}

// Accurate mode: out[row, h] = sum over parts of ceil(2**(g - E_row) |x|) (>= 1 if x != 0),
// as int8 in a (rows, kp) K-major plane; zero padding for h >= k.
extern "C" __global__ void oz_bound_operand(const double* __restrict__ x, long long rows,
                                            long long k, long long kp, int parts,
                                            const int* __restrict__ max_exp, int bound_bits,
                                            signed char* __restrict__ out) {
    long long total = rows * kp;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long row = idx / kp, h = idx - row * kp;
        double v = 0.0;
        if (h < k) {
            int e = max_exp[row];
            int s = e == OZ_ZERO_ROW_EXP ? 0 : bound_bits - e;
            for (int part = 0; part < parts; ++part) {
                double a = fabs(x[(row * k + h) * parts + part]);
                if (a != 0.0) {
                    double b = ceil(scalbn(a, s));
                    v += b < 1.0 ? 1.0 : b;
                }
            }
        }
        out[idx] = (signed char)(int)v;
    }
}
