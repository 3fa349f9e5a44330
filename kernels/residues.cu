// Stage 2: symmetric residues of trunc(2**shift[row] x) for every modulus, as INT8
// planes laid out [modulus][plane][row][kp] (K-major, zero-padded to kp).
// Real operands: one plane; complex: three planes (re, im, rmod(re + im)) for Karatsuba.
#include "ozaki_common.cuh"

extern "C" __global__ void oz_residues(const double* __restrict__ x, long long rows,
                                       long long k, long long kp, int parts,
                                       const int* __restrict__ shift,
                                       signed char* __restrict__ planes) {
    long long total = rows * kp;
    int nplanes = parts == 1 ? 1 : 3;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long row = idx / kp, h = idx - row * kp;
        double re[3] = {0.0, 0.0, 0.0}, im[3] = {0.0, 0.0, 0.0};
        if (h < k) {
            int s = shift[row];
            oz_digits(x[(row * k + h) * parts], s, re[2], re[1], re[0]);
            if (parts == 2) oz_digits(x[(row * k + h) * 2 + 1], s, im[2], im[1], im[0]);
        }
#pragma unroll
        for (int i = 0; i < OZ_NUM_MODULI; ++i) {
            long long base = (long long)i * nplanes * total + idx;
            int rr = oz_residue(re[2], re[1], re[0], i);
            planes[base] = (signed char)rr;
            if (parts == 2) {
                int ri = oz_residue(im[2], im[1], im[0], i);
                planes[base + total] = (signed char)ri;
                planes[base + 2 * total] = (signed char)oz_rmod((double)(rr + ri), oz_moduli[i]);
            }
        }
    }
}
