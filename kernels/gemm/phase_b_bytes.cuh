// The byte-plane Phase B's weighting on dp4a (gemm/phase_b.cu, OZ_PB_DP4A): the device
// math between the plane words and the base-2**31 digit sums of the CRT finish
// (common/ozaki_common.cuh). tests/host_harness.cpp builds it for the host (with its own
// __byte_perm, __viaddmin_u16x2 and __dp4a), so that the CPU suite runs it against exact
// integers (tests/test_kernel_math.py).
#pragma once
#include "common/ozaki_common.cuh"

// ---- the dp4a kernels' settings, real products | complex ones on a Gaussian system ----
// (each can be set by its macro; docs/perf-notes.md, "Phase B's real weighting on dp4a",
// "Complex Phase B on dp4a", "Phase B's finish: a split reconstruction, staged stores,
// constant weights")
#ifdef OZ_GAUSSIAN
#define OZ_PB_BY_KIND(real, gaussian) gaussian
#else
#define OZ_PB_BY_KIND(real, gaussian) real
#endif
// blocks of 256 threads (the engine's) an SM the kernel is built for: 3 caps the real one
// at 80 registers (~110 left to itself; at 20 moduli ptxas parks 44 bytes outside the dp4a
// loop, at 15 and 16 none); the complex one, with the bytes of Re and Im, takes 2 (128
// registers: at 80 it spills 176 bytes)
#ifndef OZ_PB_DP4A_BLOCKS
#define OZ_PB_DP4A_BLOCKS OZ_PB_BY_KIND(3, 2)
#endif
// the fold's 64-bit adds: on the ALU pipe for real outputs (the FMA-heavy pipe is the
// dp4a's), IMAD.WIDE.U32 for complex ones (bound by issue)
#ifndef OZ_PB_FOLD_WIDE
#define OZ_PB_FOLD_WIDE OZ_PB_BY_KIND(0, 1)
#endif
// outputs that share each weight: all four while the real kernel's byte-digit sums fit its
// 80 registers (up to 16 byte digits: 16 moduli), else two (one IMAD.MOV a weight and
// pair); always four in the complex kernel (one part's sums live at a time, in 128)
#ifndef OZ_PB_DP4A_PER_WEIGHT
#define OZ_PB_DP4A_PER_WEIGHT OZ_PB_BY_KIND((OZ_WEIGHT_BYTES <= 16 ? 4 : 2), 4)
#endif
// the weights as immediates (a UMOV each, shared by the dp4a of every output a thread), or
// in __constant__ memory (1: a ULDC.64 brings two): the complex kernel ran 0.3-2.6 % faster
// from constant memory (3.2 % with the two-digit quotient at 16 Gaussian moduli), the real
// one 1-5 % slower
#ifndef OZ_PB_WEIGHTS_CONSTANT
#define OZ_PB_WEIGHTS_CONSTANT OZ_PB_BY_KIND(0, 1)
#endif

// q[e] = byte e of w[0], w[1], w[2], w[3] (a 4 x 4 byte transpose: plane words of four
// moduli, four outputs each, to the four moduli of each output)
__device__ __forceinline__ void oz_pb_transpose(const oz_u32 (&w)[4], oz_u32 (&q)[4]) {
    const oz_u32 lo01 = __byte_perm(w[0], w[1], 0x5140), hi01 = __byte_perm(w[0], w[1], 0x7362);
    const oz_u32 lo23 = __byte_perm(w[2], w[3], 0x5140), hi23 = __byte_perm(w[2], w[3], 0x7362);
    q[0] = __byte_perm(lo01, lo23, 0x5410);
    q[1] = __byte_perm(lo01, lo23, 0x7632);
    q[2] = __byte_perm(hi01, hi23, 0x5410);
    q[3] = __byte_perm(hi01, hi23, 0x7632);
}

// acc += x 2**sh (sh < 32) on the ALU pipe (SHF, IADD3, IADD3.X): written in C, the
// compiler makes it one IMAD.WIDE.U32, two slots of the FMA-heavy pipe that the real
// kernel's dp4a keep busy; with OZ_PB_FOLD_WIDE 1 (the complex kernel, bound by issue
// rather than by that pipe) the one IMAD.WIDE.U32 instead of four instructions
__device__ __forceinline__ void oz_pb_add_shifted(oz_i64& acc, oz_u32 x, int sh) {
#if defined(__CUDA_ARCH__) && !OZ_PB_FOLD_WIDE
    unsigned long long r;
    asm("{\n\t.reg .u32 lo, hi, alo, ahi;\n\t"
        "shf.l.clamp.b32 lo, 0, %2, %3;\n\tshf.l.clamp.b32 hi, %2, 0, %3;\n\t"
        "mov.b64 {alo, ahi}, %1;\n\t"
        "add.cc.u32 alo, alo, lo;\n\taddc.u32 ahi, ahi, hi;\n\t"
        "mov.b64 %0, {alo, ahi};\n\t}"
        : "=l"(r)
        : "l"(acc), "r"(x), "r"(sh));
    acc = (oz_i64)r;
#else  // OZ_PB_FOLD_WIDE (one IMAD.WIDE.U32), and the host harness (tests/host_harness.cpp)
    acc = (oz_i64)((unsigned long long)acc + ((unsigned long long)x << sh));
#endif
}


// A Gaussian modulus' Re and Im take t1 + t2 and t1 - t2 of its two products' residues
// (common/ozaki_common.cuh, oz_crt_add_complex_terms), which are not bytes. Any
// representative serves the CRT (W_i is a multiple of P / p_i), so each is reduced mod p
// into [0, p) first, four outputs at a time in 16-bit lanes: the even and the odd bytes of
// the two plane words w1 (t1 of outputs j .. j+3) and w2 (t2) side by side, t1 + t2 in
// [0, 2p - 2] and t1 + p - t2 in [1, 2p - 1] (no lane carries into the next), then
// min(x, x - p mod 2**16) per lane, one VIADDMNMX.U16x2 (x - p wraps above 2**16 - 256
// where x < p), and the two halves' bytes back into one word. ~14 ALU instructions a
// modulus and four outputs, against the 2 x D8 dp4a they save (docs/perf-notes.md,
// "Complex Phase B on dp4a").
__device__ __forceinline__ void oz_pb_gaussian_bytes(oz_u32 w1, oz_u32 w2, int p, oz_u32& re,
                                                     oz_u32& im) {
    const oz_u32 lanes = 0x00FF00FFu, p2 = (oz_u32)p * 0x00010001u,
                 minus_p = (oz_u32)(0x10000 - p) * 0x00010001u;
    const oz_u32 e1 = w1 & lanes, o1 = (w1 >> 8) & lanes, e2 = w2 & lanes, o2 = (w2 >> 8) & lanes;
    const oz_u32 se = e1 + e2, so = o1 + o2, de = e1 + p2 - e2, d_o = o1 + p2 - o2;
    re = __byte_perm(__viaddmin_u16x2(se, minus_p, se), __viaddmin_u16x2(so, minus_p, so),
                     0x6240);
    im = __byte_perm(__viaddmin_u16x2(de, minus_p, de), __viaddmin_u16x2(d_o, minus_p, d_o),
                     0x6240);
}

#ifdef OZ_WEIGHT_BYTES
// ---- the weights' bytes (constants.py, weight_quads_macros) and the sums on them --------
#define OZ_QUADS ((OZ_NUM_MODULI + 3) / 4)
#if OZ_PB_WEIGHTS_CONSTANT
#define OZ_PB_WEIGHTS_SPACE __constant__
#else
#define OZ_PB_WEIGHTS_SPACE __device__ constexpr
#endif
#ifdef OZ_GAUSSIAN
// the weights of Re and Im (constants.py, gaussian_weights): complex products on byte planes
OZ_PB_WEIGHTS_SPACE oz_u32 oz_weight_re_quads[OZ_QUADS * OZ_WEIGHT_BYTES] = {OZ_WEIGHT_RE_QUADS};
OZ_PB_WEIGHTS_SPACE oz_u32 oz_weight_im_quads[OZ_QUADS * OZ_WEIGHT_BYTES] = {OZ_WEIGHT_IM_QUADS};
#else
OZ_PB_WEIGHTS_SPACE oz_u32 oz_weight_quads[OZ_QUADS * OZ_WEIGHT_BYTES] = {OZ_WEIGHT_QUADS};
#endif
static_assert(4 % OZ_PB_DP4A_PER_WEIGHT == 0, "1, 2 or 4 outputs a weight");
static_assert(8 * (OZ_WEIGHT_BYTES - 1) < 31 * OZ_DIGITS, "every weight byte in a digit");

// X = sum_b s[b] 2**(8 b) into the base-2**31 digit sums acc (cleared): two byte digits a
// 32-bit word first (s[b] + 256 s[b+1] < 2**21 + 2**29), then each word at bit 8 b, b even
// (acc[d] gets at most two of them, each below 2**60). Half the 64-bit adds of a fold by
// byte digit, and none on the FMA-heavy pipe (docs/perf-notes.md, "Phase B's real
// weighting on dp4a")
__device__ __forceinline__ void oz_pb_fold(oz_i64 (&acc)[OZ_DIGITS],
                                           const oz_u32 (&s)[OZ_WEIGHT_BYTES]) {
#pragma unroll
    for (int b = 0; b < OZ_WEIGHT_BYTES; b += 2)
        oz_pb_add_shifted(acc[8 * b / 31], b + 1 < OZ_WEIGHT_BYTES ? s[b] + (s[b + 1] << 8) : s[b],
                          8 * b % 31);
}

// s[f][b] += sum_g dp4a(q[g][e + f], quads[g D8 + b]): the byte-digit sums of outputs e ..
// e + F - 1, F = OZ_PB_DP4A_PER_WEIGHT sharing each weight (cleared here)
template <typename Q>
__device__ __forceinline__ void oz_pb_dp4a_sums(
    const oz_u32 (&q)[OZ_QUADS][4], int e, const Q& quads,
    oz_u32 (&s)[OZ_PB_DP4A_PER_WEIGHT][OZ_WEIGHT_BYTES]) {
#pragma unroll
    for (int f = 0; f < OZ_PB_DP4A_PER_WEIGHT; ++f)
#pragma unroll
        for (int b = 0; b < OZ_WEIGHT_BYTES; ++b) s[f][b] = 0;
#pragma unroll
    for (int g = 0; g < OZ_QUADS; ++g)
#pragma unroll
        for (int b = 0; b < OZ_WEIGHT_BYTES; ++b) {
            const oz_u32 w = quads[g * OZ_WEIGHT_BYTES + b];
#pragma unroll
            for (int f = 0; f < OZ_PB_DP4A_PER_WEIGHT; ++f) s[f][b] = __dp4a(q[g][e + f], w, s[f][b]);
        }
}
#endif  // OZ_WEIGHT_BYTES
