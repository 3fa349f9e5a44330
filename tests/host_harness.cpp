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

void oz_host_mod_nonneg(const int* t, uint32_t* out, long n) {
    for (long e = 0; e < n; ++e)
        for (int i = 0; i < OZ_NUM_MODULI; ++i) out[e * OZ_NUM_MODULI + i] = oz_mod_nonneg(t[e], oz_moduli[i]);
}
}
