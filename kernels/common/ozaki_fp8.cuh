// FP8 (e4m3) digits of an FP8 residue system (ozfft/ozaki/residue_system.py): a symmetric
// residue modulo m = s**d as d balanced base-s digits, r = sum_j c_j s**j, each |c_j| <= 16,
// and the e4m3 byte of such a digit. Every table comes from a macro that ozfft generates
// from the system (ozfft/engines/cuda/constants.py, fp8_macros); include after
// common/ozaki_common.cuh (OZ_NUM_MODULI).
#pragma once

#ifdef OZ_FP8_MAX_DIGITS

// bases s_i and digit counts d_i of the moduli m_i = s_i**d_i
__device__ constexpr int oz_fp8_bases[OZ_NUM_MODULI] = {OZ_FP8_BASES};
__device__ constexpr int oz_fp8_digits[OZ_NUM_MODULI] = {OZ_FP8_DIGITS};

static_assert(OZ_FP8_MAX_DIGITS >= 1 && OZ_FP8_MAX_DIGITS <= 3,
              "the FP8 kernels take one to three digits per modulus");
static_assert(OZ_FP8_DIGIT_MAX <= 16, "e4m3 holds every integer up to 16 exactly, not beyond");

// The e4m3 byte of an integer |c| <= 16 (exact): sign, exponent e = floor(log2 |c|) with
// bias 7, three mantissa bits (|c| has at most four significant bits); 0 is +0.
__device__ __forceinline__ unsigned oz_e4m3_int(int c) {
    const unsigned v = (unsigned)(c < 0 ? -c : c);
    if (v == 0u) return 0u;
    const int e = 31 - __clz((int)v);
    return (c < 0 ? 0x80u : 0u) | ((unsigned)(e + 7) << 3) | (((v << 3) >> e) & 7u);
}

// Balanced base-s digits of the symmetric residue r modulo s**d, as
// ResidueSystem.split_array: c_j = ((r + s/2) mod s) - s/2 (floor mod) for j < d - 1,
// r = (r - c_j) / s (exact), the top digit the rest; digits j >= d are 0.
__device__ __forceinline__ void oz_fp8_split(int r, int s, int d,
                                             int (&c)[OZ_FP8_MAX_DIGITS]) {
    const int h = s / 2;
#pragma unroll
    for (int j = 0; j < OZ_FP8_MAX_DIGITS; ++j) {
        if (j < d - 1) {
            int t = (r + h) % s;
            if (t < 0) t += s;
            c[j] = t - h;
            r = (r - c[j]) / s;
        } else {
            c[j] = j == d - 1 ? r : 0;
        }
    }
}

// Four e4m3 bytes (little-endian: element 0 in the low byte) of digit j of four residues.
__device__ __forceinline__ unsigned oz_e4m3_pack(const int (&c)[4][OZ_FP8_MAX_DIGITS], int j) {
    return oz_e4m3_int(c[0][j]) | (oz_e4m3_int(c[1][j]) << 8) | (oz_e4m3_int(c[2][j]) << 16) |
           (oz_e4m3_int(c[3][j]) << 24);
}

#endif  // OZ_FP8_MAX_DIGITS
