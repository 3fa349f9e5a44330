// Row statistics of short rows by one warp (gemm/small_product.cu, gemm/plan_probe.cu): the
// integers of gemm/scaling.cu's oz_row_stats_of (the largest frexp exponent, then the
// fast-mode sum of squares relative to it) for rows of at most 32 V doubles, R rows at a
// time. Needs the scaling macros (OZ_BOUND_MANTISSA_BITS, ...; common/ozaki_common.cuh).
#pragma once
#include "common/ozaki_common.cuh"

// The statistics of R rows of `width` (<= 32 V) doubles, in every lane: row_max[r] (the
// largest exponent, OZ_ZERO_ROW_EXP for a row without a finite nonzero entry) and
// sumsq[r]. All R V loads are issued before the first use and both passes read the
// registers (a row at a time left the warp waiting on each load twice). rows[r]: row r's
// first double (null past the end). NaN and Inf entries are counted into nans, infs (this
// lane's share).
template <int R, int V>
__device__ __forceinline__ void oz_warp_row_stats(const double* const (&rows)[R], int width,
                                                  int (&row_max)[R], oz_i64 (&sumsq)[R],
                                                  unsigned& nans, unsigned& infs) {
    constexpr oz_u64 abs_mask = 0x7fffffffffffffffULL, inf_bits = 0x7ff0000000000000ULL;
    const int lane = threadIdx.x % 32;
    oz_u64 mag[R][V];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const int h = lane + 32 * v;
            mag[r][v] = rows[r] != nullptr && h < width
                            ? reinterpret_cast<const oz_u64*>(rows[r])[h] & abs_mask
                            : 0ULL;
        }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        row_max[r] = OZ_ZERO_ROW_EXP;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            if (mag[r][v] >= inf_bits) {
                nans += mag[r][v] != inf_bits;
                infs += mag[r][v] == inf_bits;
            } else if (mag[r][v] != 0) {
                int e, c;
                oz_frexp_bound(mag[r][v], e, c);
                row_max[r] = e > row_max[r] ? e : row_max[r];
            }
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int other = __shfl_xor_sync(0xffffffffu, row_max[r], off);
            row_max[r] = other > row_max[r] ? other : row_max[r];
        }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        sumsq[r] = 0;
#pragma unroll
        for (int v = 0; v < V; ++v)
            if (mag[r][v] != 0 && mag[r][v] < inf_bits)
                sumsq[r] += oz_sumsq_term(mag[r][v], row_max[r]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int r = 0; r < R; ++r) sumsq[r] += __shfl_xor_sync(0xffffffffu, sumsq[r], off);
}
