// Shared device code of the Ozaki-II kernels: constants, exact residues, Kulisch
// limb arithmetic and one correct rounding. Every constant comes from a macro that
// ozfft generates from Python integers (ozfft/engines/cuda/constants.py).
#pragma once

#ifdef INFINITY
#define OZ_INF INFINITY
#else  // NVRTC has no <math.h> macros
#define OZ_INF __longlong_as_double(0x7ff0000000000000LL)
#endif

typedef unsigned int oz_u32;
typedef unsigned long long oz_u64;
typedef long long oz_i64;

#ifdef OZ_BOUND_MANTISSA_BITS
// ---- Scaling statistics (gemm/scaling.cu) --------------------------------------------
// frexp of a finite nonzero double from its bits, in integers: x = f 2**e with 1/2 <= |f|
// < 1, and c = ceil(2**OZ_BOUND_MANTISSA_BITS |f|) (subnormals normalized first).
// Normal numbers on the high 32-bit word (oz_frexp_bound_normal): the mantissa's top B
// bits lie there, and the rest only decides whether c rounds up.
static_assert(OZ_BOUND_MANTISSA_BITS <= 20, "c comes from the high word");
__device__ __forceinline__ void oz_frexp_bound_normal(oz_u64 bits, int& e, int& c) {
    constexpr int drop_hi = 53 - OZ_BOUND_MANTISSA_BITS - 32;  // |f| 2**B = mant / 2**drop
    const oz_u32 hi = (oz_u32)(bits >> 32);
    const oz_u32 top = (hi & 0xfffffu) | 0x100000u;  // mant / 2**32: 2**52 at bit 20
    const oz_u32 rest = (top & ((1u << drop_hi) - 1u)) | (oz_u32)bits;
    e = (int)(hi >> 20) - 1022;  // the sign is off
    c = (int)(top >> drop_hi) + (rest != 0u);
}
__device__ __forceinline__ void oz_frexp_bound(oz_u64 bits, int& e, int& c) {
    if ((bits >> 52) != 0) {
        oz_frexp_bound_normal(bits, e, c);
    } else {  // subnormal: x = mant 2**-1074, mant != 0
        constexpr int drop = 53 - OZ_BOUND_MANTISSA_BITS;
        oz_u64 mant = bits & 0xfffffffffffffULL;
        const int lead = __clzll((long long)mant) - 11;  // shift the top bit to bit 52
        mant <<= lead;
        e = -1021 - lead;
        c = (int)((mant + ((1ULL << drop) - 1)) >> drop);
    }
}

// A finite nonzero entry's term of the fast-mode sum of squares in a row of exponent
// row_max, from its oz_frexp_bound (e, c): ceil(c**2 2**s), s = max(2 (e - row_max) + F,
// MIN) <= F, in exact 32-bit integers and without branches: c <= 2**B, so c**2 2**s <=
// 2**(2B + F) < 2**31, and every s <= -(2B + 1) (MIN among them) gives ceil(<= 1/2) = 1,
// which the right shift by min(-s, 2B + 1) gives as well.
static_assert(2 * OZ_BOUND_MANTISSA_BITS + OZ_FRACTION_BITS <= 30, "terms fit 31 bits");
static_assert(OZ_MIN_TERM_SHIFT <= -(2 * OZ_BOUND_MANTISSA_BITS + 1), "MIN gives 1 as well");
__device__ __forceinline__ oz_i64 oz_sumsq_term_of(int e, int c, int row_max) {
    const int s = 2 * (e - row_max) + OZ_FRACTION_BITS;
    const oz_u32 sq = (oz_u32)(c * c);
    int down = -s < 0 ? 0 : -s;
    down = down < 2 * OZ_BOUND_MANTISSA_BITS + 1 ? down : 2 * OZ_BOUND_MANTISSA_BITS + 1;
    const oz_u32 up = (sq + ((1u << down) - 1u)) >> down;
    return s >= 0 ? (oz_i64)(sq << s) : (oz_i64)up;
}
__device__ __forceinline__ oz_i64 oz_sumsq_term(oz_u64 mag, int row_max) {
    int e, c;
    oz_frexp_bound(mag, e, c);
    return oz_sumsq_term_of(e, c, row_max);
}

// oz_sumsq_term(mag, row_max) - 1 of a normal x (row_max at least its exponent) from the
// words of its bits (sign off), branch-free: the term is ceil(c**2 2**s), s = F - 2 d, d =
// row_max - e >= 0, that is ceil(X / 2**(2 d)) = ((X - 1) >> 2 d) + 1 with X = c**2 2**F
// <= 2**30 (c >= 2**(B - 1)): a shift past 2 B + F gives 1, as the clamp of
// oz_sumsq_term_of does. Below 2**30, so that four fit an unsigned 32-bit sum. Any x and
// row_max give some value without undefined shifts (callers mask what it does not apply to).
// (X's bound: the static_assert above oz_sumsq_term_of.)
__device__ __forceinline__ oz_u32 oz_sumsq_term_less_one(oz_u32 hi, oz_u32 lo, int row_max) {
    int e, c;
    oz_frexp_bound_normal(((oz_u64)hi << 32) | lo, e, c);
    const oz_u32 twice_d = (oz_u32)(2 * (row_max - e));  // huge where negative
    const oz_u32 x = ((oz_u32)(c * c) << OZ_FRACTION_BITS) - 1u;
    return x >> (twice_d < 31u ? twice_d : 31u);
}

// The fast-mode shift of a row (ozfft/ozaki/scaling.py, fast_shift) for the CRT budget L:
// floor((L - 1 + 2 OZ_BOUND_MANTISSA_BITS + OZ_FRACTION_BITS - 2 E - ceil_log2 S) / 2), 0
// for S = 0 (an all-zero row); ceil_log2 S = bitlen(S - 1) for S >= 1.
__device__ __forceinline__ oz_i64 oz_ceil_log2(oz_i64 v) {  // 0 for v <= 1
    return v > 1 ? 64 - __clzll(v - 1) : 0;
}
__device__ __forceinline__ oz_i64 oz_fast_shift_of(oz_i64 max_exp, oz_i64 sumsq, oz_i64 budget) {
    if (sumsq <= 0) return 0;
    const oz_i64 num = (budget - 1 + 2 * OZ_BOUND_MANTISSA_BITS + OZ_FRACTION_BITS) -
                       2 * max_exp - oz_ceil_log2(sumsq);
    return num >> 1;  // floor, also for negative num
}

// nb with ||row||_1 <= 2**nb from the fast-mode statistics (ozfft/ozaki/scaling.py,
// norm1_exponent_fast): ceil((terms_bits + ceil_log2 S) / 2) + E - (2 B + F) / 2.
__device__ __forceinline__ oz_i64 oz_norm1_exponent_of(oz_i64 max_exp, oz_i64 sumsq,
                                                       oz_i64 terms_bits) {
    const oz_i64 total = terms_bits + oz_ceil_log2(sumsq);
    return ((total + 1) >> 1) + max_exp - (2 * OZ_BOUND_MANTISSA_BITS + OZ_FRACTION_BITS) / 2;
}

// floor(|x| 2**t) for a finite x (mag: its bits without the sign) where the result is
// below 2**32 (the accuracy plan's g-bit magnitudes: |x| < 2**E, t = g - E, g <= 26), in
// integers: |x| = mant 2**(ex - 1075) with mant = 2**52 + frac for normal x (ex its
// exponent field), frac for subnormal x (ex = 1), so the result is mant shifted right by
// 1075 - ex - t (left where that is negative: small mantissas of subnormals). The same
// integer as floor(scalbn(|x|, t)): scalbn rounds only below 2**-1022, where both are 0.
__device__ __forceinline__ oz_u32 oz_floor_scaled(oz_u64 mag, int t) {
    const int field = (int)(mag >> 52);
    const oz_u64 mant = (mag & 0xfffffffffffffULL) | (field != 0 ? 1ULL << 52 : 0ULL);
    const int down = 1075 - (field != 0 ? field : 1) - t;
    if (down >= 64) return 0u;
    return (oz_u32)(down >= 0 ? mant >> down : mant << -down);
}

// oz_floor_scaled(mag, t) for x zero or normal where the right shift down = 1075 - ex - t
// is at least 27 (the probe: |x| < 2**E, t = g - E, g <= 26), from the words of mag: the
// mantissa's top 26 bits m26 = floor(mant 2**-27) (0 for x = 0; once per entry), shifted
// right by down - 27 (per row). Any t gives some value without undefined shifts (callers
// mask the entries it does not apply to).
__device__ __forceinline__ oz_u32 oz_mantissa_top26(oz_u32 hi, oz_u32 lo) {
    return hi != 0u ? __funnelshift_r(lo, (hi & 0xfffffu) | 0x100000u, 27u) : 0u;
}
__device__ __forceinline__ oz_u32 oz_floor_scaled_top26(oz_u32 m26, oz_u32 hi, int t) {
    const oz_u32 down = (oz_u32)(1048 - (int)(hi >> 20) - t);  // huge where negative
    return down < 32u ? m26 >> down : 0u;
}
#endif

#ifdef OZ_NUM_MODULI

// p_i (compile-time constants: `x % oz_moduli[i]` in unrolled loops becomes
// multiply-high code), 2**24 mod p_i, 2**48 mod p_i
__device__ constexpr int oz_moduli[OZ_NUM_MODULI] = {OZ_MODULI};
__constant__ double oz_pow24[OZ_NUM_MODULI] = {OZ_POW24};
__constant__ double oz_pow48[OZ_NUM_MODULI] = {OZ_POW48};
#ifdef OZ_POW40
// 2**40 mod p_i (INT8 moduli: oz_residue of OzSplit40), as a double and as an integer
__device__ constexpr double oz_pow40[OZ_NUM_MODULI] = {OZ_POW40};
__device__ constexpr int oz_pow40_int[OZ_NUM_MODULI] = {OZ_POW40};
#endif

#ifdef OZ_GAUSSIAN
// Gaussian systems (every modulus has j with j*j = -1 mod p): the symmetric root j, and
// 2**-1 and (2j)**-1 mod p in [0, p) (ozfft.ozaki.residue_system, "Gaussian").
__device__ constexpr int oz_gauss_root[OZ_NUM_MODULI] = {OZ_GAUSS_ROOT};
__device__ constexpr int oz_gauss_inv2[OZ_NUM_MODULI] = {OZ_GAUSS_INV2};
__device__ constexpr int oz_gauss_inv2j[OZ_NUM_MODULI] = {OZ_GAUSS_INV2J};
#endif

// Low 32 bits of a double's pattern: the integer k of (k + OZ_MAGIC) for |k| < 2**31.
__device__ __forceinline__ int oz_low_int(double x) {
#ifdef __CUDA_ARCH__
    return __double2loint(x);
#else
    unsigned long long bits;
    __builtin_memcpy(&bits, &x, sizeof bits);
    return (int)(unsigned)bits;
#endif
}

// 1.5 * 2**52: (x + OZ_MAGIC) - OZ_MAGIC is rint(x) (nearest-even) for |x| < 2**51, and
// the low word of (k + OZ_MAGIC) is the integer k -- no FRND/F2I conversions, which run
// at a quarter of the FP64 rate.
#define OZ_MAGIC 6755399441055744.0

// Symmetric residue of an integer-valued double |r| < 2**47: r - p*rint(r/p), exact:
// rint(r * fl(1/p)) is the nearest integer to r/p (its error, below |r/p| 2**-52 <
// 2**-5 / p, is under the distance 1/(2p) of r/p from a half-integer for odd p; exact for
// p = 256), and a fused r*(1/p) + MAGIC rounds to the same integer for the same reason.
__device__ __forceinline__ int oz_rmod(double r, int p) {
    double q = (r * (1.0 / (double)p) + OZ_MAGIC) - OZ_MAGIC;
    return oz_low_int((r - q * (double)p) + OZ_MAGIC);
}

// 2**e as a double, -1022 <= e <= 1023, from its bits.
__device__ __forceinline__ double oz_pow2(int e) {
    const oz_u64 bits = (oz_u64)(e + 1023) << 52;
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)bits);
#else
    double d;
    __builtin_memcpy(&d, &bits, sizeof d);
    return d;
#endif
}

// scalbn(v, e) for finite v, |e| <= 2044 (larger e clamped: the result overflows or is
// 0 either way), as two multiplications by normal powers of two: the first is exact
// whenever v is normal and the second rounds once, as scalbn does. Straight-line code
// (scalbn is a branchy library routine).
__device__ __forceinline__ double oz_scale2(double v, int e) {
    e = e > 2044 ? 2044 : (e < -2044 ? -2044 : e);
    const int half = e / 2;
    return v * oz_pow2(half) * oz_pow2(e - half);
}

// a' = trunc(2**shift x) for finite x with |2**shift x| < 2**1023: oz_scale2 rounds twice
// only where its first product underflows, and then the result is below 1 and truncates to
// 0, as trunc(scalbn(x, shift)) does. With OZ_NEAREST (the "nearest" rounding of
// ozfft/ozaki/scaling.py, scaled_integers): rint (ties to even) where |2**shift x| >=
// OZ_NEAREST_MIN (64).
__device__ __forceinline__ double oz_scaled_integer(double x, int shift) {
    const double y = oz_scale2(x, shift);
#ifdef OZ_NEAREST
    return fabs(y) >= OZ_NEAREST_MIN ? rint(y) : trunc(y);
#else
    return trunc(y);
#endif
}

// The exact digits of the scaled integer a' (oz_scaled_integer) that the residue kernels
// reduce; |a'| < 2**79 (the scaling's contract, docs/numerics.md step 2). Each kind sets
// itself from (x, shift) and is zero past the row's end.
// OzDigits24: a' = d2 2**48 + d1 2**24 + d0, each below 2**31 in magnitude, so that
//   d2 (2**48 mod m) + d1 (2**24 mod m) + d0 stays below 2**47 for moduli m <= 2**15
//   (FP8 systems; the Gaussian planes, which combine two parts).
// OzSplit40:  a' = hi 2**40 + lo, |hi| < 2**39 and |lo| < 2**40, with the low 32-bit words
//   of both: one FMA gives a congruent value below 2**47 for moduli <= 256 (oz_residue).
struct OzDigits24 {
    double d2, d1, d0;
    __device__ __forceinline__ void set(double x, int shift) {
        const double scaled = oz_scaled_integer(x, shift);
        d2 = trunc(scaled * 0x1p-48);
        const double rest = scaled - d2 * 0x1p48;
        d1 = trunc(rest * 0x1p-24);
        d0 = rest - d1 * 0x1p24;
    }
    __device__ __forceinline__ void clear() { d2 = d1 = d0 = 0.0; }
};

struct OzSplit40 {
    double hi, lo;
    oz_u32 hi32, lo32;  // hi and lo modulo 2**32
    __device__ __forceinline__ void set(double x, int shift) {
        const double scaled = oz_scaled_integer(x, shift);
        hi = trunc(scaled * 0x1p-40);
        lo = scaled - hi * 0x1p40;  // exact: both on the grid of scaled, |lo| < 2**40
        hi32 = (oz_u32)oz_low_int(hi + OZ_MAGIC);
        lo32 = (oz_u32)oz_low_int(lo + OZ_MAGIC);
    }
    __device__ __forceinline__ void clear() {
        hi = lo = 0.0;
        hi32 = lo32 = 0u;
    }
};

// An integer congruent to d2 2**48 + d1 2**24 + d0 modulo p_i, |.| < 2**39 for INT8
// moduli (2**47 for moduli up to 2**15): two exact FMAs (every partial sum is an integer
// below 2**53).
__device__ __forceinline__ double oz_congruent(const OzDigits24& d, int i) {
    return fma(d.d2, oz_pow48[i], fma(d.d1, oz_pow24[i], d.d0));
}

// The exact digits of the scaled integers of entries h0 .. h0 + 3 of a row (zero past k);
// complex rows interleave re and im (parts = 2), real rows leave im zero.
template <int parts, typename D>
__device__ __forceinline__ void oz_row_digits(const double* __restrict__ xr, long long h0,
                                              long long k, int shift, D (&re)[4], D (&im)[4]) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const long long h = h0 + e;
        re[e].clear();
        im[e].clear();
        if (h < k) {
            re[e].set(xr[h * parts], shift);
            if (parts == 2) im[e].set(xr[h * 2 + 1], shift);
        }
    }
}

// body(re, im, off) for every (row, 4 columns) quad of a rows x kp residue layout (kp % 4
// == 0): re, im the exact digits D of the scaled integers of the quad's entries (zero
// past k), off = row kp + h0 its offset in a plane. One flat grid-stride loop, so short
// rows (stacks of small matrices) keep every thread busy.
#ifdef __CUDACC__  // device code only (the host test build has no grid)
template <int parts, typename D, typename F>
__device__ __forceinline__ void oz_each_row_quad(const double* __restrict__ x, long long rows,
                                                 long long k, long long kp,
                                                 const int* __restrict__ shift, F body) {
    const long long quads = kp / 4;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < rows * quads;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long row = idx / quads, h0 = 4 * (idx % quads);
        D re[4], im[4];
        oz_row_digits<parts>(x + row * k * parts, h0, k, shift[row], re, im);
        body(re, im, row * kp + h0);
    }
}
#endif

// Symmetric residue modulo p_i of the digits' value (any modulus up to 2**15).
__device__ __forceinline__ int oz_residue(const OzDigits24& d, int i) {
    return oz_rmod(oz_congruent(d, i), oz_moduli[i]);
}

#ifdef OZ_POW40
// Symmetric residue modulo an INT8 modulus p_i (<= 256) of hi 2**40 + lo: r = hi (2**40 mod
// p_i) + lo is exact (|r| < 2**39 * 254 + 2**40 < 2**47), q = rint(r / p_i) is the low
// word of the fused r fl(1/p_i) + MAGIC (oz_rmod's argument), and r - q p_i is evaluated
// on the low 32-bit words, exact because it lies in [-p_i/2, p_i/2]. Two FP64 FMAs and
// two integer multiply-adds (oz_rmod of a congruent value: six FP64 operations).
__device__ __forceinline__ int oz_residue(const OzSplit40& d, int i) {
    const int p = oz_moduli[i];
    const double r = fma(d.hi, oz_pow40[i], d.lo);
    const oz_u32 q = (oz_u32)oz_low_int(fma(r, 1.0 / (double)p, OZ_MAGIC));
    return (int)(d.hi32 * (oz_u32)oz_pow40_int[i] + d.lo32 - q * (oz_u32)p);
}
#endif

// The digits a residue kernel splits a real entry into: two (OzSplit40, two FP64 FMAs per
// modulus) where every modulus is at most 256, else three (OzDigits24).
#ifdef OZ_POW40
typedef OzSplit40 OzEntryDigits;
#else
typedef OzDigits24 OzEntryDigits;
#endif

#ifdef OZ_GAUSSIAN
// The Gaussian planes of one complex entry modulo p_i, from the digits of its parts:
// rmod(R + j I) and rmod(R - j I), R and I its parts reduced in their digit weights only
// (|R + j I| < 2**39 * 121 < 2**47, exact for oz_rmod).
__device__ __forceinline__ void oz_gaussian_residues(const OzDigits24& re, const OzDigits24& im,
                                                     int i, int& plus, int& minus) {
    const double j = (double)oz_gauss_root[i];
    const double r = oz_congruent(re, i);
    const double m = oz_congruent(im, i);
    plus = oz_rmod(fma(j, m, r), oz_moduli[i]);
    minus = oz_rmod(fma(-j, m, r), oz_moduli[i]);
}
#endif

// t mod p in [0, p) (p a compile-time constant after unrolling).
__device__ __forceinline__ oz_u32 oz_mod_nonneg(int t, int p) {
    int r = t % p;
    return (oz_u32)(r < 0 ? r + p : r);
}

// oz_mod_nonneg for |t| < 2**30 (INT8 sums of short products: 64 terms of 2**14): t plus a
// multiple of p that makes it non-negative, reduced as an unsigned integer (a multiply-high,
// a shift and a multiply-add, without the sign fix-ups of the signed remainder).
__device__ __forceinline__ oz_u32 oz_mod_nonneg_small(int t, int p) {
    const oz_u32 lift = ((1u << 30) + (oz_u32)p - 1u) / (oz_u32)p * (oz_u32)p;  // >= 2**30
    return ((oz_u32)t + lift) % (oz_u32)p;
}


#ifdef OZ_DIGITS
// ---- CRT reconstruction (Phase B) -------------------------------------------------------
// x is the integer with |x| < P/2 and x = v_i (mod p_i) for given v_i. With the CRT weights
// W_i (W_i = 1 mod p_i, 0 mod p_j), X = sum_i W_i v_i = x (mod P) for any integers v_i, so
// a residue needs no reduction to [0, p_i): a partial one that bounds it suffices. X is
// summed exactly in OZ_DIGITS signed 64-bit accumulators, one per base-2**31 digit of the
// weights (each digit a signed 32-bit multiplier: one IMAD.WIDE per digit and residue);
// then q = round(X / P) from the top digits, x = X - q P (q may be off by one: an exact
// comparison with +-P/2, only where the top digits cannot decide), and one rounding.
// Compile-time tables, so that every digit of every weight is an immediate operand.
__device__ constexpr int oz_weight_digits[OZ_NUM_MODULI * OZ_DIGITS] = {OZ_WEIGHT_DIGITS};
__device__ constexpr int oz_p_digits[OZ_DIGITS] = {OZ_P_DIGITS};
__device__ constexpr int oz_pow16[OZ_NUM_MODULI] = {OZ_POW16};
#ifdef OZ_GAUSSIAN
// W_i 2**-1 and W_i (2j)**-1 mod P: Re = (T+ + T-) / 2 and Im = (T+ - T-) / (2j) modulo p_i
// folded into the weights, so the two products' sums enter the CRT sum unreduced.
__device__ constexpr int oz_weight_re_digits[OZ_NUM_MODULI * OZ_DIGITS] = {OZ_WEIGHT_RE_DIGITS};
__device__ constexpr int oz_weight_im_digits[OZ_NUM_MODULI * OZ_DIGITS] = {OZ_WEIGHT_IM_DIGITS};
#endif

#define OZ_DIGIT_MASK 0x7fffffffLL

// v = t (mod p_i) with |v| < 2**24 for any INT32 t (moduli <= 256: 2**15 * 256 + 2**16);
// larger moduli (FP8 systems, whose Phase A planes are already in [0, m)) reduce fully.
// With OZ_RAW_SUMS every t is already below 2**24 (k (p/2)**2 < 2**24, or k-blocked sums
// in [0, p): ozfft/engines/cuda/constants.py, raw_sums_fit) and is taken as it is.
__device__ __forceinline__ int oz_partial_residue(int t, int i) {
#if defined(OZ_RAW_SUMS)
    (void)i;
    return t;
#elif OZ_MAX_MODULUS <= 256
    return (t >> 16) * oz_pow16[i] + (t & 0xffff);
#else
    return (int)oz_mod_nonneg(t, oz_moduli[i]);
#endif
}

// The largest |v| oz_crt_add takes: every product |v| W-digit is below 2**(26 + 31) and a
// sum of at most 32 of them below 2**62.
#define OZ_CRT_TERM_BITS 26
static_assert(OZ_NUM_MODULI <= 32, "the digit sums hold 32 terms of 2**57");

__device__ __forceinline__ void oz_crt_clear(oz_i64 (&acc)[OZ_DIGITS]) {
#pragma unroll
    for (int l = 0; l < OZ_DIGITS; ++l) acc[l] = 0;
}

// acc += v W for the weight w (digits w[0 .. OZ_DIGITS)), |v| < 2**OZ_CRT_TERM_BITS.
__device__ __forceinline__ void oz_crt_add(oz_i64 (&acc)[OZ_DIGITS], int v, const int* w) {
#pragma unroll
    for (int l = 0; l < OZ_DIGITS; ++l) acc[l] += (oz_i64)v * (oz_i64)w[l];
}

// A complex entry's share of modulus l, from the values t1, t2, t3 and t4() of its nprod
// products: 3 (Karatsuba: Ar Br, Ai Bi, As Bs; Re = T1 - T2, Im = T3 - T1 - T2) or 4 (Ar
// Br, Ai Bi, Ar Bi, Ai Br; Im = T3 + T4: t4 is called only then); on a Gaussian system
// (OZ_GAUSSIAN) 2: T+ = A+ B+ and T- = A- B-, Re = (T+ + T-) / 2, Im = (T+ - T-) / (2j)
// mod p_l with the halving and the division by 2j folded into the weights (t3, t4 unused).
// The values enter partially reduced (|.| < 2**24), so Re and Im stay below 2**26 =
// 2**OZ_CRT_TERM_BITS.
template <typename T4>
__device__ __forceinline__ void oz_crt_add_complex_terms(oz_i64 (&re)[OZ_DIGITS],
                                                         oz_i64 (&im)[OZ_DIGITS], int t1, int t2,
                                                         int t3, T4 t4, int nprod, int l) {
#ifdef OZ_GAUSSIAN
    (void)t3, (void)t4, (void)nprod;
    oz_crt_add(re, t1 + t2, oz_weight_re_digits + l * OZ_DIGITS);
    oz_crt_add(im, t1 - t2, oz_weight_im_digits + l * OZ_DIGITS);
#else
    const int t_im = nprod == 3 ? t3 - t1 - t2 : t3 + t4();
    oz_crt_add(re, t1 - t2, oz_weight_digits + l * OZ_DIGITS);
    oz_crt_add(im, t_im, oz_weight_digits + l * OZ_DIGITS);
#endif
}

// oz_crt_add_complex_terms from the plane values t[k] = cl[k * plane] (planes of INT32
// sums, or of bytes in [0, p): T the plane's element type).
template <typename T>
__device__ __forceinline__ void oz_crt_add_complex(oz_i64 (&re)[OZ_DIGITS],
                                                   oz_i64 (&im)[OZ_DIGITS],
                                                   const T* __restrict__ cl, long long plane,
                                                   int nprod, int l) {
    const int t1 = oz_partial_residue((int)cl[0], l), t2 = oz_partial_residue((int)cl[plane], l);
#ifdef OZ_GAUSSIAN
    const int t3 = 0;
#else
    const int t3 = oz_partial_residue((int)cl[2 * plane], l);
#endif
    oz_crt_add_complex_terms(re, im, t1, t2, t3,
                             [&] { return oz_partial_residue((int)cl[3 * plane], l); }, nprod, l);
}

// The value of the top OZ_QUOTIENT_DIGITS (at most three) digits times 2**-(31 t), t the
// digits below them (constants.py, _crt_macros: as few as keep X / P within 2**-21)
#ifndef OZ_QUOTIENT_DIGITS  // (OZ_INV_P_TOP's scale depends on it: both from _crt_macros)
#error "OZ_QUOTIENT_DIGITS: the digit sums the quotient reads (constants.py, _crt_macros)"
#endif
template <typename D>
__device__ __forceinline__ double oz_top_digits(const D (&d)[OZ_DIGITS]) {
    double a = 0.0;
#pragma unroll
    for (int l = OZ_DIGITS - 1; l >= 0 && l >= OZ_DIGITS - OZ_QUOTIENT_DIGITS; --l)
        a = a * 0x1p31 + (double)d[l];
    return a;
}

// sign of 2 r + dir P for digits r (0 .. D-2 in [0, 2**31), the top one signed)
__device__ __forceinline__ int oz_sign_2r_plus(const oz_i64 (&r)[OZ_DIGITS], int dir) {
    oz_i64 carry = 0;
    bool nonzero = false;
#pragma unroll
    for (int l = 0; l < OZ_DIGITS - 1; ++l) {
        const oz_i64 t = 2 * r[l] + dir * (oz_i64)oz_p_digits[l] + carry;
        nonzero |= (t & OZ_DIGIT_MASK) != 0;
        carry = t >> 31;
    }
    const oz_i64 top = 2 * r[OZ_DIGITS - 1] + dir * (oz_i64)oz_p_digits[OZ_DIGITS - 1] + carry;
    if (top < 0) return -1;
    return (top > 0 || nonzero) ? 1 : 0;
}

// r += m P with the digits renormalized (0 .. D-2 in [0, 2**31), the top one signed):
// m = 0 normalizes a digit sum, m = -q takes the quotient's multiple off, m = +-1 corrects.
// Exact for |m| < 2**31 and digit sums below 2**62.
__device__ __forceinline__ void oz_add_multiple_p(oz_i64 (&r)[OZ_DIGITS], oz_i64 m) {
    oz_i64 carry = 0;
#pragma unroll
    for (int l = 0; l < OZ_DIGITS - 1; ++l) {
        const oz_i64 t = r[l] + m * oz_p_digits[l] + carry;
        r[l] = t & OZ_DIGIT_MASK;
        carry = t >> 31;
    }
    r[OZ_DIGITS - 1] += m * oz_p_digits[OZ_DIGITS - 1] + carry;
}

// 64-bit words that hold x (31 D bits, two's complement): |x| < P/2 < 2**(31 D - 1).
#define OZ_WORDS ((31 * OZ_DIGITS + 63) / 64)

// x = sum r_l 2**(31 l) from normalized digits (0 .. D-2 in [0, 2**31), the top one signed)
// as OZ_WORDS little-endian two's-complement words: the low digits' bits do not overlap
// (ORs), the top digit lands above them sign-extended.
__device__ __forceinline__ void oz_digits_to_words(const oz_i64 (&r)[OZ_DIGITS],
                                                   oz_u64 (&w)[OZ_WORDS]) {
#pragma unroll
    for (int j = 0; j < OZ_WORDS; ++j) w[j] = 0;
#pragma unroll
    for (int l = 0; l < OZ_DIGITS; ++l) {
        const int j = 31 * l / 64, o = 31 * l % 64;
        const oz_i64 d = r[l];
        w[j] |= (oz_u64)d << o;
        if (l < OZ_DIGITS - 1) {
            if (o > 33 && j + 1 < OZ_WORDS) w[j + 1] |= (oz_u64)d >> (64 - o);
        } else {
            if (j + 1 < OZ_WORDS) w[j + 1] = o > 0 ? (oz_u64)(d >> (64 - o)) : (oz_u64)(d >> 63);
#pragma unroll
            for (int h = j + 2; h < OZ_WORDS; ++h) w[h] = (oz_u64)(d >> 63);
        }
    }
}

// Round |x| 2**shift (|x| in words w, little-endian, non-negative) to the format (PREC,
// EMIN), nearest-even; returns the rounded value as a double (exact for binary32 too).
template <int PREC, int EMIN>
__device__ __forceinline__ double oz_round_words(const oz_u64 (&w)[OZ_WORDS], int shift) {
    int top = -1;
#pragma unroll
    for (int j = 0; j < OZ_WORDS; ++j)
        if (w[j] != 0) top = j;
    if (top < 0) return 0.0;
    oz_u64 w1 = 0, w0 = 0;
    bool sticky = false;
#pragma unroll
    for (int j = 0; j < OZ_WORDS; ++j) {
        if (j == top) w1 = w[j];
        if (j == top - 1) w0 = w[j];
        if (j < top - 1) sticky |= w[j] != 0;
    }
    const int lz = __clzll((long long)w1);
    const int bitlen = 64 * top + (64 - lz);
    // hi: the top 64 bits of the 128-bit window (w1 w0), left-aligned
    const oz_u64 hi = lz ? (w1 << lz) | (w0 >> (64 - lz)) : w1;
    sticky |= (lz ? w0 << lz : w0) != 0;
    const int lead_exp = bitlen - 1 + shift;
    const int prec = lead_exp >= EMIN ? PREC : PREC - (EMIN - lead_exp);
    if (prec < 0) return 0.0;
    if (prec == 0) {  // below half the smallest subnormal unless exactly above half
        const bool above_half = sticky || (hi << 1) != 0;
        return above_half ? oz_scale2(1.0, lead_exp + 1) : 0.0;
    }
    oz_u64 kept = hi >> (64 - prec);
    const oz_u64 round_bit = (hi >> (63 - prec)) & 1ULL;
    const bool st = sticky || (hi & ((1ULL << (63 - prec)) - 1ULL)) != 0;
    kept += round_bit & ((oz_u64)st | (kept & 1ULL));
    return oz_scale2((double)kept, lead_exp + 1 - prec);  // exact, or overflows to inf
}

// floor(x / B), B = 2**(31 (D - 2)), from normalized digits (0 .. D-2 in [0, 2**31), the
// top one signed): the top two digits as one integer (x itself for one digit).
__device__ __forceinline__ oz_i64 oz_top_two(const oz_i64 (&r)[OZ_DIGITS]) {
#if OZ_DIGITS >= 2
    return r[OZ_DIGITS - 1] * (1LL << 31) + r[OZ_DIGITS - 2];
#else
    return r[0];
#endif
}

// The correct rounding of x 2**shift to the format (PREC, EMIN), x in normalized digits r
// with top = oz_top_two(r), where x is not small (top is neither 0 nor -1: |x| >= B) and
// the result is normal; returns false (v unset) otherwise. The 64-bit window win =
// floor(x / 2**t) holds x's top 62 significant bits, read off the digits (x = top B + M
// 2**(31 (D - 4)) + the digits below, M = the next two digits), and is ORed with a sticky
// bit for the bits below it (rounding to odd: win | sticky is the odd one of the two
// integers around x / 2**t, for either sign, or x / 2**t itself); one integer-to-float
// conversion then rounds it to nearest, which rounding to odd on at least PREC + 2 bits
// leaves the same as rounding x: no negation and no rounding by hand.
template <int PREC, int EMIN>
__device__ __forceinline__ bool oz_round_normal(const oz_i64 (&r)[OZ_DIGITS], oz_i64 top,
                                                int shift, double& v) {
    // x's significant bits: the bit length of x or of ~x (x < 0), those of top or ~top
    // above the 31 (D - 2) bits of the digits below it
    const oz_u64 y = (oz_u64)(top ^ (top >> 63));
    if (y == 0) return false;  // |x| < B: the general path
    const int lead = 64 - __clzll((long long)y);  // 1 .. 61: |top| < 2**61
    const int bits = 31 * (OZ_DIGITS - 2) + lead;
    if (bits - 1 + shift < EMIN) return false;  // |x| > 2**(bits - 1): below, subnormal
    oz_i64 win;
    bool sticky = false;
    int t = 0;
#if OZ_DIGITS <= 2
    win = top;  // x itself (at most 61 bits)
#elif OZ_DIGITS == 3
    // x = top 2**31 + r0: all of it where it has at most 62 bits, else t = lead - 31 <= 30
    t = lead > 31 ? lead - 31 : 0;
    win = top * (1LL << (31 - t)) + (r[0] >> t);
    sticky = (r[0] & ((1LL << t) - 1)) != 0;
#else
    // t = 31 (D - 4) + lead: win = top 2**(62 - lead) + floor(M / 2**lead)
    t = 31 * (OZ_DIGITS - 4) + lead;
    const oz_i64 m = r[OZ_DIGITS - 3] * (1LL << 31) + r[OZ_DIGITS - 4];  // in [0, 2**62)
    win = top * (1LL << (62 - lead)) + (m >> lead);
    sticky = (m & ((1LL << lead) - 1)) != 0;
#pragma unroll
    for (int l = 0; l < OZ_DIGITS - 4; ++l) sticky |= r[l] != 0;
#endif
    win |= (oz_i64)sticky;
    const double rounded = PREC == 24 ? (double)(float)win : (double)win;
    v = oz_scale2(rounded, t + shift);  // exact, or overflows to inf
    return true;
}

// x 2**shift rounded once to the format (PREC, EMIN, EMAX), x in normalized digits r (0 ..
// D-2 in [0, 2**31), the top one signed), |x| < P/2, top = oz_top_two(r).
template <int PREC, int EMIN, int EMAX>
__device__ __forceinline__ double oz_round_digits(const oz_i64 (&r)[OZ_DIGITS], oz_i64 top,
                                                  int shift) {
    static_assert(PREC == 24 || PREC == 53, "binary32 or binary64 output");
    double v;
    if (!oz_round_normal<PREC, EMIN>(r, top, shift, v)) {
        // small x or a result below 2**EMIN (subnormal, or 0): round |x| from its words
        oz_u64 w[OZ_WORDS];
        oz_digits_to_words(r, w);
        const bool negative = r[OZ_DIGITS - 1] < 0;
        const oz_u64 flip = negative ? ~0ULL : 0ULL;  // two's complement negation
        oz_u64 carry = negative ? 1ULL : 0ULL;
#pragma unroll
        for (int j = 0; j < OZ_WORDS; ++j) {
            const oz_u64 u = (w[j] ^ flip) + carry;
            carry = carry & (u == 0 ? 1ULL : 0ULL);
            w[j] = u;
        }
        v = oz_round_words<PREC, EMIN>(w, shift);
        v = negative ? -v : v;
    }
    // overflow of binary32 (past its largest finite value); binary64 overflow is already inf
    if (PREC == 24 && fabs(v) > 0x1.fffffep+127) v = v > 0 ? OZ_INF : -OZ_INF;
    return v;
}

// x = the CRT integer of the sum X in acc (|x| < P/2), times 2**shift, rounded once.
template <int PREC, int EMIN, int EMAX>
__device__ __forceinline__ double oz_crt_finish(const oz_i64 (&acc)[OZ_DIGITS], int shift) {
    oz_i64 r[OZ_DIGITS];  // X, then x = X - q P, in digits
#pragma unroll
    for (int l = 0; l < OZ_DIGITS; ++l) r[l] = acc[l];
    // q = round(X / P), |q| < 2**31 (|X| < 2**31 P), from the top digit sums as they are
    // (each below 2**62, not normalized; oz_top_digits): their float64 rounding and the
    // digits below them move X / P by less than 2**-19, so q is the nearest integer or off by one;
    // taking q P off normalizes the digits
    oz_add_multiple_p(r, -(oz_i64)oz_low_int(fma(oz_top_digits(r), OZ_INV_P_TOP, OZ_MAGIC)));
    // x lies in [T B, (T + 1) B) for T = oz_top_two(r), and P / 2 in [H B, (H + 1) B) for H
    // = OZ_HALF_P_TOP_TWO: T < H proves x < P / 2 and T > -H - 1 proves x > -P / 2; else
    // decide exactly (the true x satisfies -P/2 < x < P/2)
    oz_i64 top = oz_top_two(r);
    if (top >= OZ_HALF_P_TOP_TWO || top <= -OZ_HALF_P_TOP_TWO - 1) {
        if (oz_sign_2r_plus(r, -1) > 0) {
            oz_add_multiple_p(r, -1);
        } else if (oz_sign_2r_plus(r, 1) < 0) {
            oz_add_multiple_p(r, 1);
        }
        top = oz_top_two(r);
    }
    return oz_round_digits<PREC, EMIN, EMAX>(r, top, shift);
}

// x = the CRT integer of values t_i = x (mod p_i) (any INT32), times 2**shift, rounded once.
template <int PREC, int EMIN, int EMAX>
__device__ __forceinline__ double oz_crt_round(const int (&t)[OZ_NUM_MODULI], int shift) {
    oz_i64 acc[OZ_DIGITS];
    oz_crt_clear(acc);
#pragma unroll
    for (int i = 0; i < OZ_NUM_MODULI; ++i)
        oz_crt_add(acc, oz_partial_residue(t[i], i), oz_weight_digits + i * OZ_DIGITS);
    return oz_crt_finish<PREC, EMIN, EMAX>(acc, shift);
}
#endif  // OZ_DIGITS
#endif  // OZ_NUM_MODULI
