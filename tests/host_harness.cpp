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

#include "common/ozaki_common.cuh"

extern "C" {

void oz_host_crt_round(const uint32_t* u, const int* shift, double* out, long n, int binary32) {
    for (long e = 0; e < n; ++e) {
        oz_u32 v[OZ_NUM_MODULI];
        for (int i = 0; i < OZ_NUM_MODULI; ++i) v[i] = u[e * OZ_NUM_MODULI + i];
        out[e] = binary32 ? oz_crt_round<24, -126, 127>(v, shift[e])
                          : oz_crt_round<53, -1022, 1023>(v, shift[e]);
    }
}

void oz_host_residues(const double* x, const int* shift, int* out, long n) {
    for (long e = 0; e < n; ++e) {
        double d2, d1, d0;
        oz_digits(x[e], shift[e], d2, d1, d0);
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_residue(d2, d1, d0, i);
    }
}

#ifdef OZ_GAUSSIAN
// the Gaussian planes rmod(re +- j im) of complex entries (x: re, im interleaved)
void oz_host_gaussian_residues(const double* x, const int* shift, int* plus, int* minus,
                               long n) {
    for (long e = 0; e < n; ++e) {
        double re[3], im[3];
        oz_digits(x[2 * e], shift[e], re[2], re[1], re[0]);
        oz_digits(x[2 * e + 1], shift[e], im[2], im[1], im[0]);
        for (int i = 0; i < OZ_NUM_MODULI; ++i)
            oz_gaussian_residues(re, im, i, plus[e * OZ_NUM_MODULI + i],
                                 minus[e * OZ_NUM_MODULI + i]);
    }
}

// Re and Im mod p of the Gaussian products' INT32 sums t+ and t-
void oz_host_gaussian_parts(const int* t_plus, const int* t_minus, uint32_t* re, uint32_t* im,
                            long n) {
    for (long e = 0; e < n; ++e)
        for (int l = 0; l < OZ_NUM_MODULI; ++l)
            oz_gaussian_parts(t_plus[e], t_minus[e], l, re[e * OZ_NUM_MODULI + l],
                              im[e * OZ_NUM_MODULI + l]);
}
#endif

void oz_host_mod_nonneg(const int* t, uint32_t* out, long n) {
    for (long e = 0; e < n; ++e)
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_mod_nonneg(t[e], oz_moduli[i]);
}
}
