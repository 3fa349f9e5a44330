// Stage 4 (Phase B): read the INT32 Phase-A planes of a block of output columns, reduce
// mod p_i, rebuild the CRT integer in 32-bit limbs (Kulisch), round once, scale, store.
// Planes are laid out [modulus][product][m][ldc]; the block's columns start at col0.
#include "common/ozaki_common.cuh"

#ifdef OZ_OUT_FLOAT
typedef float oz_out_real;
typedef float2 oz_out_complex;
#define OZ_PREC 24
#define OZ_EMIN -126
#define OZ_EMAX 127
#else
typedef double oz_out_real;
typedef double2 oz_out_complex;
#define OZ_PREC 53
#define OZ_EMIN -1022
#define OZ_EMAX 1023
#endif

// grid: x over the block's columns, y over rows (grid-stride both).
// Both reconstructions take a stack of products along grid z: item z reads its planes at
// c + z c_batch, its row shifts at shift_a + z m, its column shifts at shift_b + z sb_batch
// and writes out + z out_batch (one launch for a whole batch of small products).
template <typename C, typename S, typename O>
__device__ __forceinline__ void oz_batch_item(C& c, S& shift_a, S& shift_b, O& out, long long m,
                                              long long c_batch, long long sb_batch,
                                              long long out_batch) {
    c += blockIdx.z * c_batch;
    shift_a += blockIdx.z * m;
    shift_b += blockIdx.z * sb_batch;
    out += blockIdx.z * out_batch;
}
extern "C" __global__ void oz_reconstruct_real(const int* __restrict__ c, long long m,
                                               long long nb, long long ldc,
                                               const int* __restrict__ shift_a,
                                               const int* __restrict__ shift_b,
                                               oz_out_real* __restrict__ out,
                                               long long ld_out, long long c_batch,
                                               long long sb_batch, long long out_batch) {
    oz_batch_item(c, shift_a, shift_b, out, m, c_batch, sb_batch, out_batch);
    const long long plane = m * ldc;
    for (long long i = blockIdx.y; i < m; i += gridDim.y) {
        const int sa = shift_a[i];
        for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < nb;
             j += (long long)gridDim.x * blockDim.x) {
            const int* cij = c + i * ldc + j;
            oz_u32 u[OZ_NUM_MODULI];
#pragma unroll
            for (int l = 0; l < OZ_NUM_MODULI; ++l) u[l] = oz_mod_nonneg(cij[l * plane], oz_moduli[l]);
            int s = -(sa + shift_b[j]);
            out[i * ld_out + j] = (oz_out_real)oz_crt_round<OZ_PREC, OZ_EMIN, OZ_EMAX>(u, s);
        }
    }
}

// products per modulus: 3 (Karatsuba: Ar Br, Ai Bi, As Bs) or 4 (Ar Br, Ai Bi, Ar Bi, Ai Br);
// on a Gaussian system (OZ_GAUSSIAN) 2: T+ = A+ B+, T- = A- B-, Re = (T+ + T-) / 2,
// Im = (T+ - T-) / (2j) mod p.
extern "C" __global__ void __launch_bounds__(256, 2) oz_reconstruct_complex(const int* __restrict__ c, long long m,
                                                  long long nb, long long ldc, int nprod,
                                                  const int* __restrict__ shift_a,
                                                  const int* __restrict__ shift_b,
                                                  oz_out_complex* __restrict__ out,
                                                  long long ld_out, long long c_batch,
                                                  long long sb_batch, long long out_batch) {
    oz_batch_item(c, shift_a, shift_b, out, m, c_batch, sb_batch, out_batch);
    const long long plane = m * ldc;
    for (long long i = blockIdx.y; i < m; i += gridDim.y) {
        const int sa = shift_a[i];
        for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < nb;
             j += (long long)gridDim.x * blockDim.x) {
            oz_u64 acc_re[OZ_LIMBS], acc_im[OZ_LIMBS];
            oz_crt_clear(acc_re);
            oz_crt_clear(acc_im);
#pragma unroll
            for (int l = 0; l < OZ_NUM_MODULI; ++l) {
                const int* cl = c + (long long)l * nprod * plane + i * ldc + j;
#ifdef OZ_GAUSSIAN
                oz_u32 ure, uim;
                oz_gaussian_parts(cl[0], cl[plane], l, ure, uim);
                oz_crt_add(acc_re, ure, l);
                oz_crt_add(acc_im, uim, l);
#else
                const int p = oz_moduli[l];
                int t1 = (int)oz_mod_nonneg(cl[0], p), t2 = (int)oz_mod_nonneg(cl[plane], p);
                int t3 = (int)oz_mod_nonneg(cl[2 * plane], p);
                int im = nprod == 3 ? t3 - t1 - t2 : t3 + (int)oz_mod_nonneg(cl[3 * plane], p);
                oz_crt_add(acc_re, oz_mod_nonneg(t1 - t2, p), l);
                oz_crt_add(acc_im, oz_mod_nonneg(im, p), l);
#endif
            }
            int s = -(sa + shift_b[j]);
            oz_out_complex v;
            v.x = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc_re, s);
            v.y = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc_im, s);
            out[i * ld_out + j] = v;
        }
    }
}

// k-blocking: acc = (acc + part) mod p for INT32 planes [modulus][product][m][ldc].
extern "C" __global__ void oz_mod_accumulate(int* __restrict__ acc, const int* __restrict__ part,
                                             long long per_modulus, int first) {
    long long total = per_modulus * OZ_NUM_MODULI;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        int p = oz_moduli[idx / per_modulus];
        int prev = first ? 0 : acc[idx];  // already in [0, p)
        acc[idx] = (int)oz_mod_nonneg(prev + (int)oz_mod_nonneg(part[idx], p), p);
    }
}
