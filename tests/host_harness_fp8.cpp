// Host build of the FP8 digit helpers (kernels/common/ozaki_fp8.cuh: balanced base-s digits
// of a symmetric residue and their e4m3 bytes), so that the CPU test suite can check them
// against ResidueSystem.split_array without a GPU. Built by tests/test_cuda_fp8_gemm.py with
// g++, the kernels folder as include path (as for NVRTC) and the engine's FP8 macros.
#include <math.h>
#include <stdint.h>

#define __device__
#define __forceinline__ inline
#define __constant__ static const
#define __clz(x) __builtin_clz(x)

#include "common/ozaki_common.cuh"
#include "common/ozaki_fp8.cuh"

extern "C" {

// e4m3 bytes of the OZ_FP8_MAX_DIGITS digits of each symmetric residue r[e] modulo m_i
void oz_host_fp8_digits(const int* r, long n, int i, uint8_t* out) {
    for (long e = 0; e < n; ++e) {
        int c[OZ_FP8_MAX_DIGITS];
        oz_fp8_split(r[e], oz_fp8_bases[i], oz_fp8_digits[i], c);
        for (int j = 0; j < OZ_FP8_MAX_DIGITS; ++j)
            out[e * OZ_FP8_MAX_DIGITS + j] = (uint8_t)oz_e4m3_int(c[j]);
    }
}

// the symmetric residue modulo m_i of trunc(2**shift x), as the FP8 residues kernel forms it
void oz_host_fp8_residues(const double* x, const int* shift, int* out, long n, int i) {
    for (long e = 0; e < n; ++e) {
        OzDigits24 d;
        d.set(x[e], shift[e]);
        out[e] = oz_residue(d, i);
    }
}
}
