// Stage 2: symmetric residues of the scaled integers a' of x (trunc(2**shift[row] x), or
// with OZ_NEAREST its "nearest" rounding: common/ozaki_common.cuh) for every modulus, as
// INT8 planes laid out [modulus][plane][row][kp] (K-major, zero-padded to kp).
// Real operands: one plane; complex: three planes (re, im, rmod(re + im)) for Karatsuba,
// or on a Gaussian system (OZ_GAUSSIAN) two planes rmod(re + j im), rmod(re - j im).
#include "common/ozaki_common.cuh"

// The digits each entry is split into: OzEntryDigits (common/ozaki_common.cuh); the
// Gaussian planes combine both parts before their one reduction and take OzDigits24.
template <bool three, typename A, typename B>
struct OzPick {
    typedef A type;
};
template <typename A, typename B>
struct OzPick<false, A, B> {
    typedef B type;
};

// grid: common/ozaki_common.cuh, oz_each_row_quad.
// layout: 1 real, 2 complex (Karatsuba planes), 3 complex on a Gaussian system
template <int layout>
__device__ __forceinline__ void oz_residues_body(const double* __restrict__ x, long long rows,
                                                 long long k, long long kp,
                                                 const int* __restrict__ shift,
                                                 signed char* __restrict__ planes) {
#ifndef OZ_GAUSSIAN
    static_assert(layout != 3, "Gaussian residue planes need a Gaussian system (OZ_GAUSSIAN)");
#endif
    constexpr int parts = layout == 1 ? 1 : 2;  // doubles per input entry
    constexpr int nplanes = layout == 1 ? 1 : (layout == 2 ? 3 : 2);
    typedef typename OzPick<layout == 3, OzDigits24, OzEntryDigits>::type D;
    const long long plane = rows * kp;
    oz_each_row_quad<parts, D>(x, rows, k, kp, shift, [&](D (&re)[4], D (&im)[4],
                                                         long long off) {
#pragma unroll
        for (int i = 0; i < OZ_NUM_MODULI; ++i) {
            signed char* base = planes + (long long)i * nplanes * plane + off;
            const int p = oz_moduli[i];
            if constexpr (layout == 3) {
#ifdef OZ_GAUSSIAN
                // rmod(re +- j im) straight from the digits (oz_gaussian_residues)
                int rp[4], rm[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) oz_gaussian_residues(re[e], im[e], i, rp[e], rm[e]);
                *reinterpret_cast<char4*>(base) = make_char4(rp[0], rp[1], rp[2], rp[3]);
                *reinterpret_cast<char4*>(base + plane) = make_char4(rm[0], rm[1], rm[2], rm[3]);
#endif
            } else {
                int rr[4], ri[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    rr[e] = oz_residue(re[e], i);
                    ri[e] = parts == 2 ? oz_residue(im[e], i) : 0;
                }
                *reinterpret_cast<char4*>(base) = make_char4(rr[0], rr[1], rr[2], rr[3]);
                if (layout == 2) {
                    *reinterpret_cast<char4*>(base + plane) =
                        make_char4(ri[0], ri[1], ri[2], ri[3]);
                    *reinterpret_cast<char4*>(base + 2 * plane) =
                        make_char4(oz_rmod((double)(rr[0] + ri[0]), p),
                                   oz_rmod((double)(rr[1] + ri[1]), p),
                                   oz_rmod((double)(rr[2] + ri[2]), p),
                                   oz_rmod((double)(rr[3] + ri[3]), p));
                }
            }
        }
    });
}

extern "C" __global__ void __launch_bounds__(256, 4)
    oz_residues_real(const double* __restrict__ x, long long rows, long long k, long long kp,
                     const int* __restrict__ shift, signed char* __restrict__ planes) {
    oz_residues_body<1>(x, rows, k, kp, shift, planes);
}

extern "C" __global__ void __launch_bounds__(256, 2)
    oz_residues_complex(const double* __restrict__ x, long long rows, long long k, long long kp,
                        const int* __restrict__ shift, signed char* __restrict__ planes) {
    oz_residues_body<2>(x, rows, k, kp, shift, planes);
}

#ifdef OZ_GAUSSIAN
extern "C" __global__ void __launch_bounds__(256, 2)
    oz_residues_gaussian(const double* __restrict__ x, long long rows, long long k, long long kp,
                         const int* __restrict__ shift, signed char* __restrict__ planes) {
    oz_residues_body<3>(x, rows, k, kp, shift, planes);
}
#endif
