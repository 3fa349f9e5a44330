// Stage 2: symmetric residues of trunc(2**shift[row] x) for every modulus, as INT8
// planes laid out [modulus][plane][row][kp] (K-major, zero-padded to kp).
// Real operands: one plane; complex: three planes (re, im, rmod(re + im)) for Karatsuba.
#include "common/ozaki_common.cuh"

// grid: one flat grid-stride loop over (row, 4 columns) pairs, so short rows (stacks of
// small matrices) keep every thread busy; kp % 4 == 0.
template <int parts>
__device__ __forceinline__ void oz_residues_body(const double* __restrict__ x, long long rows,
                                                 long long k, long long kp,
                                                 const int* __restrict__ shift,
                                                 signed char* __restrict__ planes) {
    const long long plane = rows * kp;
    const int nplanes = parts == 1 ? 1 : 3;
    const long long quads = kp / 4;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < rows * quads;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long row = idx / quads, h0 = 4 * (idx % quads);
        const int s = shift[row];
        const double* xr = x + row * k * parts;
        {
            double re[4][3], im[parts == 2 ? 4 : 1][3];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                long long h = h0 + e;
                re[e][0] = re[e][1] = re[e][2] = 0.0;
                if (parts == 2) im[e][0] = im[e][1] = im[e][2] = 0.0;
                if (h < k) {
                    oz_digits(xr[h * parts], s, re[e][2], re[e][1], re[e][0]);
                    if (parts == 2)
                        oz_digits(xr[h * 2 + 1], s, im[e % (parts == 2 ? 4 : 1)][2],
                                  im[e % (parts == 2 ? 4 : 1)][1], im[e % (parts == 2 ? 4 : 1)][0]);
                }
            }
            const long long off = row * kp + h0;
#pragma unroll
            for (int i = 0; i < OZ_NUM_MODULI; ++i) {
                signed char* base = planes + (long long)i * nplanes * plane + off;
                char4 vr, vi, vs;
                int rr[4], ri[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) rr[e] = oz_residue(re[e][2], re[e][1], re[e][0], i);
                vr = make_char4(rr[0], rr[1], rr[2], rr[3]);
                *reinterpret_cast<char4*>(base) = vr;
                if (parts == 2) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int f = e % (parts == 2 ? 4 : 1);
                        ri[e] = oz_residue(im[f][2], im[f][1], im[f][0], i);
                    }
                    vi = make_char4(ri[0], ri[1], ri[2], ri[3]);
                    vs = make_char4(oz_rmod((double)(rr[0] + ri[0]), oz_moduli[i]),
                                    oz_rmod((double)(rr[1] + ri[1]), oz_moduli[i]),
                                    oz_rmod((double)(rr[2] + ri[2]), oz_moduli[i]),
                                    oz_rmod((double)(rr[3] + ri[3]), oz_moduli[i]));
                    *reinterpret_cast<char4*>(base + plane) = vi;
                    *reinterpret_cast<char4*>(base + 2 * plane) = vs;
                }
            }
        }
    }
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
