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

#ifdef OZ_NUM_MODULI

// p_i (compile-time constants: `x % oz_moduli[i]` in unrolled loops becomes
// multiply-high code), 2**24 mod p_i, 2**48 mod p_i
__device__ constexpr int oz_moduli[OZ_NUM_MODULI] = {OZ_MODULI};
__constant__ double oz_pow24[OZ_NUM_MODULI] = {OZ_POW24};
__constant__ double oz_pow48[OZ_NUM_MODULI] = {OZ_POW48};

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

// Residues of trunc(2**shift * x) for every modulus, from exact 24-bit digits.
__device__ __forceinline__ void oz_digits(double x, int shift, double& d2, double& d1,
                                          double& d0) {
    double scaled = trunc(scalbn(x, shift));
    d2 = trunc(scaled * 0x1p-48);
    double rest = scaled - d2 * 0x1p48;
    d1 = trunc(rest * 0x1p-24);
    d0 = rest - d1 * 0x1p24;
}

// d2 2**48 + d1 2**24 + d0 reduced only in its digit weights: an integer congruent to it
// modulo p_i, |.| < 2**39.
__device__ __forceinline__ double oz_congruent(double d2, double d1, double d0, int i) {
    return d2 * oz_pow48[i] + d1 * oz_pow24[i] + d0;
}

// The exact 24-bit digits of trunc(2**shift x) for entries h0 .. h0 + 3 of a row (zero
// past k); complex rows interleave re and im (parts = 2), real rows leave im zero.
template <int parts>
__device__ __forceinline__ void oz_row_digits(const double* __restrict__ xr, long long h0,
                                              long long k, int shift, double (&re)[4][3],
                                              double (&im)[4][3]) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const long long h = h0 + e;
        re[e][0] = re[e][1] = re[e][2] = 0.0;
        im[e][0] = im[e][1] = im[e][2] = 0.0;
        if (h < k) {
            oz_digits(xr[h * parts], shift, re[e][2], re[e][1], re[e][0]);
            if (parts == 2) oz_digits(xr[h * 2 + 1], shift, im[e][2], im[e][1], im[e][0]);
        }
    }
}

__device__ __forceinline__ int oz_residue(double d2, double d1, double d0, int i) {
    return oz_rmod(oz_congruent(d2, d1, d0, i), oz_moduli[i]);
}

#ifdef OZ_GAUSSIAN
// The Gaussian planes of one complex entry modulo p_i, from the digits of its parts:
// rmod(R + j I) and rmod(R - j I), R and I its parts reduced in their digit weights only
// (|R + j I| < 2**39 * 121 < 2**47, exact for oz_rmod).
__device__ __forceinline__ void oz_gaussian_residues(const double (&re)[3], const double (&im)[3],
                                                     int i, int& plus, int& minus) {
    const double j = (double)oz_gauss_root[i];
    const double r = oz_congruent(re[2], re[1], re[0], i);
    const double m = oz_congruent(im[2], im[1], im[0], i);
    plus = oz_rmod(fma(j, m, r), oz_moduli[i]);
    minus = oz_rmod(fma(-j, m, r), oz_moduli[i]);
}
#endif

// t mod p in [0, p) (p a compile-time constant after unrolling).
__device__ __forceinline__ oz_u32 oz_mod_nonneg(int t, int p) {
    int r = t % p;
    return (oz_u32)(r < 0 ? r + p : r);
}

#ifdef OZ_GAUSSIAN
// Re and Im of a complex product modulo p_l, in [0, p), from its Gaussian products' sums
// T+ and T- (any INT32): Re = (T+ + T-) / 2, Im = (T+ - T-) / (2j).
__device__ __forceinline__ void oz_gaussian_parts(int t_plus, int t_minus, int l, oz_u32& re,
                                                  oz_u32& im) {
    const int p = oz_moduli[l];
    const int tp = (int)oz_mod_nonneg(t_plus, p), tm = (int)oz_mod_nonneg(t_minus, p);
    re = oz_mod_nonneg((tp + tm) * oz_gauss_inv2[l], p);
    im = oz_mod_nonneg((tp - tm + p) * oz_gauss_inv2j[l], p);
}
#endif

#ifdef OZ_LIMBS
// CRT weights W_i and P as little-endian 32-bit limbs.
__constant__ oz_u32 oz_weight_limbs[OZ_NUM_MODULI * OZ_LIMBS] = {OZ_WEIGHT_LIMBS};
__constant__ oz_u32 oz_p_limbs[OZ_LIMBS] = {OZ_P_LIMBS};

// sign of 2R + dir*P for normalized R (limbs 0..L-2 in [0, 2**32), top limb signed)
__device__ __forceinline__ int oz_sign_2r_plus(const oz_i64 (&r)[OZ_LIMBS], int dir) {
    oz_i64 carry = 0;
    bool nonzero = false;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS - 1; ++l) {
        oz_i64 t = 2 * r[l] + dir * (oz_i64)oz_p_limbs[l] + carry;
        nonzero |= (t & 0xffffffffLL) != 0;
        carry = t >> 32;
    }
    oz_i64 top = 2 * r[OZ_LIMBS - 1] + dir * (oz_i64)oz_p_limbs[OZ_LIMBS - 1] + carry;
    if (top < 0) return -1;
    return (top > 0 || nonzero) ? 1 : 0;
}

__device__ __forceinline__ void oz_add_p(oz_i64 (&r)[OZ_LIMBS], int dir) {
    oz_i64 carry = 0;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS - 1; ++l) {
        oz_i64 t = r[l] + dir * (oz_i64)oz_p_limbs[l] + carry;
        r[l] = t & 0xffffffffLL;
        carry = t >> 32;
    }
    r[OZ_LIMBS - 1] += dir * (oz_i64)oz_p_limbs[OZ_LIMBS - 1] + carry;
}

// Round mag * 2**shift (mag: non-negative 32-bit limbs) to the format (PREC, EMIN),
// nearest-even; returns the rounded value as a double (exact for binary32 too).
template <int PREC, int EMIN>
__device__ __forceinline__ double oz_round(const oz_u32 (&mag)[OZ_LIMBS], int shift) {
    int top = -1;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS; ++l)
        if (mag[l] != 0) top = l;
    if (top < 0) return 0.0;
    oz_u32 w2 = 0, w1 = 0, w0 = 0;
    bool sticky = false;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS; ++l) {
        if (l == top) w2 = mag[l];
        if (l == top - 1) w1 = mag[l];
        if (l == top - 2) w0 = mag[l];
        if (l < top - 2) sticky |= mag[l] != 0;
    }
    int lz = __clz(w2);
    int bitlen = 32 * top + (32 - lz);
    // hi: the top 64 bits of the 96-bit window (w2 w1 w0), left-aligned
    oz_u64 hi = ((((oz_u64)w2) << 32) | w1) << lz;
    if (lz) hi |= ((oz_u64)w0) >> (32 - lz);
    sticky |= (oz_u32)(((oz_u64)w0) << lz) != 0;
    int lead_exp = bitlen - 1 + shift;
    int prec = lead_exp >= EMIN ? PREC : PREC - (EMIN - lead_exp);
    if (prec < 0) return 0.0;
    if (prec == 0) {  // below half the smallest subnormal unless exactly above half
        bool above_half = sticky || (hi << 1) != 0;
        return above_half ? oz_scale2(1.0, lead_exp + 1) : 0.0;
    }
    oz_u64 kept = hi >> (64 - prec);
    oz_u64 round_bit = (hi >> (63 - prec)) & 1ULL;
    bool st = sticky || (hi & ((1ULL << (63 - prec)) - 1ULL)) != 0;
    kept += round_bit & ((oz_u64)st | (kept & 1ULL));
    return oz_scale2((double)kept, lead_exp + 1 - prec);  // exact, or overflows to inf
}

// The Kulisch sum X = sum_i W_i u_i in 64-bit limb accumulators, one residue at a time
// (so a caller holds 2 x OZ_LIMBS accumulators, not every residue, for a complex entry).
__device__ __forceinline__ void oz_crt_clear(oz_u64 (&acc)[OZ_LIMBS]) {
#pragma unroll
    for (int l = 0; l < OZ_LIMBS; ++l) acc[l] = 0;
}

__device__ __forceinline__ void oz_crt_add(oz_u64 (&acc)[OZ_LIMBS], oz_u32 u, int i) {
#pragma unroll
    for (int l = 0; l < OZ_LIMBS; ++l)
        acc[l] += (oz_u64)oz_weight_limbs[i * OZ_LIMBS + l] * u;  // < N 2**40 in all
}

// x = the CRT integer of X (|x| < P/2), times 2**shift, rounded once.
template <int PREC, int EMIN, int EMAX>
__device__ __forceinline__ double oz_crt_finish(const oz_u64 (&acc)[OZ_LIMBS], int shift) {
    oz_u32 x[OZ_LIMBS];
    oz_u64 carry = 0;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS; ++l) {
        oz_u64 t = acc[l] + carry;
        x[l] = (oz_u32)t;
        carry = t >> 32;
    }
    double approx = 0.0;
#pragma unroll
    for (int l = OZ_LIMBS - 1; l >= 0; --l) approx = approx * 0x1p32 + (double)x[l];
    oz_i64 q = (oz_i64)floor(approx * OZ_INV_P + 0.5);  // round(X/P), maybe off by one
    oz_i64 r[OZ_LIMBS];
    oz_i64 c = 0;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS - 1; ++l) {
        oz_i64 t = (oz_i64)x[l] - q * (oz_i64)oz_p_limbs[l] + c;
        r[l] = t & 0xffffffffLL;
        c = t >> 32;
    }
    r[OZ_LIMBS - 1] = (oz_i64)x[OZ_LIMBS - 1] - q * (oz_i64)oz_p_limbs[OZ_LIMBS - 1] + c;
    // exact correction: the true x satisfies -P/2 < x < P/2
    if (oz_sign_2r_plus(r, -1) > 0) {
        oz_add_p(r, -1);
    } else if (oz_sign_2r_plus(r, 1) < 0) {
        oz_add_p(r, 1);
    }
    bool negative = r[OZ_LIMBS - 1] < 0;
    oz_u32 mag[OZ_LIMBS];
    oz_i64 b = 0;
#pragma unroll
    for (int l = 0; l < OZ_LIMBS; ++l) {
        oz_i64 t = (negative ? -r[l] : r[l]) + b;
        mag[l] = (oz_u32)(t & 0xffffffffLL);
        b = t >> 32;
    }
    double v = oz_round<PREC, EMIN>(mag, shift);
    // overflow of a narrower format (binary32); binary64 overflow is already inf
    if (v > scalbn(2.0 - scalbn(1.0, 1 - PREC), EMAX)) v = OZ_INF;
    return negative ? -v : v;
}

// x = CRT integer of the residues u (|x| < P/2), times 2**shift, rounded once.
template <int PREC, int EMIN, int EMAX>
__device__ __forceinline__ double oz_crt_round(const oz_u32 (&u)[OZ_NUM_MODULI], int shift) {
    oz_u64 acc[OZ_LIMBS];
    oz_crt_clear(acc);
#pragma unroll
    for (int i = 0; i < OZ_NUM_MODULI; ++i) oz_crt_add(acc, u[i], i);
    return oz_crt_finish<PREC, EMIN, EMAX>(acc, shift);
}
#endif  // OZ_LIMBS
#endif  // OZ_NUM_MODULI
