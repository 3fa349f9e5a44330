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

#endif

void oz_host_mod_nonneg(const int* t, uint32_t* out, long n) {
    for (long e = 0; e < n; ++e)
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_mod_nonneg(t[e], oz_moduli[i]);
}
}
