// Stage 1: integer row statistics, the fast-mode shifts and the accurate-mode bound operand.
// Mirrors ozfft/engines/numpy/scaling.py exactly (same doubles, integer sums).
#include "common/ozaki_common.cuh"
#include "common/block_reduce.cuh"

#ifndef OZ_THREADS
#define OZ_THREADS 256
#endif


struct OzMax {
    __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct OzSum {
    __device__ oz_i64 operator()(oz_i64 a, oz_i64 b) const { return a + b; }
};

// f(bits) for the entries h = threadIdx.x + j blockDim.x < width of a row, their loads
// issued OZ_STATS_LOADS at a time (one load per warp in flight left the kernel at a third
// of the memory bandwidth); zero bits past the end, which every statistic skips.
#ifndef OZ_STATS_LOADS
#define OZ_STATS_LOADS 4
#endif
template <typename F>
__device__ __forceinline__ void oz_each_entry(const oz_u64* __restrict__ xr, long long width,
                                              F f) {
    const long long stride = blockDim.x;
    for (long long h0 = threadIdx.x; h0 < width; h0 += OZ_STATS_LOADS * stride) {
        oz_u64 v[OZ_STATS_LOADS];
#pragma unroll
        for (int u = 0; u < OZ_STATS_LOADS; ++u) {
            const long long h = h0 + u * stride;
            v[u] = h < width ? xr[h] : 0ULL;
        }
#pragma unroll
        for (int u = 0; u < OZ_STATS_LOADS; ++u) f(v[u]);
    }
}

// Per-row statistics of one block (a complex row is 2k doubles: both parts count):
// max_exp: largest frexp exponent of a nonzero entry (OZ_ZERO_ROW_EXP if none);
// sumsq: sum of ceil(c*c*2**max(2(e-E)+F, MIN)) with c = ceil(128|f|) (fast mode);
// shift (where not null, with sumsq): the row's fast-mode shift for the CRT budget
// `budget` (oz_fast_shift_of, as oz_row_rule forms it);
// counts[0], counts[1]: NaN and Inf entries of the whole operand.
// All of it on the doubles' bits with integer instructions (oz_frexp_bound, oz_sumsq_term in
// common/ozaki_common.cuh): the same integers as frexp/ceil/ldexp in float64
// (ozfft/engines/numpy/scaling.py). `each(f)` calls f(bits) for this thread's entries of
// the row (twice: the exponent first, then the sum of squares relative to it).
struct OzRowShared {
    int max_part[32];
    oz_i64 sum_part[32];
    int row_max;
};
template <typename Each>
__device__ __forceinline__ void oz_row_stats_of(Each each, long long row, int need_sumsq,
                                                int* __restrict__ max_exp,
                                                long long* __restrict__ sumsq,
                                                int* __restrict__ shift, oz_i64 budget,
                                                unsigned long long* __restrict__ counts,
                                                OzRowShared& sh) {
    constexpr oz_u64 abs_mask = 0x7fffffffffffffffULL, inf_bits = 0x7ff0000000000000ULL;
    int local = OZ_ZERO_ROW_EXP;
    unsigned nans = 0, infs = 0;
    each([&](oz_u64 bits) {
        const oz_u64 mag = bits & abs_mask;
        if (mag >= inf_bits) {
            nans += mag != inf_bits;
            infs += mag == inf_bits;
        } else if (mag != 0) {
            int e, c;
            oz_frexp_bound(mag, e, c);
            local = e > local ? e : local;
        }
    });
    if (nans) atomicAdd(&counts[0], (unsigned long long)nans);
    if (infs) atomicAdd(&counts[1], (unsigned long long)infs);
    int row_max = oz_block_reduce(local, OzMax(), (int)OZ_ZERO_ROW_EXP, sh.max_part);
    if (threadIdx.x == 0) {
        max_exp[row] = row_max;
        sh.row_max = row_max;
    }
    __syncthreads();
    row_max = sh.row_max;
    if (need_sumsq) {
        oz_i64 acc = 0;
        each([&](oz_u64 bits) {
            const oz_u64 mag = bits & abs_mask;
            if (mag != 0 && mag < inf_bits) acc += oz_sumsq_term(mag, row_max);
        });
        oz_i64 total = oz_block_reduce(acc, OzSum(), (oz_i64)0, sh.sum_part);
        if (threadIdx.x == 0) {
            sumsq[row] = total;
            if (shift != nullptr) shift[row] = (int)oz_fast_shift_of(row_max, total, budget);
        }
    }
    __syncthreads();
}

// The entries of this thread in a row streamed from memory (each call reads them again).
struct OzStreamedRow {
    const oz_u64* row;
    long long width;
    template <typename F>
    __device__ __forceinline__ void operator()(F f) const {
        oz_each_entry(row, width, f);
    }
};

// The statistics kernels' parameters: `rows` rows of `width` doubles, the first `rows_a` at
// x, the rest at x_b (two operands in one launch: A's rows, then Bt's), and the outputs, row
// r's at index r; counts: NaN and Inf of x's rows, then of x_b's; shift: null, or the rows'
// fast-mode shifts for the CRT budget `budget` (with need_sumsq).
#define OZ_ROW_STATS_PARAMS                                                                  \
    const double *__restrict__ x, const double *__restrict__ x_b, long long rows,            \
        long long rows_a, long long width, int need_sumsq, oz_i64 budget,                    \
        int *__restrict__ max_exp, long long *__restrict__ sumsq, int *__restrict__ shift,  \
        unsigned long long *__restrict__ counts

// Row r's doubles (x's rows, then x_b's) and its operand's NaN and Inf counts.
__device__ __forceinline__ const oz_u64* oz_stats_row(const double* x, const double* x_b,
                                                      long long row, long long rows_a,
                                                      long long width,
                                                      unsigned long long*& counts) {
    if (row < rows_a) return reinterpret_cast<const oz_u64*>(x) + row * width;
    counts += 2;
    return reinterpret_cast<const oz_u64*>(x_b) + (row - rows_a) * width;
}

// One block per row at a time (grid-stride over rows), the row streamed twice: its loads
// issued OZ_STATS_LOADS at a time, the second pass finding the row in L2.
extern "C" __global__ void __launch_bounds__(1024, 2) oz_row_stats(OZ_ROW_STATS_PARAMS) {
    __shared__ OzRowShared sh;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        unsigned long long* row_counts = counts;
        const oz_u64* xr = oz_stats_row(x, x_b, row, rows_a, width, row_counts);
        oz_row_stats_of(OzStreamedRow{xr, width}, row, need_sumsq, max_exp, sumsq, shift,
                        budget, row_counts, sh);
    }
}

#ifndef OZ_STATS_CACHED
#error "OZ_STATS_CACHED: values per thread (ozfft/engines/cuda/constants.py, STATS_CACHED)"
#endif
// The entries of this thread in a row, held in registers.
struct OzCachedRow {
    const oz_u64 (&v)[OZ_STATS_CACHED];
    template <typename F>
    __device__ __forceinline__ void operator()(F f) const {
#pragma unroll
        for (int u = 0; u < OZ_STATS_CACHED; ++u) f(v[u]);
    }
};

// Rows of at most OZ_STATS_CACHED * blockDim.x doubles held in registers: each thread
// issues all its loads of a row at once and both statistics read the registers, so the
// row crosses the memory system once, in one round trip (one block of 1024 threads per SM).
extern "C" __global__ void __launch_bounds__(1024, 1) oz_row_stats_cached(OZ_ROW_STATS_PARAMS) {
    __shared__ OzRowShared sh;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        unsigned long long* row_counts = counts;
        const oz_u64* xr = oz_stats_row(x, x_b, row, rows_a, width, row_counts);
        oz_u64 v[OZ_STATS_CACHED];
#pragma unroll
        for (int u = 0; u < OZ_STATS_CACHED; ++u) {
            const long long h = threadIdx.x + (long long)u * blockDim.x;
            v[u] = h < width ? xr[h] : 0ULL;  // zero bits: skipped by every statistic
        }
        oz_row_stats_of(OzCachedRow{v}, row, need_sumsq, max_exp, sumsq, shift, budget,
                        row_counts, sh);
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

// Row rules of the fast-mode statistics, one launch where their array form takes ~20 small
// ones (common/ozaki_common.cuh): rule 0, the shifts of `rows` rows for `counts` CRT
// budgets at once, out[c rows + i] = oz_fast_shift_of(E_i, S_i, arg[c]); rule 1, the 1-norm
// exponents, out[i] = oz_norm1_exponent_of(E_i, S_i, arg[0]) (arg[0]: bits of the terms).
// (int32 in and out: shifts and exponents stay far below 2**31 in magnitude.)
extern "C" __global__ void oz_row_rule(const int* __restrict__ max_exp,
                                       const oz_i64* __restrict__ sumsq, long long rows,
                                       const oz_i64* __restrict__ arg, int counts, int rule,
                                       int* __restrict__ out) {
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < rows * counts;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx % rows;
        const oz_i64 a = arg[idx / rows];
        out[idx] = (int)(rule == 0 ? oz_fast_shift_of(max_exp[i], sumsq[i], a)
                                   : oz_norm1_exponent_of(max_exp[i], sumsq[i], a));
    }
}
