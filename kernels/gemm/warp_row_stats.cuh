// Row statistics of short rows by one warp (gemm/small_product.cu, gemm/plan_probe.cu): the
// integers of gemm/scaling.cu's oz_row_stats_of (the largest frexp exponent, then the
// fast-mode sum of squares relative to it) for rows of at most 32 V doubles, R rows at a
// time. Needs the scaling macros (OZ_BOUND_MANTISSA_BITS, ...; common/ozaki_common.cuh).
#pragma once
#include "common/ozaki_common.cuh"

// This lane's share of the fast-mode sums of squares of R rows (oz_sumsq_term; zero,
// Inf and NaN entries dropped), all_normal: no entry is subnormal (no clz path).
template <int R, int V, bool all_normal>
__device__ __forceinline__ void oz_warp_sumsq_terms(const oz_u64 (&mag)[R][V],
                                                    const int (&row_max)[R],
                                                    oz_i64 (&sumsq)[R]) {
    constexpr oz_u64 inf_bits = 0x7ff0000000000000ULL;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        sumsq[r] = 0;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            int e, c;
            if constexpr (all_normal) {
                oz_frexp_bound_normal(mag[r][v], e, c);
            } else {
                oz_frexp_bound(mag[r][v], e, c);
            }
            const oz_i64 term = oz_sumsq_term_of(e, c, row_max[r]);
            sumsq[r] += mag[r][v] != 0 && mag[r][v] < inf_bits ? term : 0;
        }
    }
}

// This lane's entries h = lane + 32 v (v < V) of R rows of `width` (<= 32 V) doubles, as
// magnitudes (the bits without the sign; zero past the row's end and for a null row).
// All R V loads are issued before the first use. Where every row exists and is 32 V long
// (the common case, warp-uniform) they take no per-entry bounds: one branch around the
// whole unrolled block rather than a test per entry.
template <int R, int V>
__device__ __forceinline__ void oz_warp_load_magnitudes(const double* const (&rows)[R],
                                                        int width, oz_u64 (&mag)[R][V]) {
    constexpr oz_u64 abs_mask = 0x7fffffffffffffffULL;
    const int lane = threadIdx.x % 32;
    bool whole = width == 32 * V;
#pragma unroll
    for (int r = 0; r < R; ++r) whole = whole && rows[r] != nullptr;
    if (whole) {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v)
                mag[r][v] = reinterpret_cast<const oz_u64*>(rows[r])[lane + 32 * v] & abs_mask;
        return;
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const int h = lane + 32 * v;
            mag[r][v] = rows[r] != nullptr && h < width
                            ? reinterpret_cast<const oz_u64*>(rows[r])[h] & abs_mask
                            : 0ULL;
        }
}

// oz_warp_load_magnitudes for R evenly spaced rows: row r at first + r * stride for r <
// valid (null past them). A whole tile (R rows of 32 V doubles) loads from the one base
// pointer: R row pointers in registers made the probe's complex rows kernel spill at its
// 80-register cap and take twice as long (docs/perf-notes.md, "The probe's rows kernel
// after the review mend").
template <int R, int V>
__device__ __forceinline__ void oz_warp_load_strided(const double* first, int stride,
                                                     int valid, int width,
                                                     oz_u64 (&mag)[R][V]) {
    if (valid >= R && width == 32 * V) {
        const oz_u64* bits = reinterpret_cast<const oz_u64*>(first) + threadIdx.x % 32;
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v)
                mag[r][v] = bits[r * stride + 32 * v] & 0x7fffffffffffffffULL;
        return;
    }
    const double* rows[R];
#pragma unroll
    for (int r = 0; r < R; ++r) rows[r] = r < valid ? first + r * stride : nullptr;
    oz_warp_load_magnitudes<R, V>(rows, width, mag);
}

// The warp's sums of R row partials (R a power of two up to 32), row r's in lane r (lanes
// from R on: some row's): a reduce-scatter first (at offsets 16, 8, .. each lane keeps the
// upper or lower half of the rows it holds, by its offset bit, and adds its partner's
// copy of them), then the one row left over the remaining offsets, then each row brought
// from the first lane holding it (lane r << (5 - log2 R)). For R = 4: 14 shuffles of the
// 64-bit values against the 40 of an all-reduce of every row.
template <int R>
__device__ __forceinline__ oz_i64 oz_warp_rows_sum(oz_i64 (&part)[R]) {
    static_assert(R >= 1 && R <= 32 && (R & (R - 1)) == 0, "R a power of two up to 32");
    constexpr int log2_rows = R >= 16 ? 4 + (R > 16) : R >= 4 ? 2 + (R > 4) : R > 1;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int n = R, off = 16; n > 1; n >>= 1, off >>= 1) {
        const bool upper = (lane & off) != 0;
#pragma unroll
        for (int i = 0; i < n / 2; ++i) {
            const oz_i64 send = upper ? part[i] : part[i + n / 2];
            const oz_i64 keep = upper ? part[i + n / 2] : part[i];
            part[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
        }
    }
    oz_i64 sum = part[0];
#pragma unroll
    for (int off = 16 >> log2_rows; off > 0; off >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    return __shfl_sync(0xffffffffu, sum, (lane % R) << (5 - log2_rows));
}

// The statistics of R rows held as magnitudes by a warp (oz_warp_load_magnitudes): in every
// lane row_max[r] (the largest exponent, OZ_ZERO_ROW_EXP for a row without a finite
// nonzero entry), in lane r < R row r's sum of squares (lane_sumsq; oz_warp_rows_sum). NaN
// and Inf entries are counted into nans, infs (this lane's share). Returns true where the
// warp's entries are all zero or normal (warp-uniform): then the statistics come from the
// words of the bits (the exponent and top mantissa bits in the high word) and
// oz_sumsq_term_less_one, the same integers without 64-bit compares or branches.
template <int R, int V>
__device__ __forceinline__ bool oz_warp_row_stats_of(const oz_u64 (&mag)[R][V],
                                                     int (&row_max)[R], oz_i64& lane_sumsq,
                                                     unsigned& nans, unsigned& infs) {
    oz_i64 sumsq[R];  // this lane's partial sums
    // one pass over the high words: each row's largest (NaN and Inf from 0x7ff00000 on)
    // and any subnormal (a nonzero entry below 0x00100000 in its high word)
    oz_u32 top[R], hmax = 0u, subnormal = 0u;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        top[r] = 0u;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const oz_u32 hi = (oz_u32)(mag[r][v] >> 32);
            top[r] = hi > top[r] ? hi : top[r];
            subnormal |= hi < 0x100000u ? hi | (oz_u32)mag[r][v] : 0u;
        }
        hmax = top[r] > hmax ? top[r] : hmax;
    }
    if (!__any_sync(0xffffffffu, hmax >= 0x7ff00000u || subnormal != 0u)) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
                const oz_u32 other = __shfl_xor_sync(0xffffffffu, top[r], off);
                top[r] = other > top[r] ? other : top[r];
            }
            row_max[r] = top[r] != 0u ? (int)(top[r] >> 20) - 1022 : OZ_ZERO_ROW_EXP;
            // the terms less one (below 2**30: V <= 4 fit 32 bits) and the count of
            // nonzero entries; zeros masked, without branches
            static_assert(V <= 4, "the lane's terms less one fit 32 bits");
            oz_u32 less_one = 0u, nonzero = 0u;
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const oz_u32 hi = (oz_u32)(mag[r][v] >> 32), lo = (oz_u32)mag[r][v];
                const oz_u32 term = oz_sumsq_term_less_one(hi, lo, row_max[r]);
                less_one += hi != 0u ? term : 0u;
                nonzero += hi != 0u;
            }
            sumsq[r] = (oz_i64)less_one + nonzero;
        }
        lane_sumsq = oz_warp_rows_sum<R>(sumsq);
        return true;
    }
    constexpr oz_u64 inf_bits = 0x7ff0000000000000ULL;
    // NaN and Inf: counted only where the warp holds any (one vote otherwise); subnormals
    // take the general oz_frexp_bound only where the warp holds any
    constexpr oz_u64 min_normal = 0x0010000000000000ULL;
    bool any_bad = false, any_subnormal = false;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int v = 0; v < V; ++v) {
            any_bad |= mag[r][v] >= inf_bits;
            any_subnormal |= mag[r][v] != 0 && mag[r][v] < min_normal;
        }
    const bool all_normal = !__any_sync(0xffffffffu, any_subnormal);
    if (__any_sync(0xffffffffu, any_bad)) {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) {
                nans += mag[r][v] > inf_bits;
                infs += mag[r][v] == inf_bits;
            }
    }
    // the largest exponent: frexp's exponent grows with the magnitude, so it is that of the
    // lane's largest finite magnitude (one oz_frexp_bound per lane and row), then the warp's
#pragma unroll
    for (int r = 0; r < R; ++r) {
        oz_u64 top = 0;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const oz_u64 finite = mag[r][v] < inf_bits ? mag[r][v] : 0ULL;
            top = finite > top ? finite : top;
        }
        row_max[r] = OZ_ZERO_ROW_EXP;
        if (top != 0) {
            int c;
            oz_frexp_bound(top, row_max[r], c);
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int other = __shfl_xor_sync(0xffffffffu, row_max[r], off);
            row_max[r] = other > row_max[r] ? other : row_max[r];
        }
    if (all_normal) {
        oz_warp_sumsq_terms<R, V, true>(mag, row_max, sumsq);
    } else {
        oz_warp_sumsq_terms<R, V, false>(mag, row_max, sumsq);
    }
    lane_sumsq = oz_warp_rows_sum<R>(sumsq);
    return false;
}

// The statistics of R rows (oz_warp_row_stats_of) read by the warp: rows[r] is row r's
// first double (null past the end). Both passes of the statistics read the registers (a
// row at a time left the warp waiting on each load twice).
template <int R, int V>
__device__ __forceinline__ void oz_warp_row_stats(const double* const (&rows)[R], int width,
                                                  int (&row_max)[R], oz_i64& lane_sumsq,
                                                  unsigned& nans, unsigned& infs) {
    oz_u64 mag[R][V];
    oz_warp_load_magnitudes<R, V>(rows, width, mag);
    oz_warp_row_stats_of<R, V>(mag, row_max, lane_sumsq, nans, infs);
}
