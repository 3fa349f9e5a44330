// Host build of the kernels' shared device math (kernels/common/ozaki_common.cuh), so
// that the CPU test suite can check it against the NumPy engine without a GPU.
// Built by tests/test_kernel_math.py with g++, the kernels folder as include path (as
// for NVRTC) and a generated macro prologue.
#include <math.h>
#include <stdint.h>

#define __device__
#define __forceinline__ inline
#define __constant__ static const
#define __clz(x) __builtin_clz(x)
#define __clzll(x) __builtin_clzll(x)
#define __funnelshift_r(lo, hi, s) \
    ((unsigned)(((((unsigned long long)(hi)) << 32) | (lo)) >> ((s) & 31u)))

// byte n of the result: byte (s >> 4 n) & 7 of the pair (y:x) (the forms the kernels use)
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const unsigned long long pair = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int n = 0; n < 4; ++n) r |= (unsigned)((pair >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
    return r;
}

// __viaddmin_u16x2(a, b, c): per 16-bit lane min((a + b) mod 2**16, c) (PTX add.u16x2 wraps)
static inline unsigned __viaddmin_u16x2(unsigned a, unsigned b, unsigned c) {
    unsigned r = 0;
    for (int h = 0; h < 32; h += 16) {
        const unsigned sum = ((a >> h) + (b >> h)) & 0xffffu, cap = (c >> h) & 0xffffu;
        r |= (sum < cap ? sum : cap) << h;
    }
    return r;
}

// __dp4a(a, b, c) on unsigned words: c + the four products of their bytes
static inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
    for (int n = 0; n < 32; n += 8) c += ((a >> n) & 0xffu) * ((b >> n) & 0xffu);
    return c;
}

#include "common/ozaki_common.cuh"
#include "gemm/diagonal_carry.cuh"
#include "gemm/phase_b_bytes.cuh"

// kernels/gemm/diagonal_carry.cuh's bytes of `diagonals` INT32 diagonal sums per value
// (sums: count x diagonals), as base-2**31 digit sums (x: count x digits)
template <int diagonals>
static void carried_sums(const int* sums, long count, long long* x) {
    constexpr int digits = 8 * (diagonals - 1) / 31 + 1;
    for (long i = 0; i < count; ++i) {
        int acc = 0;
        oz_u32 w[OZ_CARRY_WORDS(diagonals)];
        for (int d = 0; d < diagonals; ++d) {
            acc += sums[i * diagonals + d];
            oz_carry_byte(d, acc, w);
        }
        oz_i64 xs[digits];
        oz_carried_digit_sums<diagonals>(w, acc, xs);
        for (int l = 0; l < digits; ++l) x[i * digits + l] = xs[l];
    }
}

extern "C" {

// carried_sums for the diagonals of 2 .. 9 slices (3, 5, .., 17); 0 where not built
int oz_host_carried_sums(const int* sums, long count, int diagonals, long long* x) {
    switch (diagonals) {
        case 3: carried_sums<3>(sums, count, x); return 1;
        case 5: carried_sums<5>(sums, count, x); return 1;
        case 7: carried_sums<7>(sums, count, x); return 1;
        case 9: carried_sums<9>(sums, count, x); return 1;
        case 11: carried_sums<11>(sums, count, x); return 1;
        case 13: carried_sums<13>(sums, count, x); return 1;
        case 15: carried_sums<15>(sums, count, x); return 1;
        case 17: carried_sums<17>(sums, count, x); return 1;
        default: return 0;
    }
}

// kernels/gemm/scaling.cu's row statistics of finite rows (rows x width doubles), from
// the same per-entry integer helpers
void oz_host_row_stats(const double* x, long rows, long width, int* max_exp, long long* sumsq) {
    for (long row = 0; row < rows; ++row) {
        const double* xr = x + row * width;
        int top = OZ_ZERO_ROW_EXP;
        for (long h = 0; h < width; ++h) {
            oz_u64 mag;
            __builtin_memcpy(&mag, xr + h, sizeof mag);
            mag &= 0x7fffffffffffffffULL;
            int e, c;
            if (mag != 0) oz_frexp_bound(mag, e, c);
            if (mag != 0 && e > top) top = e;
        }
        oz_i64 acc = 0;
        for (long h = 0; h < width; ++h) {
            oz_u64 mag;
            __builtin_memcpy(&mag, xr + h, sizeof mag);
            mag &= 0x7fffffffffffffffULL;
            if (mag != 0) acc += oz_sumsq_term(mag, top);
        }
        max_exp[row] = top;
        sumsq[row] = acc;
    }
}

// x with x = t_i (mod p_i), |x| < P/2, times 2**shift, rounded (t: any INT32 per modulus)
void oz_host_crt_round(const int* t, const int* shift, double* out, long n, int binary32) {
    for (long e = 0; e < n; ++e) {
        int v[OZ_NUM_MODULI];
        for (int i = 0; i < OZ_NUM_MODULI; ++i) v[i] = t[e * OZ_NUM_MODULI + i];
        out[e] = binary32 ? oz_crt_round<24, -126, 127>(v, shift[e])
                          : oz_crt_round<53, -1022, 1023>(v, shift[e]);
    }
}

// A complex entry from its products' INT32 sums t[e][l][k] (k < nprod), as Phase B's
// oz_reconstruct_complex combines them (binary64)
void oz_host_crt_complex(const int* t, int nprod, const int* shift, double* re, double* im,
                         long n) {
    for (long e = 0; e < n; ++e) {
        oz_i64 acc_re[OZ_DIGITS], acc_im[OZ_DIGITS];
        oz_crt_clear(acc_re);
        oz_crt_clear(acc_im);
        for (int l = 0; l < OZ_NUM_MODULI; ++l)
            oz_crt_add_complex(acc_re, acc_im, t + (e * OZ_NUM_MODULI + l) * nprod, 1, nprod, l);
        re[e] = oz_crt_finish<53, -1022, 1023>(acc_re, shift[e]);
        im[e] = oz_crt_finish<53, -1022, 1023>(acc_im, shift[e]);
    }
}

// kernels/gemm/scaling.cu's fast-mode shift of each row (oz_fast_shift_of)
void oz_host_fast_shift(const long long* max_exp, const long long* sumsq, long long budget,
                        long long* out, long n) {
    for (long e = 0; e < n; ++e) out[e] = oz_fast_shift_of(max_exp[e], sumsq[e], budget);
}

// The word forms of the statistics' per-entry integers (normal or zero x): each x's
// term (oz_sumsq_term_less_one + 1) for row_max[e] and oz_floor_scaled_top26 for t[e]
void oz_host_normal_words(const double* x, const int* row_max, const int* t, unsigned* term,
                          unsigned* scaled, long n) {
    for (long e = 0; e < n; ++e) {
        oz_u64 mag;
        __builtin_memcpy(&mag, x + e, sizeof mag);
        mag &= 0x7fffffffffffffffULL;
        const oz_u32 hi = (oz_u32)(mag >> 32), lo = (oz_u32)mag;
        term[e] = hi != 0u ? oz_sumsq_term_less_one(hi, lo, row_max[e]) + 1u : 0u;
        scaled[e] = oz_floor_scaled_top26(oz_mantissa_top26(hi, lo), hi, t[e]);
    }
}

// The general forms: oz_sumsq_term (0 for x = 0) and oz_floor_scaled
void oz_host_general_words(const double* x, const int* row_max, const int* t,
                           long long* term, unsigned* scaled, long n) {
    for (long e = 0; e < n; ++e) {
        oz_u64 mag;
        __builtin_memcpy(&mag, x + e, sizeof mag);
        mag &= 0x7fffffffffffffffULL;
        term[e] = mag != 0 ? oz_sumsq_term(mag, row_max[e]) : 0;
        scaled[e] = oz_floor_scaled(mag, t[e]);
    }
}

// floor(|x| 2**t) of each x from its bits (oz_floor_scaled: the probe's g-bit magnitudes)
void oz_host_floor_scaled(const double* x, const int* t, unsigned* out, long n) {
    for (long e = 0; e < n; ++e) {
        oz_u64 mag;
        __builtin_memcpy(&mag, x + e, sizeof mag);
        out[e] = oz_floor_scaled(mag & 0x7fffffffffffffffULL, t[e]);
    }
}

// the 1-norm exponent of each row (oz_norm1_exponent_of)
void oz_host_norm1_exponent(const long long* max_exp, const long long* sumsq,
                            long long terms_bits, long long* out, long n) {
    for (long e = 0; e < n; ++e) out[e] = oz_norm1_exponent_of(max_exp[e], sumsq[e], terms_bits);
}

// residues of the scaled integers from three 24-bit digits (any modulus up to 2**15)
void oz_host_residues(const double* x, const int* shift, int* out, long n) {
    for (long e = 0; e < n; ++e) {
        OzDigits24 d;
        d.set(x[e], shift[e]);
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_residue(d, i);
    }
}

#ifdef OZ_POW40
// the same from the two-digit split (INT8 moduli: kernels/gemm/residues.cu)
void oz_host_residues40(const double* x, const int* shift, int* out, long n) {
    for (long e = 0; e < n; ++e) {
        OzSplit40 d;
        d.set(x[e], shift[e]);
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_residue(d, i);
    }
}
#endif

#ifdef OZ_GAUSSIAN
// the Gaussian planes rmod(re +- j im) of complex entries (x: re, im interleaved)
void oz_host_gaussian_residues(const double* x, const int* shift, int* plus, int* minus,
                               long n) {
    for (long e = 0; e < n; ++e) {
        OzDigits24 re, im;
        re.set(x[2 * e], shift[e]);
        im.set(x[2 * e + 1], shift[e]);
        for (int i = 0; i < OZ_NUM_MODULI; ++i)
            oz_gaussian_residues(re, im, i, plus[e * OZ_NUM_MODULI + i],
                                 minus[e * OZ_NUM_MODULI + i]);
    }
}

#endif

void oz_host_mod_nonneg(const int* t, uint32_t* out, long n) {
    for (long e = 0; e < n; ++e)
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_mod_nonneg(t[e], oz_moduli[i]);
}

void oz_host_mod_nonneg_small(const int* t, uint32_t* out, long n) {
    for (long e = 0; e < n; ++e)
        for (int i = 0; i < OZ_NUM_MODULI; ++i)
            out[e * OZ_NUM_MODULI + i] = oz_mod_nonneg_small(t[e], oz_moduli[i]);
}

// kernels/gemm/phase_b_bytes.cuh: oz_pb_gaussian_bytes of n pairs of plane words (the
// modulus of pair i: p[i])
void oz_host_gaussian_bytes(const unsigned* w1, const unsigned* w2, const int* p, long n,
                            unsigned* re, unsigned* im) {
    for (long i = 0; i < n; ++i) oz_pb_gaussian_bytes(w1[i], w2[i], p[i], re[i], im[i]);
}

// oz_pb_transpose of n groups of four words
void oz_host_pb_transpose(const unsigned* w, long n, unsigned* q) {
    for (long i = 0; i < n; ++i) {
        const oz_u32 in[4] = {w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]};
        oz_u32 out[4];
        oz_pb_transpose(in, out);
        for (int e = 0; e < 4; ++e) q[4 * i + e] = out[e];
    }
}

#ifdef OZ_WEIGHT_BYTES
// the digit sums of four outputs as Phase B's dp4a kernels form them: q[g][e] the residues
// of moduli 4g .. 4g+3 of output e (oz_pb_transpose's words), oz_pb_dp4a_sums on the
// weights' quads (table 0: a real system's, or Re's on a Gaussian one; 1: Im's), then
// oz_pb_fold; acc: 4 x OZ_DIGITS
int oz_host_pb_digit_sums(const unsigned* words, int table, long long* acc) {
    oz_u32 q[OZ_QUADS][4];
    for (int g = 0; g < OZ_QUADS; ++g)
        for (int e = 0; e < 4; ++e) q[g][e] = words[4 * g + e];
#ifdef OZ_GAUSSIAN
    const auto& quads = table ? oz_weight_im_quads : oz_weight_re_quads;
#else
    if (table) return 0;
    const auto& quads = oz_weight_quads;
#endif
    for (int e = 0; e < 4; e += OZ_PB_DP4A_PER_WEIGHT) {
        oz_u32 s[OZ_PB_DP4A_PER_WEIGHT][OZ_WEIGHT_BYTES];
        oz_pb_dp4a_sums(q, e, quads, s);
        for (int f = 0; f < OZ_PB_DP4A_PER_WEIGHT; ++f) {
            oz_i64 digits[OZ_DIGITS];
            oz_crt_clear(digits);
            oz_pb_fold(digits, s[f]);
            for (int d = 0; d < OZ_DIGITS; ++d) acc[(e + f) * OZ_DIGITS + d] = digits[d];
        }
    }
    return 1;
}
#endif
}
