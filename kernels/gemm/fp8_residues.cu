// Stage 2 of the FP8 Phase A: symmetric residues of the scaled integers (trunc(2**shift[row]
// x), or their OZ_NEAREST rounding: common/ozaki_common.cuh) modulo every m_i = s_i**d_i
// of an FP8 residue system, each split into balanced base-s_i digits (|c| <= 16) stored
// as e4m3 bytes. Layout [modulus][plane][digit][row][kp]: K-major digit
// planes, OZ_FP8_MAX_DIGITS of them per plane (digits j >= d_i are zero), zero-padded to
// kp (a multiple of the Phase-A k-step). Real operands: one plane; complex: three (re, im,
// rmod(re + im)) for Karatsuba, as the INT8 residues (gemm/residues.cu).
// The residues are those of the NumPy engine (ozfft/engines/numpy/residues.py: exact
// float64 digits of the scaled value, one symmetric rmod), the digits those of
// ResidueSystem.split_array.
#include "common/ozaki_common.cuh"
#include "common/ozaki_fp8.cuh"

// grid: common/ozaki_common.cuh, oz_each_row_quad.
template <int parts>
__device__ __forceinline__ void oz_fp8_residues_body(const double* __restrict__ x,
                                                     long long rows, long long k, long long kp,
                                                     const int* __restrict__ shift,
                                                     unsigned char* __restrict__ planes) {
    const long long digit_stride = rows * kp;
    const long long plane_stride = OZ_FP8_MAX_DIGITS * digit_stride;
    const int nplanes = parts == 1 ? 1 : 3;
    oz_each_row_quad<parts, OzDigits24>(x, rows, k, kp, shift, [&](OzDigits24 (&re)[4],
                                                                  OzDigits24 (&im)[4],
                                                                  long long off) {
#pragma unroll
        for (int i = 0; i < OZ_NUM_MODULI; ++i) {
            const int p = oz_moduli[i], s = oz_fp8_bases[i], d = oz_fp8_digits[i];
            unsigned char* base = planes + (long long)i * nplanes * plane_stride + off;
            int cr[4][OZ_FP8_MAX_DIGITS], ci[4][OZ_FP8_MAX_DIGITS], cs[4][OZ_FP8_MAX_DIGITS];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int rr = oz_residue(re[e], i);
                oz_fp8_split(rr, s, d, cr[e]);
                if (parts == 2) {
                    const int ri = oz_residue(im[e], i);
                    oz_fp8_split(ri, s, d, ci[e]);
                    oz_fp8_split(oz_rmod((double)(rr + ri), p), s, d, cs[e]);
                }
            }
#pragma unroll
            for (int j = 0; j < OZ_FP8_MAX_DIGITS; ++j) {
                unsigned char* dst = base + j * digit_stride;
                *reinterpret_cast<unsigned*>(dst) = oz_e4m3_pack(cr, j);
                if (parts == 2) {
                    *reinterpret_cast<unsigned*>(dst + plane_stride) = oz_e4m3_pack(ci, j);
                    *reinterpret_cast<unsigned*>(dst + 2 * plane_stride) = oz_e4m3_pack(cs, j);
                }
            }
        }
    });
}

extern "C" __global__ void __launch_bounds__(256)
    oz_fp8_residues_real(const double* __restrict__ x, long long rows, long long k, long long kp,
                         const int* __restrict__ shift, unsigned char* __restrict__ planes) {
    oz_fp8_residues_body<1>(x, rows, k, kp, shift, planes);
}

extern "C" __global__ void __launch_bounds__(256)
    oz_fp8_residues_complex(const double* __restrict__ x, long long rows, long long k,
                            long long kp, const int* __restrict__ shift,
                            unsigned char* __restrict__ planes) {
    oz_fp8_residues_body<2>(x, rows, k, kp, shift, planes);
}
