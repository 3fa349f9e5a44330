// Stage 4 (Phase B): read the Phase-A planes of a block of output columns, reduce them
// partially (INT32 sums of cuBLAS; with OZ_PLANES_U8 residues in [0, p) stored as bytes by
// gemm/modp_igemm.cu, taken as they are), rebuild the CRT integer exactly in base-2**31
// digit sums (Kulisch; common/ozaki_common.cuh, "CRT reconstruction"), round once, scale,
// store.
// Planes are rows of ldc values, one m x ldc plane per modulus and product, `plane`
// values apart ([modulus][product][m][ldc]: plane = m ldc; a stack's planes may interleave
// its items: [modulus][product][item][m][ldc], plane = items m ldc, c_batch = m ldc).
#if defined(OZ_PLANES_U8) && !defined(OZ_RAW_SUMS)
#error "bytes in [0, p) are raw sums: OZ_PLANES_U8 comes with OZ_RAW_SUMS (phase_b_macros)"
#endif
#include "common/ozaki_common.cuh"
#include "gemm/output_format.cuh"

#ifdef OZ_PLANES_U8
typedef unsigned char oz_plane_t;
#else
typedef int oz_plane_t;
#endif

// grid: x over the block's columns, y over rows (grid-stride both).
// Both reconstructions take a stack of products along grid z: item z reads its planes at
// c + z c_batch (modulus l, product t at (l nprod + t) plane from there), its row shifts
// at shift_a + z m, its column shifts at shift_b + z sb_batch and writes out + z out_batch
// (one launch for a whole batch of small products).
template <typename C, typename S, typename O>
__device__ __forceinline__ void oz_batch_item(C& c, S& shift_a, S& shift_b, O& out, long long m,
                                              long long c_batch, long long sb_batch,
                                              long long out_batch) {
    c += blockIdx.z * c_batch;
    shift_a += blockIdx.z * m;
    shift_b += blockIdx.z * sb_batch;
    out += blockIdx.z * out_batch;
}
// body(i, j, shift_a[i]) for the first of every `outputs` adjacent outputs (i, j .. j +
// outputs - 1) of the item; grid-stride over rows (y) and column groups (x).
template <int outputs, typename F>
__device__ __forceinline__ void oz_each_group(long long m, long long nb,
                                              const int* __restrict__ shift_a, F body) {
    for (long long i = blockIdx.y; i < m; i += gridDim.y) {
        const int sa = shift_a[i];
        for (long long j = outputs * (blockIdx.x * (long long)blockDim.x + threadIdx.x); j < nb;
             j += (long long)outputs * gridDim.x * blockDim.x)
            body(i, j, sa);
    }
}

// body(i, j, s) for every output (i, j) of the item, s = -(shift_a[i] + shift_b[j]) the
// output's exponent.
template <typename F>
__device__ __forceinline__ void oz_each_output(long long m, long long nb,
                                               const int* __restrict__ shift_a,
                                               const int* __restrict__ shift_b, F body) {
    oz_each_group<1>(m, nb, shift_a,
                     [&](long long i, long long j, int sa) { body(i, j, -(sa + shift_b[j])); });
}

// The parameters of every reconstruction kernel, which _block_phase_b
// (ozfft/engines/cuda/engine.py) passes alike: planes of type T (the complex kernels take
// nprod between the two halves), outputs of type O.
#define OZ_PB_PLANES(T) \
    const T* __restrict__ c, long long m, long long nb, long long ldc, long long plane
#define OZ_PB_OUTPUTS(O)                                                                   \
    const int* __restrict__ shift_a, const int* __restrict__ shift_b, O* __restrict__ out, \
        long long ld_out, long long c_batch, long long sb_batch, long long out_batch

extern "C" __global__ void oz_reconstruct_real(OZ_PB_PLANES(oz_plane_t),
                                               OZ_PB_OUTPUTS(oz_out_real)) {
    oz_batch_item(c, shift_a, shift_b, out, m, c_batch, sb_batch, out_batch);
    oz_each_output(m, nb, shift_a, shift_b, [&](long long i, long long j, int s) {
        const oz_plane_t* cij = c + i * ldc + j;
        oz_i64 acc[OZ_DIGITS];
        oz_crt_clear(acc);
#pragma unroll
        for (int l = 0; l < OZ_NUM_MODULI; ++l)
            oz_crt_add(acc, oz_partial_residue((int)cij[l * plane], l), oz_weight_digits + l * OZ_DIGITS);
        out[i * ld_out + j] = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc, s);
    });
}

// complex products: common/ozaki_common.cuh, oz_crt_add_complex
extern "C" __global__ void __launch_bounds__(256, 2)
    oz_reconstruct_complex(OZ_PB_PLANES(oz_plane_t), int nprod, OZ_PB_OUTPUTS(oz_out_complex)) {
    oz_batch_item(c, shift_a, shift_b, out, m, c_batch, sb_batch, out_batch);
    oz_each_output(m, nb, shift_a, shift_b, [&](long long i, long long j, int s) {
        oz_i64 acc_re[OZ_DIGITS], acc_im[OZ_DIGITS];
        oz_crt_clear(acc_re);
        oz_crt_clear(acc_im);
#pragma unroll
        for (int l = 0; l < OZ_NUM_MODULI; ++l)
            oz_crt_add_complex(acc_re, acc_im, c + (long long)l * nprod * plane + i * ldc + j,
                               plane, nprod, l);
        oz_out_complex v;
        v.x = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc_re, s);
        v.y = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc_im, s);
        out[i * ld_out + j] = v;
    });
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

#ifdef OZ_PLANES_U8
// ---- byte planes, OZ_PB_VEC (2, 4 or 8) adjacent outputs a thread ------------------------
// One 2-, 4- or 8-byte load a plane brings the residues of all of them, and their digit sums
// are formed together: each thread has OZ_PB_VEC outputs' loads in flight and as many
// independent chains (Phase B on byte planes is latency-bound: docs/perf-notes.md, "Phase
// B's CRT weighting on tensor cores"). nb and the rows' offsets are multiples of OZ_PB_VEC.
#ifndef OZ_PB_VEC
#define OZ_PB_VEC 4
#endif
#if OZ_PB_VEC == 8
typedef unsigned long long oz_pb_word;
#elif OZ_PB_VEC == 4
typedef oz_u32 oz_pb_word;
#elif OZ_PB_VEC == 2
typedef unsigned short oz_pb_word;
#else
#error "OZ_PB_VEC: 2, 4 or 8"
#endif

// byte e of a plane word (the residue of output j + e)
__device__ __forceinline__ int oz_pb_byte(oz_pb_word w, int e) {
    return (int)((w >> (8 * e)) & 255u);
}

// p + d as one 64-bit add with carry on the ALU pipe (IADD3, IADD3.X): left to itself the
// compiler forms each plane's address with IMAD.WIDE.U32 and IMAD.IADD, on the FMA pipe
// that the digit products keep busy (docs/perf-notes.md, "Phase B's plane addresses on the
// ALU pipe")
__device__ __forceinline__ const unsigned char* oz_pb_advance(const unsigned char* p,
                                                              long long d) {
    unsigned long long r;
    asm("{\n\t.reg .u32 plo, phi, dlo, dhi;\n\t"
        "mov.b64 {plo, phi}, %1;\n\tmov.b64 {dlo, dhi}, %2;\n\t"
        "add.cc.u32 plo, plo, dlo;\n\taddc.u32 phi, phi, dhi;\n\t"
        "mov.b64 %0, {plo, phi};\n\t}"
        : "=l"(r)
        : "l"(reinterpret_cast<unsigned long long>(p)), "l"(d));
    return reinterpret_cast<const unsigned char*>(r);
}


#ifdef OZ_PB_DP4A
// ---- the weighting on dp4a (OZ_PB_DP4A, OZ_PB_VEC 4): real outputs, and complex ones on --
// a Gaussian system (their residues reduced into bytes first: oz_pb_gaussian_bytes). Its
// math is in gemm/phase_b_bytes.cuh.
// X = sum_l r_l W_l in base-256 digits of the weights: s_j = sum_l r_l W_l[j], four moduli
// a `dp4a` (residues of moduli 4g .. 4g+3 of one output in the bytes of one word, byte j of
// their weights in another: constants.py, weight_quads), then X = sum_j s_j 2**(8 j) into
// the base-2**31 digit sums the finish takes. A `dp4a` issues at the rate of an `IMAD`,
// twice that of the `IMAD.WIDE` of oz_crt_add (docs/perf-notes.md, "Phase B's real
// weighting on dp4a"). s_j < N 255**2 < 2**21 (N <= 32: common/ozaki_common.cuh), so
// acc[d] stays below the finish's 2**62 (oz_pb_fold).
#if OZ_PB_VEC != 4
#error "OZ_PB_DP4A transposes 4 x 4 bytes: OZ_PB_VEC 4"
#endif
#include "gemm/phase_b_bytes.cuh"  // (with the settings of either kind: OZ_PB_BY_KIND)

// the output of byte-digit sums s at exponent sh: X = sum_b s[b] 2**(8 b) folded into
// digit sums (oz_pb_fold), reduced, rounded and scaled once (oz_crt_finish)
__device__ __forceinline__ oz_out_real oz_pb_finish(const oz_u32 (&s)[OZ_WEIGHT_BYTES], int sh) {
    oz_i64 acc[OZ_DIGITS];
    oz_crt_clear(acc);
    oz_pb_fold(acc, s);
    return (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(acc, sh);
}

#endif  // OZ_PB_DP4A
// the launch bounds of the kernel that the dp4a weighting builds, none for the other
#if defined(OZ_PB_DP4A) && !defined(OZ_GAUSSIAN)
#define OZ_PB_REAL_VEC_BOUNDS __launch_bounds__(256, OZ_PB_DP4A_BLOCKS)
#else
#define OZ_PB_REAL_VEC_BOUNDS
#endif
#if defined(OZ_PB_DP4A) && defined(OZ_GAUSSIAN)
#define OZ_PB_COMPLEX_VEC_BOUNDS __launch_bounds__(256, OZ_PB_DP4A_BLOCKS)
#else
#define OZ_PB_COMPLEX_VEC_BOUNDS
#endif

extern "C" __global__ void OZ_PB_REAL_VEC_BOUNDS
    oz_reconstruct_real_vec(OZ_PB_PLANES(unsigned char), OZ_PB_OUTPUTS(oz_out_real)) {
    oz_batch_item(c, shift_a, shift_b, out, m, c_batch, sb_batch, out_batch);
#if defined(OZ_PB_DP4A) && !defined(OZ_GAUSSIAN)  // (a Gaussian system's weights are complex)
    oz_each_group<4>(m, nb, shift_a, [&](long long i, long long j, int sa) {
        const unsigned char* cl = c + i * ldc + j;  // modulus l's plane, then l + 1's
        oz_u32 q[OZ_QUADS][4];  // q[g][e]: moduli 4g .. 4g+3 of output j + e
#pragma unroll
        for (int g = 0; g < OZ_QUADS; ++g) {
            oz_u32 w[4];
#pragma unroll
            for (int l = 4 * g; l < 4 * g + 4; ++l) {
                w[l - 4 * g] = l < OZ_NUM_MODULI ? __ldg(reinterpret_cast<const oz_u32*>(cl)) : 0u;
                if (l + 1 < OZ_NUM_MODULI) cl = oz_pb_advance(cl, plane);
            }
            oz_pb_transpose(w, q[g]);
        }
#pragma unroll
        for (int e = 0; e < 4; e += OZ_PB_DP4A_PER_WEIGHT) {
            oz_u32 s[OZ_PB_DP4A_PER_WEIGHT][OZ_WEIGHT_BYTES];
            oz_pb_dp4a_sums(q, e, oz_weight_quads, s);
#pragma unroll
            for (int f = 0; f < OZ_PB_DP4A_PER_WEIGHT; ++f)
                out[i * ld_out + j + e + f] = oz_pb_finish(s[f], -(sa + shift_b[j + e + f]));
        }
    });
#else
    oz_each_group<OZ_PB_VEC>(m, nb, shift_a, [&](long long i, long long j, int sa) {
        const unsigned char* cl = c + i * ldc + j;  // modulus l's plane, then l + 1's
        oz_i64 acc[OZ_PB_VEC][OZ_DIGITS];
#pragma unroll
        for (int e = 0; e < OZ_PB_VEC; ++e) oz_crt_clear(acc[e]);
#pragma unroll
        for (int l = 0; l < OZ_NUM_MODULI; ++l, cl = oz_pb_advance(cl, plane)) {
            const oz_pb_word w = __ldg(reinterpret_cast<const oz_pb_word*>(cl));
#pragma unroll
            for (int e = 0; e < OZ_PB_VEC; ++e)
                oz_crt_add(acc[e], oz_pb_byte(w, e), oz_weight_digits + l * OZ_DIGITS);
        }
#pragma unroll
        for (int e = 0; e < OZ_PB_VEC; ++e)
            out[i * ld_out + j + e] = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(
                acc[e], -(sa + shift_b[j + e]));
    });
#endif  // OZ_PB_DP4A && !OZ_GAUSSIAN
}

extern "C" __global__ void OZ_PB_COMPLEX_VEC_BOUNDS oz_reconstruct_complex_vec(
    OZ_PB_PLANES(unsigned char), int nprod, OZ_PB_OUTPUTS(oz_out_complex)) {
    oz_batch_item(c, shift_a, shift_b, out, m, c_batch, sb_batch, out_batch);
#if defined(OZ_PB_DP4A) && defined(OZ_GAUSSIAN)
    // Gaussian moduli (two products, t1 then t2, a modulus): Re and Im of four outputs
    // weighted on dp4a, each from its residues reduced into bytes (oz_pb_gaussian_bytes)
    (void)nprod;
    oz_each_group<4>(m, nb, shift_a, [&](long long i, long long j, int sa) {
        const unsigned char* cl = c + i * ldc + j;  // modulus l's t1 plane, then its t2 plane
        oz_u32 q_re[OZ_QUADS][4], q_im[OZ_QUADS][4];  // [g][e]: moduli 4g .. 4g+3 of output j + e
#pragma unroll
        for (int g = 0; g < OZ_QUADS; ++g) {
            oz_u32 w_re[4], w_im[4];
#pragma unroll
            for (int l = 4 * g; l < 4 * g + 4; ++l) {
                w_re[l - 4 * g] = w_im[l - 4 * g] = 0u;
                if (l < OZ_NUM_MODULI) {
                    const oz_u32 t1 = __ldg(reinterpret_cast<const oz_u32*>(cl));
                    const oz_u32 t2 =
                        __ldg(reinterpret_cast<const oz_u32*>(oz_pb_advance(cl, plane)));
                    oz_pb_gaussian_bytes(t1, t2, oz_moduli[l], w_re[l - 4 * g], w_im[l - 4 * g]);
                    if (l + 1 < OZ_NUM_MODULI) cl = oz_pb_advance(cl, 2 * plane);
                }
            }
            oz_pb_transpose(w_re, q_re[g]);
            oz_pb_transpose(w_im, q_im[g]);
        }
#pragma unroll
        for (int e = 0; e < 4; e += OZ_PB_DP4A_PER_WEIGHT) {
            // Re of outputs e .. e + F - 1, then their Im (one part's sums live at a time)
            oz_out_real re[OZ_PB_DP4A_PER_WEIGHT];
            oz_u32 s[OZ_PB_DP4A_PER_WEIGHT][OZ_WEIGHT_BYTES];
            oz_pb_dp4a_sums(q_re, e, oz_weight_re_quads, s);
#pragma unroll
            for (int f = 0; f < OZ_PB_DP4A_PER_WEIGHT; ++f)
                re[f] = oz_pb_finish(s[f], -(sa + shift_b[j + e + f]));
            oz_pb_dp4a_sums(q_im, e, oz_weight_im_quads, s);
#pragma unroll
            for (int f = 0; f < OZ_PB_DP4A_PER_WEIGHT; ++f) {
                oz_out_complex v;
                v.x = re[f];
                v.y = oz_pb_finish(s[f], -(sa + shift_b[j + e + f]));
                out[i * ld_out + j + e + f] = v;
            }
        }
    });
#else
    oz_each_group<OZ_PB_VEC>(m, nb, shift_a, [&](long long i, long long j, int sa) {
        oz_i64 re[OZ_PB_VEC][OZ_DIGITS], im[OZ_PB_VEC][OZ_DIGITS];
#pragma unroll
        for (int e = 0; e < OZ_PB_VEC; ++e) {
            oz_crt_clear(re[e]);
            oz_crt_clear(im[e]);
        }
        const unsigned char* cl = c + i * ldc + j;  // modulus l's first plane, then l + 1's
        const long long per_modulus = nprod * plane;
#pragma unroll
        for (int l = 0; l < OZ_NUM_MODULI; ++l, cl = oz_pb_advance(cl, per_modulus)) {
            const unsigned char* cl2 = oz_pb_advance(cl, plane);
            const oz_pb_word w1 = __ldg(reinterpret_cast<const oz_pb_word*>(cl));
            const oz_pb_word w2 = __ldg(reinterpret_cast<const oz_pb_word*>(cl2));
#ifdef OZ_GAUSSIAN
            const oz_pb_word w3 = 0, w4 = 0;  // (two products)
#else
            const unsigned char* cl3 = oz_pb_advance(cl2, plane);
            const oz_pb_word w3 = __ldg(reinterpret_cast<const oz_pb_word*>(cl3));
            const oz_pb_word w4 =
                nprod == 4 ? __ldg(reinterpret_cast<const oz_pb_word*>(oz_pb_advance(cl3, plane)))
                           : 0;
#endif
#pragma unroll
            for (int e = 0; e < OZ_PB_VEC; ++e) {
                const int t1 = oz_pb_byte(w1, e), t2 = oz_pb_byte(w2, e), t3 = oz_pb_byte(w3, e);
                oz_crt_add_complex_terms(re[e], im[e], t1, t2, t3,
                                         [=] { return oz_pb_byte(w4, e); }, nprod, l);
            }
        }
#pragma unroll
        for (int e = 0; e < OZ_PB_VEC; ++e) {
            const int s = -(sa + shift_b[j + e]);
            oz_out_complex v;
            v.x = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(re[e], s);
            v.y = (oz_out_real)oz_crt_finish<OZ_PREC, OZ_EMIN, OZ_EMAX>(im[e], s);
            out[i * ld_out + j + e] = v;
        }
    });
#endif  // OZ_PB_DP4A && OZ_GAUSSIAN
}
#endif  // OZ_PLANES_U8
