// One fused pass of the fixed-point FFT along one axis (docs/numerics.md, "FFT").
//
// A block owns FX_LINES = 8 lines of the transformed axis (neighbouring lines, so a
// strided axis is read in 128-byte rows), holds them in shared memory as fixed-point
// complex int64 numbers with one exponent per line, and runs every stage of the plan
// on INT8 tensor cores (mma.sync m16n8k16 for radix <= 8, m16n8k32 beyond; the 8 lines
// are the MMA's N):
//   entry:  x = floor(v 2^(T - E) + 1/2) from the float64 bits (E = line exponent), done
//           as stage 1 reads its operands; or, for a carried input, x = floor(z 2^(e_j +
//           T - E) + 1/2) from the previous pass's parts and line exponents
//   stage:  y = W x on byte digits (sum over digit pairs per diagonal, INT32 exact),
//           z = floor((y + 2^(h-1)) / 2^h), line max |z| for the next renormalization
//   exit:   z 2^e rounded once to float64 by integer bit assembly, or the parts and the
//           line exponents handed on (carried)
// Only integer instructions touch the data: the SASS has no FP64 arithmetic. With FX_FP8 the
// stage products run as e4m3 MMAs of 4-bit digit halves with FP32 sums (exact below 2^24,
// converted to the same INT32 diagonal sums: "FP8 Phase A" below).
// The NumPy reference is ozfft/fourier/fixed.py with ozfft/ozaki/fixed_point.py.
//
// Macros (from ozfft/engines/cuda/fft.py): FX_N, FX_STAGES, FX_R1..FX_R3, FX_DX, FX_DW,
// FX_T, FX_D (first diagonal), FX_WARPS, FX_MIN_BLOCKS (occupancy hint), FX_TWIDDLE (1: the
// second pass of a four-step plan over (outer, n_a, FX_N, inner) arrays, which multiplies
// row k_a's element j by the exact fixed-point root t[k_a j] at entry: ozfft/fourier/fixed.py,
// "multi-pass"; k_a = (line / inner) mod n_a), FX_CARRY_IN /
// FX_CARRY_OUT (carried fixed point in / out: ozfft/ozaki/fixed_point.py, "Carried fixed
// point"), FX_REAL_IN (float64 reals in, imaginary parts 0), FX_LOAD_BATCH / FX_EXIT_UNROLL
// (loads in flight per thread; exit iterations unrolled: the same integers either way),
// FX_CLUSTER (2: a cluster of two blocks shares the 8 lines, each holding half of every line
// — see "Two blocks per line" below; the same integers as one block), FX_FP8 (1: the stage
// products on FP8 tensor cores, the same integers as INT8).
// A float64 pass stores 1 in *nonfinite when a line it reads holds NaN or Inf (the flag may be
// in mapped host memory: ozfft/engines/cuda/flags.py), and with conj_in reads
// conj(x) (the first pass of an inverse transform).

#ifndef FX_R2
#define FX_R2 1
#endif
#ifndef FX_R3
#define FX_R3 1
#endif

#define FX_LINES 8
#ifndef FX_MIN_BLOCKS
#define FX_MIN_BLOCKS 1
#endif
#ifndef FX_LOAD_BATCH  // loads in flight per thread in the load sweep
#define FX_LOAD_BATCH 4
#endif
#ifndef FX_EXIT_UNROLL  // exit sweep iterations unrolled together (default: all)
#define FX_EXIT_UNROLL 64
#endif
#define FX_INT_MIN (-2147483647 - 1)
#ifndef FX_WARPS
#define FX_WARPS 8  // warps per block (16 where one block fills a multiprocessor)
#endif
#define FX_THREADS (32 * FX_WARPS)
#ifndef FX_CLUSTER  // blocks sharing each line (a thread block cluster; 1 or 2)
#define FX_CLUSTER 1
#endif
#define FX_NL (FX_N / FX_CLUSTER)  // positions of each line held by one block
#define FX_S1 (FX_N / FX_R1)       // stage 1: positions jp + FX_S1 j of task jp
// line stride in int64 words: 2 per complex number plus 2 of padding (bank spread)
#define FX_LS (2 * FX_NL + 2)
// a carried pass's source exponents (int16) in the order stage 1 reads them (fx_xe), lines
// FX_NL + 8 apart (the 8 lines of a read fall on distinct banks)
#define FX_XE_LS (FX_NL + 8)
#define FX_LAST_DIAG (FX_DX + FX_DW - 2)
#define FX_NDIAG (FX_LAST_DIAG - FX_D + 1)
#define FX_NGROUPS ((FX_NDIAG + 3) / 4)

#define FX_PRAGMA(x) _Pragma(#x)
#define FX_PRAGMA_UNROLL(n) FX_PRAGMA(unroll n)

typedef long long i64;
typedef unsigned long long u64;

__device__ __forceinline__ int fx_bitlen(u64 m) { return 64 - __clzll((long long)m); }

// frexp exponent of a nonzero float64 given by its bits (subnormals included)
__device__ __forceinline__ int fx_frexp_exp(u64 bits) {
    int ef = (int)((bits >> 52) & 0x7ff);
    u64 frac = bits & ((1ull << 52) - 1);
    return ef ? ef - 1022 : fx_bitlen(frac) - 1074;
}

// floor(v 2^(T - E) + 1/2) of the float64 with these bits, without branches: v = ±m 2^(f - 1075)
// (f = max(biased exponent, 1), m with its implicit bit), so v 2^(T - E) = x / 2^(k + 1) with
// x = ±m 2^L, L = max(T - 52, 0) and k = E + 1022 - f + max(52 - T, 0) (E is the line's
// largest frexp exponent); floor(x / 2^(k+1) + 1/2) = ((x >> k) + 1) >> 1 with floor shifts
// (exact for every sign; k clamped to 63 still gives 0). k < 0 only in lines of subnormals
// (E < -1021), where the result is the exact x 2^(-k - 1). Zero gives 0.
#define FX_TO_FIXED_L (FX_T > 52 ? FX_T - 52 : 0)
template <bool ANY_E = true>  // false: the line's E >= -1021, so k >= 0
__device__ __forceinline__ i64 fx_to_fixed(u64 bits, int line_exp) {
    const unsigned hi = (unsigned)(bits >> 32);
    const int ef = (int)((hi >> 20) & 0x7ffu);
    const u64 m = (bits & ((1ull << 52) - 1)) | ((u64)(ef != 0) << 52);
    const i64 x = (i64)(m << FX_TO_FIXED_L);
    const i64 sx = (hi >> 31) ? -x : x;
    const int k = min(line_exp + 1022 - max(ef, 1) + (FX_T < 52 ? 52 - FX_T : 0), 63);
    if (!ANY_E) return ((sx >> k) + 1) >> 1;
    return k >= 0 ? ((sx >> k) + 1) >> 1 : (sx * (1ll << (-k))) >> 1;
}

// floor(z 2^(e + T - E) + 1/2) of a carried fixed-point component z 2^e (FX_CARRY_IN): a left
// shift when e + T >= E (exact: bitlen(z) + e <= E), else ((z >> (k - 1)) + 1) >> 1 for the
// right shift k (k - 1 clamped to 63 still gives 0).
__device__ __forceinline__ i64 fx_align(i64 z, int e, int line_exp) {
    const int q = e + FX_T - line_exp;
    if (q >= 0) return z * (1ll << q);
    return ((z >> min(-q - 1, 63)) + 1) >> 1;
}

// z 2^e rounded once to nearest even, as float64 bits, when every nonzero z 2^e of the line
// is a normal number (-1022 <= e and 62 + e <= 1022: fx_exit_is_normal): normalize |z| to
// bit 62, keep 53 bits, round half to even, and add the biased exponent (a carry out of the
// mantissa bumps the exponent, as in IEEE bit assembly).
__device__ __forceinline__ bool fx_exit_is_normal(int e) { return e >= -1022 && e <= 960; }

__device__ __forceinline__ u64 fx_from_fixed_normal(i64 z, int e) {
    const u64 sign = (u64)z & (1ull << 63);
    const u64 m = z < 0 ? (u64)(-z) : (u64)z;  // < 2^63
    const unsigned hi = (unsigned)(m >> 32);
    const int top = hi ? 63 - __clz((int)hi) : 31 - __clz((int)(unsigned)m);  // -1: m = 0
    const u64 mn = m << (62 - top);  // leading bit at 62 (0 stays 0)
    // half to even at bit 10: + 2^9 - 1 + that bit; no carry out of bit 63
    const u64 q = (mn + 0x1ffu + ((mn >> 10) & 1)) >> 10;  // 2^52 <= q <= 2^53 (0 for 0)
    // the biased exponent less the one q's leading bit adds (0 for 0)
    const unsigned field = top >= 0 ? (unsigned)(top + e + 1022) : 0u;
    return sign | (((u64)field << 52) + q);
}

// z 2^e rounded once to nearest even, as float64 bits (any e: subnormals, overflow)
__device__ __forceinline__ u64 fx_from_fixed(i64 z, int e) {
    if (z == 0) return 0;
    u64 sign = z < 0 ? (1ull << 63) : 0;
    u64 m = z < 0 ? (u64)(-z) : (u64)z;
    int b = fx_bitlen(m);
    int p = max(b - 53, -1074 - e);
    u64 q = m;
    int e2 = e;
    if (p > 0) {
        if (p >= 64) {
            q = 0;
        } else {
            q = m >> p;
            u64 rem = m & ((1ull << p) - 1), half = 1ull << (p - 1);
            if (rem > half || (rem == half && (q & 1))) q += 1;
        }
        e2 = e + p;
    }
    if (q == 0) return sign;
    int bq = fx_bitlen(q);
    int top = bq - 1 + e2;
    if (top > 1023) return sign | (0x7ffull << 52);
    u64 bits;
    if (top >= -1022) {
        u64 mant = bq > 53 ? (q >> 1) : (q << (53 - bq));
        bits = ((u64)(top + 1023) << 52) | (mant & ((1ull << 52) - 1));
    } else {
        bits = q << (e2 + 1074);
    }
    return sign | bits;
}

#ifndef FX_TWIDDLE
#define FX_TWIDDLE 0
#endif
#ifndef FX_CARRY_IN  // 1: the input is carried fixed point (int64 parts, exponents per line)
#define FX_CARRY_IN 0
#endif
#ifndef FX_CARRY_OUT  // 1: write carried fixed point instead of float64
#define FX_CARRY_OUT 0
#endif
#ifndef FX_REAL_IN  // 1: the input is float64 reals (8 bytes per element)
#define FX_REAL_IN 0
#endif

// 128-bit (hi, lo) = a * b - c * d, exact for |a|, |c| < 2^63, |b|, |d| < 2^56
__device__ __forceinline__ void fx_mul_sub(i64 a, i64 b, i64 c, i64 d, i64 &hi, u64 &lo) {
    u64 l1 = (u64)a * (u64)b, l2 = (u64)c * (u64)d;
    i64 h1 = __mul64hi(a, b), h2 = __mul64hi(c, d);
    lo = l1 - l2;
    hi = h1 - h2 - (l1 < l2 ? 1 : 0);
}

// floor((hi:lo + 2^(s-1)) / 2^s) for 0 < s < 64 (fits int64)
__device__ __forceinline__ i64 fx_round_shift128(i64 hi, u64 lo, int s) {
    u64 add = 1ull << (s - 1);
    u64 nlo = lo + add;
    hi += nlo < lo ? 1 : 0;
    return (i64)((nlo >> s) | ((u64)hi << (64 - s)));
}

// (xr + i xi) <- round((xr + i xi)(tr + i ti) / 2^(S+1))   (S = 8 FX_DW - 2)
__device__ __forceinline__ void xr_xi_twiddle(i64 &xr, i64 &xi, i64 tr, i64 ti) {
    i64 hr, hi_;
    u64 lr, li;
    fx_mul_sub(xr, tr, xi, ti, hr, lr);
    fx_mul_sub(xr, ti, -xi, tr, hi_, li);
    xr = fx_round_shift128(hr, lr, 8 * FX_DW - 1);
    xi = fx_round_shift128(hi_, li, 8 * FX_DW - 1);
}

// The FX_DX byte digits of four int64 values v0..v3 (consecutive k of one B column), one
// 32-bit word per digit with byte i from v_i: two PRMTs interleave a pair of digits of
// (v0, v1) and of (v2, v3), two more split them into the two digit words.
__device__ __forceinline__ void fx_digit_words(const i64 (&v)[4], unsigned (&w)[FX_DX]) {
#pragma unroll
    for (int half = 0; half < (FX_DX + 3) / 4; ++half) {
        const unsigned x0 = (unsigned)(v[0] >> (32 * half)), x1 = (unsigned)(v[1] >> (32 * half));
        const unsigned x2 = (unsigned)(v[2] >> (32 * half)), x3 = (unsigned)(v[3] >> (32 * half));
#pragma unroll
        for (int pair = 0; pair < 2; ++pair) {
            const int a = 4 * half + 2 * pair;
            if (a >= FX_DX) continue;
            // bytes 2 pair, 2 pair + 1 of x0 and x1 interleaved: [x0.b, x1.b, x0.b', x1.b']
            const unsigned sel = pair ? 0x7362u : 0x5140u;
            const unsigned p01 = __byte_perm(x0, x1, sel), p23 = __byte_perm(x2, x3, sel);
            w[a] = __byte_perm(p01, p23, 0x5410u);
            if (a + 1 < FX_DX) w[a + 1] = __byte_perm(p01, p23, 0x7632u);
        }
    }
}

template <bool TOP>
__device__ __forceinline__ void fx_mma(int (&c)[4], const int4 &a, unsigned b0, unsigned b1) {
    if (TOP) {
        asm(
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
    } else {
        asm(
            "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
    }
}

// m16n8k16: the first k half of the m16n8k32 fragments (A registers a0, a1; B register b0)
template <bool TOP>
__device__ __forceinline__ void fx_mma(int (&c)[4], const int2 &a, unsigned b0, unsigned) {
    if (TOP) {
        asm(
            "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
            "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
            : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
            : "r"(a.x), "r"(a.y), "r"(b0));
    } else {
        asm(
            "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32 "
            "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
            : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
            : "r"(a.x), "r"(a.y), "r"(b0));
    }
}

// acc[q][d] += A B for the four accumulator registers q of diagonal d (Frag: int2 for
// m16n8k16, int4 for m16n8k32)
template <bool TOP, typename Frag>
__device__ __forceinline__ void fx_mma_acc(int (&acc)[4][FX_NDIAG], int d, const Frag &a,
                                           unsigned b0, unsigned b1) {
    int c[4] = {acc[0][d], acc[1][d], acc[2][d], acc[3][d]};
    fx_mma<TOP>(c, a, b0, b1);
    acc[0][d] = c[0];
    acc[1][d] = c[1];
    acc[2][d] = c[2];
    acc[3][d] = c[3];
}

// Every digit pair (c, a) with c + a >= D of one k chunk: acc[d - D] += W_c X_a, the
// top data digit (a = FX_DX - 1) signed
template <typename Frag, int KC>
__device__ __forceinline__ void fx_digit_products(int (&acc)[4][FX_NDIAG], const Frag (&af)[FX_DW],
                                                  const unsigned (&bw)[FX_DX][KC][2], int kc) {
#pragma unroll
    for (int c = 0; c < FX_DW; ++c) {
#pragma unroll
        for (int a = 0; a < FX_DX; ++a) {
            if (a + c < FX_D) continue;
            if (a == FX_DX - 1)
                fx_mma_acc<true>(acc, a + c - FX_D, af[c], bw[a][kc][0], bw[a][kc][1]);
            else
                fx_mma_acc<false>(acc, a + c - FX_D, af[c], bw[a][kc][0], bw[a][kc][1]);
        }
    }
}

#ifndef FX_FP8  // 1: the stage products on FP8 (e4m3) tensor cores instead of INT8
#define FX_FP8 0
#endif
#if FX_FP8
// FP8 Phase A (docs/numerics.md, "FP8 Phase A of the FFT"): e4m3 holds every integer of
// magnitude <= 16 and 16 times every one of <= 8. A byte digit splits into 4-bit halves,
// matrix digit c = 16 c_h + c_l and data digit a = 16 a_h + a_l (c_l, a_l in [0, 15]; c_h in
// [-8, 7]; a_h in [0, 15], or [-8, 7] for the signed top digit), so
//     c a = (16 c_h) (16 a_h) + (16 c_h) a_l + c_l (16 a_h) + c_l a_l,
// four e4m3 products whose terms are at most 128 * 240 + 128 * 15 + 15 * 240 + 15 * 15 =
// 36465 in magnitude: a diagonal's FP32 sum over <= 7 digit pairs and k <= 64 stays below
// 7 * 64 * 36465 < 2^24, so it is exact (FP32 accumulation of mma.sync e4m3 on Hopper is
// exact below 2^24: docs/numerics.md, "FP8 accumulation"), and converted once it is the
// INT8 path's acc_d bit for bit. Longer k (radix 64) converts each pair of 32-chunks.

// e4m3 codes of the four nibbles held one per byte of n (values 0..15; SIGNED: the byte's
// nibble is two's complement, -8..7), times 16 when X16: 1024 + v as float16 has the bits
// 0x6400 | v, so one f16x2 subtract (or fused multiply-add) gives v (16 v) exactly, and a
// saturating cvt the e4m3 codes (exact: every value is an e4m3 number)
template <bool X16, bool SIGNED>
__device__ __forceinline__ unsigned fx_e4m3_nibbles(unsigned n) {
    if (SIGNED) n ^= 0x08080808u;  // v = (n ^ 8) - 8: 1024 + (n ^ 8) less 1032 below
    const unsigned h01 = __byte_perm(n, 0x64646464u, 0x5140u);
    const unsigned h23 = __byte_perm(n, 0x64646464u, 0x7362u);
    // float16 constants: 1024 = 0x6400, 1032 = 0x6408, 16 = 0x4c00, -16384 = 0xf400,
    // -16512 = 0xf408
    constexpr unsigned OFF = SIGNED ? 0x64086408u : 0x64006400u;
    constexpr unsigned SHIFT = SIGNED ? 0xf408f408u : 0xf400f400u;
    unsigned f01, f23;
    if (X16) {
        asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(f01) : "r"(h01), "r"(0x4c004c00u), "r"(SHIFT));
        asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(f23) : "r"(h23), "r"(0x4c004c00u), "r"(SHIFT));
    } else {
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(f01) : "r"(h01), "r"(OFF));
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(f23) : "r"(h23), "r"(OFF));
    }
    unsigned short e01, e23;
    asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(e01) : "r"(f01));
    asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(e23) : "r"(f23));
    return (unsigned)e01 | ((unsigned)e23 << 16);
}

// c += A B on e4m3 tensor cores, FP32 accumulation (m16n8k32; the A and B fragments have
// the 8-bit layout of the INT8 MMA)
__device__ __forceinline__ void fx_mma_fp8(float (&c)[4], const int4 &a, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

// the bound above: a diagonal's pairs (at most min(DX, DW)) over two 32-chunks
static_assert((long long)(FX_DW < FX_DX ? FX_DW : FX_DX) * 64 * 36465 < (1ll << 24),
              "FP32 sums of FP8 sub-digit products must stay below 2^24");

// Every digit pair (c, a) with c + a >= D of one k chunk: facc[d - D] += A (Bh + Bl) with
// the e4m3 words Bh (16 a_h) and Bl (a_l) of data digit a made from its byte word as it is
// used (data digit outermost, so only one digit's words are live). HALF (k = 2r <= 16): A is
// [16 c_h | c_l] along k and each B word stands in both k halves, so two MMAs give all four
// products; else A is one of the planes 16 c_h, c_l.
template <bool HALF, int KC>
__device__ __forceinline__ void fx_digit_products_fp8(float (&facc)[4][FX_NDIAG],
                                                      const int4 (&af)[FX_DW],
                                                      const unsigned (&bw)[FX_DX][KC][2], int kc) {
#pragma unroll
    for (int a = 0; a < FX_DX; ++a) {
        if (a + FX_DW - 1 < FX_D) continue;
        unsigned bh[2], bl[2];
#pragma unroll
        for (int h = 0; h < (HALF ? 1 : 2); ++h) {
            const unsigned lo = bw[a][kc][h] & 0x0f0f0f0fu, hi = (bw[a][kc][h] >> 4) & 0x0f0f0f0fu;
            bl[h] = fx_e4m3_nibbles<false, false>(lo);
            bh[h] = a == FX_DX - 1 ? fx_e4m3_nibbles<true, true>(hi) : fx_e4m3_nibbles<true, false>(hi);
        }
        if (HALF) bh[1] = bh[0], bl[1] = bl[0];
#pragma unroll
        for (int c = 0; c < FX_DW; ++c) {
            if (a + c < FX_D) continue;
            float t[4] = {facc[0][a + c - FX_D], facc[1][a + c - FX_D], facc[2][a + c - FX_D],
                          facc[3][a + c - FX_D]};
            fx_mma_fp8(t, af[c], bh[0], bh[1]);
            fx_mma_fp8(t, af[c], bl[0], bl[1]);
#pragma unroll
            for (int q = 0; q < 4; ++q) facc[q][a + c - FX_D] = t[q];
        }
    }
}
#endif

// floor((sum_{d >= D} 256^(d - D) acc_d + 2^(hp - 1)) / 2^hp), exact (|z| < 2^63): the four
// lowest diagonals and the rounding constant in `low` (< 2^49), the rest in `high`, and
// floor((high 2^32 + low) / 2^hp) = high 2^(32 - hp) + floor(low / 2^hp) for hp <= 32.
// Radices whose diagonal sums stay below 2^31 / 257 first add neighbouring diagonals in 32
// bits (acc_2k + 256 acc_2k+1), so only half the terms need 64-bit multiply-adds.
static_assert(FX_NDIAG <= 9, "the high group holds at most 5 diagonals");
#define FX_MIN_DIGITS (FX_DW < FX_DX ? FX_DW : FX_DX)
template <int HP, int R>
__device__ __forceinline__ i64 fx_combine(const int (&acc)[FX_NDIAG]) {
    static_assert(HP >= 1 && HP <= 32, "rounding shift out of the split's range");
    // |acc_d| <= (pairs of d) 2R 128 255: pairs of neighbours fit in 32 bits
    constexpr bool PAIRS = 257ll * FX_MIN_DIGITS * 2 * R * 128 * 255 < (1ll << 31);
    i64 low = 1ll << (HP - 1), high = 0;
    if (PAIRS) {
#pragma unroll
        for (int k = 0; 2 * k < FX_NDIAG; ++k) {
            const int p = 2 * k + 1 < FX_NDIAG ? acc[2 * k] + acc[2 * k + 1] * 256 : acc[2 * k];
            if (k < 2)
                low += (i64)p * (1ll << (16 * k));
            else
                high += (i64)p * (1ll << (16 * (k - 2)));
        }
    } else {
#pragma unroll
        for (int i = 0; i < FX_NDIAG; ++i) {
            if (i < 4)
                low += (i64)acc[i] * (1ll << (8 * i));
            else
                high += (i64)acc[i] * (1ll << (8 * (i - 4)));
        }
    }
    if (FX_NDIAG <= 4) return low >> HP;
    return high * (1ll << (32 - HP)) + (low >> HP);
}

// Line and index along it (of the block's FX_NL) of a block's flattened index: whole lines
// one after another when the axis is contiguous (inner == 1: coalesced along the line), else
// the 8 neighbouring lines interleaved (coalesced across them).
__device__ __forceinline__ void fx_line_pos(int idx, long long inner, int &line, int &pos) {
    const unsigned u = (unsigned)idx;  // idx >= 0: unsigned division by the constants
    if (inner == 1) {
        line = (int)(u / FX_NL);
        pos = (int)(u % FX_NL);
    } else {
        line = (int)(u % FX_LINES);
        pos = (int)(u / FX_LINES);
    }
}

// The last stage leaves output k = k1 + r1 (k2 + r2 k3) at position pos = (k1 r2 + k2) r3 + k3
// (digit-reversed), and the exit walks natural k so that its global stores are coalesced.
// Eight consecutive k differ in k1 only, so their positions lie N / r1 apart: one shared
// memory bank group. The last stage therefore stores position pos at fx_swizzle(pos) = pos
// XOR (k1 mod 8) — within the 8 positions of its own task's block when the last radix is a
// multiple of 8 (identity otherwise, and for one-stage plans where pos = k).
#define FX_R_LAST (FX_STAGES == 1 ? FX_R1 : FX_STAGES == 2 ? FX_R2 : FX_R3)
#define FX_SWIZZLE (FX_STAGES >= 2 && FX_R_LAST % 8 == 0)
__device__ __forceinline__ int fx_swizzle(int pos) {  // pos >= 0: unsigned division
    return FX_SWIZZLE ? (int)((unsigned)pos ^ (((unsigned)pos / (FX_N / FX_R1)) & 7u)) : pos;
}

// Two blocks per line (FX_CLUSTER 2, a thread block cluster): where 8 lines of FX_N fill a
// multiprocessor's shared memory alone (FX_N = 1024), block `rank` of the cluster holds half
// of each line, so two or three blocks share a multiprocessor and overlap their load, stage
// and exit phases while every MMA still carries 8 lines (docs/perf-notes.md, round 6).
// Stage 1's task jp (positions jp + S1 j) runs on block jp / (S1 / 2); a later stage's task
// (positions inside one half of the line) on the block of that half, p / NL. Stage 1's slot
// of block c's position p = S1 j + c S1 / 2 + u (u < S1 / 2) is S1 (j mod R1 / 2) + (S1 / 2)
// [j >= R1 / 2] + u: a position that stays (j in block c's half) already sits at its later
// slot p - c NL, and the positions that leave fill exactly the slots where the other block's
// leaving positions arrive (slot -+ S1 / 2): the exchange after stage 1 moves half the
// elements once, between two cluster barriers. Line maxima and ORs are combined through the
// other block's shared memory (DSMEM). With FX_CLUSTER 1 every map below is the identity.
#if FX_CLUSTER > 1
static_assert(FX_CLUSTER == 2, "one or two blocks per line");
static_assert(FX_R1 % 2 == 0 && FX_S1 % 2 == 0 && FX_STAGES >= 2, "two halves per stage");
static_assert(!FX_SWIZZLE || FX_NL % 8 == 0, "the last stage's swizzle stays in a half");
__device__ __forceinline__ int fx_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return (int)r;
}
// all threads of both blocks; shared-memory writes before it are visible to both after it
__device__ __forceinline__ void fx_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}
// the shared::cluster address of *p in the other block
__device__ __forceinline__ unsigned fx_peer(const void *p, int rank) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank ^ 1));
    return r;
}
__device__ __forceinline__ unsigned fx_peer_u32(const void *p, int rank) {
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(fx_peer(p, rank)) : "memory");
    return v;
}
__device__ __forceinline__ u64 fx_peer_u64(const void *p, int rank) {
    u64 v;
    asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(fx_peer(p, rank)) : "memory");
    return v;
}
#else
__device__ __forceinline__ int fx_rank() { return 0; }
__device__ __forceinline__ void fx_cluster_sync() { __syncthreads(); }
#endif

// stage 1's slot of position p = jp + S1 j is fx_slot1_j(j) + jp - rank S1 / 2 (the block's
// own task number); the block's i-th element in load order (increasing p) is at position
// fx_pos1 and slot fx_slot1_of
// (indices are non-negative: unsigned division by the constants)
__device__ __forceinline__ int fx_slot1_j(int j) {
    if (FX_CLUSTER == 1) return FX_S1 * j;
    const unsigned u = (unsigned)j;
    return (int)(FX_S1 * (u % (FX_R1 / 2)) + (FX_S1 / 2) * (u >= FX_R1 / 2));
}
__device__ __forceinline__ int fx_pos1(int i, int rank) {
    if (FX_CLUSTER == 1) return i;
    const unsigned u = (unsigned)i;
    return (int)(FX_S1 * (u / (FX_S1 / 2)) + u % (FX_S1 / 2)) + rank * (FX_S1 / 2);
}
__device__ __forceinline__ int fx_slot1_of(int i) {
    if (FX_CLUSTER == 1) return i;
    const unsigned u = (unsigned)i;
    return fx_slot1_j((int)(u / (FX_S1 / 2))) + (int)(u % (FX_S1 / 2));
}
// the index of a carried element's source exponent: the R1 positions jp + S1 j of stage 1's
// task jp side by side, by the block's own task number (jp - rank S1 / 2)
__device__ __forceinline__ int fx_xe_task(int line, int my_task, int j) {
    return line * FX_XE_LS + my_task * FX_R1 + j;
}
__device__ __forceinline__ int fx_xe(int line, int p, int rank) {
    const unsigned u = (unsigned)p;
    return fx_xe_task(line, (int)(u % FX_S1) - rank * (FX_S1 / FX_CLUSTER), (int)(u / FX_S1));
}
// the natural output index k of the block's i-th exit element (k mod R1 in its half)
__device__ __forceinline__ int fx_exit_k(int i, int rank) {
    if (FX_CLUSTER == 1) return i;
    const unsigned u = (unsigned)i;
    return (int)(FX_R1 * (u / (FX_R1 / 2)) + u % (FX_R1 / 2)) + rank * (FX_R1 / 2);
}

// The sweeps (load, exit) give thread t the block's elements idx = it FX_THREADS + t (it =
// 0, 1, ...) as line and index i (fx_line_pos). Where a line takes whole iterations (a
// strided axis: line t mod 8; or FX_THREADS dividing FX_NL), i = i_t + I with i_t of the
// thread alone and I, the line too, fixed by `it`: in an unrolled sweep every index map below
// is a per-thread value plus a compile-time offset.
template <bool CONTIG>
__device__ __forceinline__ constexpr bool fx_sweep_split() {
    return !CONTIG || FX_NL % FX_THREADS == 0;
}
template <bool CONTIG>
__device__ __forceinline__ void fx_sweep_pos(int it, int &line, unsigned &i_t, unsigned &I) {
    const unsigned tid = threadIdx.x;
    if (fx_sweep_split<CONTIG>()) {
        line = CONTIG ? it * FX_THREADS / FX_NL : (int)(tid % FX_LINES);
        i_t = CONTIG ? tid : tid / FX_LINES;
        I = CONTIG ? it * FX_THREADS % FX_NL : it * (FX_THREADS / FX_LINES);
    } else {
        int i;
        fx_line_pos(it * FX_THREADS + (int)tid, 1, line, i);
        i_t = (unsigned)i;
        I = 0;
    }
}
// whether thread t's element after `it` lies on another line (or there is none)
template <bool CONTIG, int ITERS>
__device__ __forceinline__ constexpr bool fx_sweep_line_ends(int it) {
    return !fx_sweep_split<CONTIG>() || it + 1 >= ITERS ||
           (CONTIG && (it + 1) * FX_THREADS / FX_NL != it * FX_THREADS / FX_NL);
}
// fx_pos1, fx_slot1_of and fx_exit_k of i = i_t + I (two blocks per line: with r = I mod
// (S1 / 2), resp. (r1 / 2), the maps advance by 2 (I - r) from their value at i_t + r)
__device__ __forceinline__ int fx_pos1_at(unsigned i_t, unsigned I, int rank) {
    if (FX_CLUSTER == 1) return (int)(i_t + I);
    const unsigned r = I % (FX_S1 / 2);
    return fx_pos1((int)(i_t + r), rank) + 2 * (int)(I - r);
}
__device__ __forceinline__ int fx_slot1_at(unsigned i_t, unsigned I) {
    if (FX_CLUSTER == 1) return (int)(i_t + I);
    const unsigned r = I % (FX_S1 / 2), u = i_t + r;
    return fx_slot1_j((int)(u / (FX_S1 / 2) + (I - r) / (FX_S1 / 2))) + (int)(u % (FX_S1 / 2));
}
__device__ __forceinline__ unsigned fx_exit_k_at(unsigned i_t, unsigned I, int rank) {
    if (FX_CLUSTER == 1) return i_t + I;
    const unsigned r = I % (FX_R1 / 2);
    return (unsigned)fx_exit_k((int)(i_t + r), rank) + 2 * (I - r);
}

__host__ __device__ constexpr int fx_ceil_log2(int r) {
    return r <= 1 ? 0 : 1 + fx_ceil_log2((r + 1) / 2);
}

template <int CONVERT>
__device__ __forceinline__ i64 fx_stage_input(i64 x, int s, int line_exp, int e) {
    if (CONVERT == 1) return fx_to_fixed<false>((u64)x, line_exp);
    if (CONVERT == 2) return fx_to_fixed<true>((u64)x, line_exp);
    if (CONVERT == 3) return fx_align(x, e, line_exp);
    return x << s;
}

// One stage: radix R, PREV the previous radix (1 for the first), KB = r_1 ... r_{l-1}.
// CONVERT (first stage of a pass without twiddles): xs holds the raw input, converted to
// fixed point with the line exponents as the B fragments are built (1: float64 bits, every
// line's E >= -1021; 2: float64 bits, any E; 3: carried fixed point z with its exponent e in
// xe).
// With two blocks per line (FX_CLUSTER 2) the block of `rank` runs the tasks of its half,
// in stage 1's slots (FIRST) or the later stages' (p - rank NL).
template <int R, int PREV, int KB, bool FIRST, bool RENORM, int CONVERT = 0, bool LAST = false>
__device__ void fx_stage(i64 *xs, const int4 *__restrict__ frag, const u64 *or_in, u64 *or_out,
                         int *shift_out, int rank, const int *line_exp = nullptr,
                         const short *xe = nullptr) {
    constexpr int M = FX_N / KB;      // remaining input positions per output digit prefix
    constexpr int SUFFIX = M / R;
    constexpr int TASKS = KB * SUFFIX;  // vectors per line
    static_assert(TASKS % FX_CLUSTER == 0, "the blocks of a line share its tasks evenly");
    constexpr int MY_TASKS = TASKS / FX_CLUSTER;
    constexpr int MT = (2 * R + 15) / 16;
    constexpr int KC = (2 * R + 31) / 32;
    constexpr bool HALF = 2 * R <= 16;  // k <= 16: m16n8k16 MMAs
    // h' = h - 8 D with h = S + ceil(log2 R) + 1, S = 8 DW - 2 (ozfft/ozaki/fixed_point.py)
    constexpr int HP = (8 * FX_DW - 2) + fx_ceil_log2(R) + 1 - 8 * FX_D;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gid = lane >> 2, tig = lane & 3;

    // exact renormalization of the B column's line (the MMA's N index = line = gid)
    int s = 0;
    if (RENORM) {
        u64 mx = or_in[gid];
        s = mx ? max(FX_T - fx_bitlen(mx), 0) : 0;
        if (threadIdx.x < FX_LINES) {
            u64 mine = or_in[threadIdx.x];
            shift_out[threadIdx.x] = mine ? max(FX_T - fx_bitlen(mine), 0) : 0;
        }
    }
    u64 my_or[2] = {0, 0};
    const int e_in = CONVERT ? line_exp[gid] : 0;

    for (int my_task = warp; my_task < MY_TASKS; my_task += FX_WARPS) {
        const int task = rank * MY_TASKS + my_task;
        const int kidx = task / SUFFIX, jp = task % SUFFIX;
        // group g = (kidx mod PREV) SUFFIX + jp = task mod (PREV SUFFIX): fixed per warp when
        // the warps tile the groups (then the A fragments stay in registers across tasks)
        constexpr int G = PREV * SUFFIX;
        constexpr bool WARP_GROUP = FX_WARPS % G == 0 && MY_TASKS % G == 0;
        const int g = FIRST ? 0 : (WARP_GROUP ? warp % G : task % G);
        const int base = kidx * M + jp;
        const int lbase = base - rank * FX_NL;  // slot of base in a later stage
        // B fragments: digits of x[k = 2 j + part] for this line, 4 consecutive k per word
        unsigned bw[FX_DX][KC][2];
#pragma unroll
        for (int kc = 0; kc < KC; ++kc) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                // k = 4 tig + i (+16 h, +32 kc): elements j0 and j0 + 1, (re, im) each
                const int j0 = kc * 16 + h * 8 + tig * 2;
                i64 v[4] = {0, 0, 0, 0};
                if (!(HALF && h == 1)) {
                    if (j0 < R) {
                        const int slot = FIRST ? fx_slot1_j(j0) + my_task : lbase + j0 * SUFFIX;
                        const longlong2 e = *reinterpret_cast<const longlong2 *>(xs + gid * FX_LS + 2 * slot);
                        const int ee = CONVERT == 3 ? xe[fx_xe_task(gid, my_task, j0)] : 0;
                        v[0] = fx_stage_input<CONVERT>(e.x, s, e_in, ee);
                        v[1] = fx_stage_input<CONVERT>(e.y, s, e_in, ee);
                    }
                    if (j0 + 1 < R) {
                        const int slot =
                            FIRST ? fx_slot1_j(j0 + 1) + my_task : lbase + (j0 + 1) * SUFFIX;
                        const longlong2 e = *reinterpret_cast<const longlong2 *>(xs + gid * FX_LS + 2 * slot);
                        const int ee = CONVERT == 3 ? xe[fx_xe_task(gid, my_task, j0 + 1)] : 0;
                        v[2] = fx_stage_input<CONVERT>(e.x, s, e_in, ee);
                        v[3] = fx_stage_input<CONVERT>(e.y, s, e_in, ee);
                    }
                }
                unsigned w[FX_DX];
                fx_digit_words(v, w);
#pragma unroll
                for (int a = 0; a < FX_DX; ++a) bw[a][kc][h] = w[a];
            }
        }
        __syncwarp();
#pragma unroll 1
        for (int mt = 0; mt < MT; ++mt) {
            int acc[4][FX_NDIAG];
#pragma unroll
            for (int q = 0; q < 4; ++q)
#pragma unroll
                for (int d = 0; d < FX_NDIAG; ++d) acc[q][d] = 0;
#if FX_FP8
            // fragments (ozfft/engines/cuda/fft.py, fp8_fragment_layout): HALF, one k32 tile
            // [16 c_h | c_l] per matrix digit; else the planes 16 c_h and c_l of each chunk
            constexpr int PLANES = HALF ? 1 : 2;
            constexpr int GROUP = 2;  // 32-chunks summed in FP32 before the conversion
            float facc[4][FX_NDIAG];
#pragma unroll
            for (int kc = 0; kc < KC; ++kc) {
                if (kc % GROUP == 0) {
#pragma unroll
                    for (int q = 0; q < 4; ++q)
#pragma unroll
                        for (int d = 0; d < FX_NDIAG; ++d) facc[q][d] = 0.f;
                }
#pragma unroll
                for (int p = 0; p < PLANES; ++p) {
                    int4 af[FX_DW];
#pragma unroll
                    for (int c = 0; c < FX_DW; ++c)
                        af[c] = frag[((((g * MT + mt) * KC + kc) * PLANES + p) * FX_DW + c) * 32 + lane];
                    fx_digit_products_fp8<HALF, KC>(facc, af, bw, kc);
                }
                if (kc % GROUP == GROUP - 1 || kc == KC - 1) {
#pragma unroll
                    for (int q = 0; q < 4; ++q)
#pragma unroll
                        for (int d = 0; d < FX_NDIAG; ++d)
                            acc[q][d] = (kc < GROUP ? 0 : acc[q][d]) + __float2int_rn(facc[q][d]);
                }
            }
#else
            if (HALF) {
                // 2R <= 16: one m16n8k16 MMA per digit pair, operands straight from the
                // registers they were loaded into (no packing moves)
                // (ozfft/engines/cuda/fft.py, fragment_layout: a0 and a1 alone, 8 bytes per lane)
                int2 af[FX_DW];
#pragma unroll
                for (int c = 0; c < FX_DW; ++c)
                    af[c] = reinterpret_cast<const int2 *>(frag)[((g * MT + mt) * FX_DW + c) * 32 + lane];
                fx_digit_products(acc, af, bw, 0);
            } else {
#pragma unroll
                for (int kc = 0; kc < KC; ++kc) {
                    int4 af[FX_DW];
#pragma unroll
                    for (int c = 0; c < FX_DW; ++c)
                        af[c] = frag[(((g * MT + mt) * KC + kc) * FX_DW + c) * 32 + lane];
                    fx_digit_products(acc, af, bw, kc);
                }
            }
#endif
            // epilogue: c0 (row gid, col 2 tig), c1 (gid, 2 tig + 1), c2/c3 rows + 8
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int row = mt * 16 + gid + 8 * (q >> 1);
                const int line = 2 * tig + (q & 1);
                i64 z = fx_combine<HP, R>(acc[q]);
                if (row < 2 * R) {
                    const int pos = base + (row >> 1) * SUFFIX;
                    const int slot = FIRST  ? fx_slot1_j(row >> 1) + my_task
                                     : LAST ? fx_swizzle(pos) - rank * FX_NL
                                            : lbase + (row >> 1) * SUFFIX;
                    xs[line * FX_LS + 2 * slot + (row & 1)] = z;
                    if (!LAST) my_or[q & 1] |= (u64)(z < 0 ? -z : z);
                }
            }
        }
    }
    // OR of |z| per line (bitlen of the OR = bitlen of the max): lanes with one tig; the
    // last stage's result is not renormalized again
    if (!LAST) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            u64 v = my_or[c];
            v |= __shfl_xor_sync(0xffffffffu, v, 4);
            v |= __shfl_xor_sync(0xffffffffu, v, 8);
            v |= __shfl_xor_sync(0xffffffffu, v, 16);
            if (gid == 0 && v) atomicOr(&or_out[2 * tig + c], v);
        }
    }
}

// Per line, the largest key of the warp's lanes into target[line] (atomicMax): lanes of one
// line are contiguous (contig, FX_NL a multiple of 32: one REDUX per warp) or 8 apart
// (strided: two shuffles); lanes past the block's elements carry a neutral key.
template <typename T>
__device__ __forceinline__ void fx_line_max(T key, int line, T *target, bool contig) {
    if (contig && FX_NL % 32 == 0) {
        key = __reduce_max_sync(0xffffffffu, key);
        if ((threadIdx.x & 31) == 0 && line < FX_LINES) atomicMax(&target[line], key);
    } else if (!contig) {
        key = max(key, __shfl_xor_sync(0xffffffffu, key, 8));
        key = max(key, __shfl_xor_sync(0xffffffffu, key, 16));
        if ((threadIdx.x & 31) < 8) atomicMax(&target[line], key);
    } else if (line < FX_LINES) {
        atomicMax(&target[line], key);
    }
}

// The load sweep: raw float64 bits of the block's lines (its FX_NL positions of each) into
// shared memory, and per line the largest |component bits| >> 32 (atomicMax into line_key).
// CONTIG (inner == 1): the lines are one contiguous run of the array. Every thread runs the
// same number of iterations (the warp reductions need whole warps); FX_LOAD_BATCH
// independent 16-byte loads per thread.
template <bool CONTIG, bool FULL>  // FULL: all FX_LINES lines exist (no guards)
__device__ __forceinline__ void fx_load(const ulonglong2 *__restrict__ in, i64 *xs,
                                        const long long *line_base, unsigned *line_key,
                                        long long inner, long long first, long long lines,
                                        u64 conj_bit, int rank) {
    constexpr int ITERS = (FX_LINES * FX_NL + FX_THREADS - 1) / FX_THREADS;
    constexpr bool WHOLE = FX_LINES * FX_NL % FX_THREADS == 0;
    const int count = FULL ? FX_LINES * FX_NL : (int)min((long long)FX_LINES, lines - first) * FX_NL;
#if FX_REAL_IN  // float64 reals, imaginary parts 0
    const u64 *real = reinterpret_cast<const u64 *>(in);
#else
    const ulonglong2 *chunk = in + first * FX_N;
#endif
    unsigned key = 0;  // the largest key of the thread's elements of the current line
    constexpr int ROUNDS = (ITERS + FX_LOAD_BATCH - 1) / FX_LOAD_BATCH;
#pragma unroll(fx_sweep_split<CONTIG>() ? ROUNDS : 1)
    for (int round = 0; round < ROUNDS; ++round) {
        ulonglong2 v[FX_LOAD_BATCH];
#pragma unroll
        for (int u = 0; u < FX_LOAD_BATCH; ++u) {
            const int it = round * FX_LOAD_BATCH + u;
            v[u] = make_ulonglong2(0, 0);
            if (it >= ITERS) break;
            const int idx = it * FX_THREADS + (int)threadIdx.x;
            const bool inside = WHOLE || idx < FX_LINES * FX_NL;
            int line;
            unsigned i_t, I;
            fx_sweep_pos<CONTIG>(it, line, i_t, I);
            const int j = fx_pos1_at(i_t, I, rank);
            if (CONTIG) {
                const int at = FX_CLUSTER == 1 ? idx : line * FX_N + j;  // within the run
#if FX_REAL_IN
                if ((FULL && WHOLE) || idx < count) v[u].x = real[first * FX_N + at];
#else
                if ((FULL && WHOLE) || idx < count) v[u] = chunk[at];
#endif
            } else {
                if (inside) {
                    const long long b = line_base[line];
#if FX_REAL_IN
                    if (FULL || b >= 0) v[u].x = real[b + (long long)j * inner];
#else
                    if (FULL || b >= 0) v[u] = in[b + (long long)j * inner];
#endif
                }
            }
        }
#pragma unroll
        for (int u = 0; u < FX_LOAD_BATCH; ++u) {
            const int it = round * FX_LOAD_BATCH + u;
            if (it >= ITERS) break;
            const int idx = it * FX_THREADS + (int)threadIdx.x;
            int line;
            unsigned i_t, I;
            fx_sweep_pos<CONTIG>(it, line, i_t, I);
            v[u].y ^= conj_bit;  // conj(x): the imaginary part's sign bit (exact, -0 included)
            if (WHOLE || idx < FX_LINES * FX_NL)
                *reinterpret_cast<ulonglong2 *>(xs + line * FX_LS + 2 * fx_slot1_at(i_t, I)) = v[u];
            key = max(key, max((unsigned)(v[u].x >> 32) & 0x7fffffffu,
                               (unsigned)(v[u].y >> 32) & 0x7fffffffu));
            if (fx_sweep_line_ends<CONTIG, ITERS>(it)) {
                fx_line_max(key, line, line_key, CONTIG);
                key = 0;
            }
        }
    }
}

// The load sweep of a carried pass (FX_CARRY_IN): int64 component pairs z of the previous
// pass and, per element, that pass's line exponent e (exps_in[pbase + j q]); keeps z in xs and
// e in xe, and per line E = max(bitlen(|z_re| | |z_im|) + e) over nonzero elements (the frexp
// exponent of z 2^e) into line_exp.
template <bool CONTIG>
__device__ __forceinline__ void fx_load_carried(const ulonglong2 *__restrict__ in, i64 *xs,
                                                short *xe, const int *__restrict__ exps_in,
                                                const long long *line_base,
                                                const long long *line_pbase, long long p_q,
                                                int *line_exp, long long inner, int rank) {
    constexpr int ITERS = (FX_LINES * FX_NL + FX_THREADS - 1) / FX_THREADS;
    int key = FX_INT_MIN;  // the largest key of the thread's elements of the current line
    constexpr int ROUNDS = (ITERS + FX_LOAD_BATCH - 1) / FX_LOAD_BATCH;
#pragma unroll(fx_sweep_split<CONTIG>() ? ROUNDS : 1)
    for (int round = 0; round < ROUNDS; ++round) {
        ulonglong2 v[FX_LOAD_BATCH];
        int e[FX_LOAD_BATCH];
#pragma unroll
        for (int u = 0; u < FX_LOAD_BATCH; ++u) {  // the loads of the batch in flight together
            const int it = round * FX_LOAD_BATCH + u;
            v[u] = make_ulonglong2(0, 0);
            e[u] = 0;
            if (it >= ITERS) break;
            const int idx = it * FX_THREADS + (int)threadIdx.x;
            int line;
            unsigned i_t, I;
            fx_sweep_pos<CONTIG>(it, line, i_t, I);
            const int j = fx_pos1_at(i_t, I, rank);
            if (idx < FX_LINES * FX_NL && line_base[line] >= 0) {
                v[u] = in[line_base[line] + (CONTIG ? (long long)j : (long long)j * inner)];
                e[u] = exps_in[line_pbase[line] + (long long)j * p_q];
            }
        }
#pragma unroll
        for (int u = 0; u < FX_LOAD_BATCH; ++u) {
            const int it = round * FX_LOAD_BATCH + u;
            if (it >= ITERS) break;
            const int idx = it * FX_THREADS + (int)threadIdx.x;
            int line;
            unsigned i_t, I;
            fx_sweep_pos<CONTIG>(it, line, i_t, I);
            const int j = fx_pos1_at(i_t, I, rank);
            if (idx < FX_LINES * FX_NL) {
                *reinterpret_cast<ulonglong2 *>(xs + line * FX_LS + 2 * fx_slot1_at(i_t, I)) = v[u];
                xe[fx_xe(line, j, rank)] = (short)e[u];
                const i64 zr = (i64)v[u].x, zi = (i64)v[u].y;
                const u64 m = (u64)(zr < 0 ? -zr : zr) | (u64)(zi < 0 ? -zi : zi);
                if (m) key = max(key, fx_bitlen(m) + e[u]);
            }
            if (fx_sweep_line_ends<CONTIG, ITERS>(it)) {
                fx_line_max(key, line, line_exp, CONTIG);
                key = FX_INT_MIN;
            }
        }
    }
}

// The last stage's position of output k before the swizzle, (k1 r2 + k2) r3 + k3 (as an
// arithmetic formula of k, so that fx_exit_pos(k + D m) = fx_exit_pos(k) + m for D = FX_N /
// r_last: k3 is the last digit)
#define FX_EXIT_D (FX_N / FX_R_LAST)
__device__ __forceinline__ unsigned fx_exit_pos(unsigned k) {
    const unsigned k23 = k / FX_R1;
    return FX_STAGES == 1 ? k : ((k % FX_R1) * FX_R2 + k23 % FX_R2) * FX_R3 + k23 / FX_R2;
}

// The exit sweep: fixed point to float64 bits, natural order, one 16-byte store per element.
// CONTIG: the output's lines are contiguous (inner == 1). Threads walk natural k (coalesced
// stores; the block's half of every R1 consecutive k with two blocks per line) and read the
// last stage's swizzled positions. The loop is unrolled (the general conversion, for lines
// with subnormal or overflowing results, is not) so that thread t's element of iteration
// `it` is a per-thread part (of t alone) plus a compile-time offset: index i = i_t + I, k =
// k(i_t + r) + K with r = I mod (r1 / 2) (two blocks per line; else r = 0, K = I), and the
// position fx_exit_pos(k(i_t + r) + K mod D) + K / D.
template <bool NORMAL, bool CARRY, bool CONTIG>  // CARRY: the fixed-point parts as they are
__device__ __forceinline__ void fx_exit(const i64 *xs, ulonglong2 *__restrict__ out,
                                        const long long *line_base, const int *line_exp,
                                        long long inner, int out_n, int rank) {
    // `line_base` and `inner` of the output (a transposed output walks the lines' k across)
    constexpr int ITERS = (FX_LINES * FX_NL + FX_THREADS - 1) / FX_THREADS;
    constexpr int UNROLL = !(NORMAL || CARRY) ? 1 : fx_sweep_split<CONTIG>() ? FX_EXIT_UNROLL : 2;
#pragma unroll UNROLL
    for (int it = 0; it < ITERS; ++it) {
        if (FX_LINES * FX_NL % FX_THREADS != 0 && it * FX_THREADS + (int)threadIdx.x >= FX_LINES * FX_NL)
            break;
        int line;
        unsigned i_t, I;
        fx_sweep_pos<CONTIG>(it, line, i_t, I);
        const unsigned k = fx_exit_k_at(i_t, I, rank);
        const unsigned K = FX_CLUSTER == 1 ? I : 2 * (I - I % (FX_R1 / 2));  // k - k(i_t + r)
        const unsigned pos_raw = fx_exit_pos(k - K + K % FX_EXIT_D) + K / FX_EXIT_D;
        const long long b = line_base[line];
        if (b < 0 || k >= (unsigned)out_n) continue;  // a cropped (real-input) output keeps k < out_n
        const int pos = fx_swizzle((int)pos_raw) - rank * FX_NL;
        const int e = line_exp[line];
        const longlong2 z = *reinterpret_cast<const longlong2 *>(xs + line * FX_LS + 2 * pos);
        out[b + (CONTIG ? (long long)k : (long long)k * inner)] =
            CARRY    ? make_ulonglong2((u64)z.x, (u64)z.y)
            : NORMAL ? make_ulonglong2(fx_from_fixed_normal(z.x, e), fx_from_fixed_normal(z.y, e))
                     : make_ulonglong2(fx_from_fixed(z.x, e), fx_from_fixed(z.y, e));
    }
}

// fx_exit for the output's layout
template <bool NORMAL, bool CARRY = false>
__device__ __forceinline__ void fx_exit_any(const i64 *xs, ulonglong2 *__restrict__ out,
                                            const long long *line_base, const int *line_exp,
                                            long long inner, int out_n, int rank) {
    if (inner == 1)
        fx_exit<NORMAL, CARRY, true>(xs, out, line_base, line_exp, inner, out_n, rank);
    else
        fx_exit<NORMAL, CARRY, false>(xs, out, line_base, line_exp, inner, out_n, rank);
}

#if FX_CLUSTER > 1
// The split cluster barrier: a block arrives once it no longer reads the other's shared
// memory, and waits before it leaves (so its own stays readable as long as needed).
__device__ __forceinline__ void fx_cluster_arrive() {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void fx_cluster_wait() {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Stage 1 -> the later stages (two blocks per line): the elements of the other block's half,
// at this block's slots S1 q + (1 - rank) S1 / 2 + u, move to the other block's slot
// -+ S1 / 2 (the slots its own leaving elements free); stage 1's line ORs are combined on
// the way (or_all = this block's | the other's).
__device__ __forceinline__ void fx_exchange(i64 *xs, int rank, const u64 *or_part, u64 *or_all) {
    constexpr int LEAVE = FX_LINES * FX_NL / 2;  // elements leaving each block
    constexpr int PER = (LEAVE + FX_THREADS - 1) / FX_THREADS;
    longlong2 v[PER];
    int at[PER];
#pragma unroll
    for (int t = 0; t < PER; ++t) {
        const unsigned idx = threadIdx.x + t * FX_THREADS;
        const unsigned line = idx / (FX_NL / 2), r = idx % (FX_NL / 2);
        at[t] = (int)(line * FX_LS + 2 * (FX_S1 * (r / (FX_S1 / 2)) + r % (FX_S1 / 2))) +
                (1 - rank) * FX_S1;
        if (LEAVE % FX_THREADS == 0 || idx < LEAVE)
            v[t] = *reinterpret_cast<const longlong2 *>(xs + at[t]);
    }
    fx_cluster_sync();  // both blocks are through stage 1 and hold what leaves them
    if (threadIdx.x < FX_LINES)
        or_all[threadIdx.x] = or_part[threadIdx.x] | fx_peer_u64(&or_part[threadIdx.x], rank);
    const int move = rank ? FX_S1 : -FX_S1;  // -+ S1 / 2 slots of two int64 words
#pragma unroll
    for (int t = 0; t < PER; ++t) {
        if (LEAVE % FX_THREADS == 0 || threadIdx.x + t * FX_THREADS < LEAVE) {
            const unsigned dst = fx_peer(xs + at[t] + move, rank);
            asm volatile("st.shared::cluster.v2.u64 [%0], {%1, %2};" ::"r"(dst), "l"(v[t].x),
                         "l"(v[t].y)
                         : "memory");
        }
    }
    fx_cluster_sync();  // every element is at its later-stage slot
}
#endif

#if FX_CLUSTER > 1
#define FX_CLUSTER_DIMS __cluster_dims__(FX_CLUSTER, 1, 1)
#else
#define FX_CLUSTER_DIMS
#endif

extern "C" __global__ void FX_CLUSTER_DIMS __launch_bounds__(FX_THREADS, FX_MIN_BLOCKS)
    oz_fft_fixed_pass(const ulonglong2 *__restrict__ in, ulonglong2 *__restrict__ out,
                      long long inner, long long lines, const int4 *__restrict__ frag1,
                      const int4 *__restrict__ frag2, const int4 *__restrict__ frag3,
                      const longlong2 *__restrict__ twiddle, long long tw_rows,
                      const int *__restrict__ exps_in, int p_mode, long long p_n,
                      long long p_lo, long long p_q, int *__restrict__ exps_out,
                      long long out_inner, int out_n, int *__restrict__ nonfinite,
                      int conj_in) {
    extern __shared__ __align__(16) i64 xs[];  // [FX_LINES][FX_LS], then xe
#if FX_CARRY_IN
    short *xe = reinterpret_cast<short *>(xs + FX_LINES * FX_LS);  // fx_xe(line, pos, rank)
    __shared__ long long line_pbase[FX_LINES];  // exps_in index of the line's j = 0
#endif
    __shared__ int line_exp[FX_LINES];
#if !FX_CARRY_IN
    __shared__ unsigned line_key[FX_LINES];  // largest |component bits| >> 32 of the line
#endif
    __shared__ int line_shift[FX_STAGES + 1][FX_LINES];
    __shared__ u64 line_or[4][FX_LINES];  // OR of |z| per line after each stage / twiddle
    // this block's part of a line maximum (combined with the other block's: FX_CLUSTER 2)
    __shared__ int line_part[FX_LINES];
#if FX_CLUSTER > 1
    __shared__ u64 line_orc[2][FX_LINES];  // line_or[0..1] of both blocks
#endif
#if FX_TWIDDLE
    static_assert(FX_CLUSTER == 1, "a twiddled pass runs one block per line");
#endif
    __shared__ long long line_base[FX_LINES];  // element offset of j = 0 (-1: no such line)
    // output offset of k = 0: as line_base with out_inner for inner and out_n for FX_N
    // (out_inner != inner: the output is the (outer / out_inner, FX_N, out_inner) transpose
    // of the input's lines, as the four-step's row pass writes its columns; out_n < FX_N:
    // the first out_n outputs of each line, as a real-input transform keeps k <= n / 2)
    __shared__ long long line_obase[FX_LINES];
#if FX_TWIDDLE
    __shared__ long long line_row[FX_LINES];  // k_a of a twiddled pass (the axis before)
#endif
    const int rank = fx_rank();  // the block's half of the lines (FX_CLUSTER 2)
    const long long first = (long long)(blockIdx.x / FX_CLUSTER) * FX_LINES;
    if (threadIdx.x < FX_LINES) {
        line_part[threadIdx.x] = FX_INT_MIN;
        // the only 64-bit divisions of the kernel: once per line, not per element
        const long long gl = first + threadIdx.x;
        line_base[threadIdx.x] = gl < lines ? (gl / inner) * FX_N * inner + gl % inner : -1;
        line_obase[threadIdx.x] =
            gl < lines ? (gl / out_inner) * out_n * out_inner + gl % out_inner : -1;
#if FX_TWIDDLE
        line_row[threadIdx.x] = gl < lines ? (gl / inner) % tw_rows : 0;
#endif
#if !FX_CARRY_IN
        line_key[threadIdx.x] = 0;
#endif
#if FX_CARRY_IN
        // the previous pass's line of element j: the flat index without its axis (of length
        // p_n, p_lo elements apart); p_mode 1: that axis lies inside `inner`, 2: inside outer
        const long long o = gl / inner, i = gl % inner;
        long long pb = 0;
        if (p_mode == 1)
            pb = (o * FX_N * (inner / (p_n * p_lo)) + i / (p_n * p_lo)) * p_lo + i % p_lo;
        else
            pb = ((o / (p_n * p_lo)) * p_lo + o % p_lo) * FX_N * inner + i;
        line_pbase[threadIdx.x] = gl < lines ? pb : 0;
#endif
        for (int l = 0; l < 4; ++l) line_or[l][threadIdx.x] = 0;
        for (int l = 0; l <= FX_STAGES; ++l) line_shift[l][threadIdx.x] = 0;
    }
    __syncthreads();
    // load: raw float64 bits; line exponent E = max frexp exponent of nonzero components.
    // The largest |bits| >> 32 of a line (the float order on magnitudes) gives E when it is a
    // normal number; lines whose largest component is subnormal or zero take a second sweep.
#if FX_CARRY_IN
    if (inner == 1)
        fx_load_carried<true>(in, xs, xe, exps_in, line_base, line_pbase, p_q, line_part, inner,
                              rank);
    else
        fx_load_carried<false>(in, xs, xe, exps_in, line_base, line_pbase, p_q, line_part, inner,
                               rank);
    fx_cluster_sync();
    if (threadIdx.x < FX_LINES) {
        int e = line_part[threadIdx.x];
#if FX_CLUSTER > 1
        e = max(e, (int)fx_peer_u32(&line_part[threadIdx.x], rank));
#endif
        line_exp[threadIdx.x] = e == FX_INT_MIN ? 0 : e;
    }
    __syncthreads();
    fx_stage<FX_R1, 1, 1, true, false, 3>(xs, frag1, line_or[3], line_or[0], line_shift[0], rank,
                                          line_exp, xe);
#else
    const bool full = first + FX_LINES <= lines;
    // an inverse transform's first pass reads conj(x) (ozfft/fourier/api.py): the sign bit
    // of each imaginary part flipped as it loads, before anything else sees it
    const u64 conj_bit = conj_in ? (1ull << 63) : 0;
    if (inner == 1 && full)
        fx_load<true, true>(in, xs, line_base, line_key, inner, first, lines, conj_bit, rank);
    else if (inner == 1)
        fx_load<true, false>(in, xs, line_base, line_key, inner, first, lines, conj_bit, rank);
    else if (full)
        fx_load<false, true>(in, xs, line_base, line_key, inner, first, lines, conj_bit, rank);
    else
        fx_load<false, false>(in, xs, line_base, line_key, inner, first, lines, conj_bit, rank);
    fx_cluster_sync();
    if (threadIdx.x < FX_LINES) {
        unsigned key = line_key[threadIdx.x];
#if FX_CLUSTER > 1
        key = max(key, fx_peer_u32(&line_key[threadIdx.x], rank));
#endif
        line_exp[threadIdx.x] = key >= (1u << 20) ? (int)(key >> 20) - 1022 : FX_INT_MIN;
        // exponent field 0x7ff: the line holds NaN or Inf (ozfft/fourier/input_check.py)
        // (a plain store: every writer stores 1, and the flag may live in mapped host
        // memory, where the GPU's atomics are not available on every system)
        if (key >= 0x7ff00000u) *reinterpret_cast<volatile int *>(nonfinite) = 1;
    }
    __syncthreads();
    bool exact_sweep = false;
#pragma unroll
    for (int l = 0; l < FX_LINES; ++l) exact_sweep |= line_exp[l] == FX_INT_MIN;
    if (exact_sweep) {  // cluster-uniform: some line's components are all subnormal or zero
        for (int idx = threadIdx.x; idx < FX_LINES * FX_NL; idx += FX_THREADS) {
            const int line = idx / FX_NL, j = idx % FX_NL;  // j: a slot of the block's
            if (line_exp[line] != FX_INT_MIN) continue;
            const u64 re = (u64)xs[line * FX_LS + 2 * j], im = (u64)xs[line * FX_LS + 2 * j + 1];
            int e = FX_INT_MIN;
            if (re << 1) e = fx_frexp_exp(re);
            if (im << 1) e = max(e, fx_frexp_exp(im));
            if (e != FX_INT_MIN) atomicMax(&line_part[line], e);
        }
        fx_cluster_sync();
        if (threadIdx.x < FX_LINES && line_exp[threadIdx.x] == FX_INT_MIN) {
            int e = line_part[threadIdx.x];
#if FX_CLUSTER > 1
            e = max(e, (int)fx_peer_u32(&line_part[threadIdx.x], rank));
#endif
            line_exp[threadIdx.x] = e == FX_INT_MIN ? 0 : e;
        }
        __syncthreads();
    }
#if FX_TWIDDLE
    // the second pass of a four-step plan: x' = floor(x t / 2^(S+1) + 1/2), t = round(2^S
    // w_n^(k_a j)), before stage 1; lines run along axis 2 of (outer, n_a, FX_N, inner)
    // arrays: k_a = (line / inner) mod n_a (n_a = tw_rows)
    for (int base = 0; base < FX_LINES * FX_N; base += FX_THREADS) {
        const unsigned idx = base + threadIdx.x;
        const bool valid = idx < FX_LINES * FX_N;
        const int line = valid ? idx / FX_N : 0, j = idx % FX_N;
        u64 bits = 0;
        if (valid) {
            longlong2 *p = reinterpret_cast<longlong2 *>(xs + line * FX_LS + 2 * j);
            const longlong2 raw = *p;
            const int e = line_exp[line];
            i64 xr = fx_to_fixed((u64)raw.x, e);
            i64 xi = fx_to_fixed((u64)raw.y, e);
            const longlong2 tw = twiddle[line_row[line] * j];
            xr_xi_twiddle(xr, xi, tw.x, tw.y);
            bits = (u64)(xr < 0 ? -xr : xr) | (u64)(xi < 0 ? -xi : xi);
            *p = make_longlong2(xr, xi);
        }
        // OR of |x'| per line for the renormalization before stage 1
        if (FX_N % 32 == 0) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) bits |= __shfl_xor_sync(0xffffffffu, bits, o);
            if ((threadIdx.x & 31) == 0 && bits) atomicOr(&line_or[3][line], bits);
        } else if (bits) {
            atomicOr(&line_or[3][line], bits);
        }
    }
    __syncthreads();
    fx_stage<FX_R1, 1, 1, true, true>(xs, frag1, line_or[3], line_or[0], line_shift[0], rank);
#else
    // stage 1 converts the raw bits as it reads them
    if (exact_sweep)
        fx_stage<FX_R1, 1, 1, true, false, 2>(xs, frag1, line_or[3], line_or[0], line_shift[0],
                                              rank, line_exp);
    else
        fx_stage<FX_R1, 1, 1, true, false, 1>(xs, frag1, line_or[3], line_or[0], line_shift[0],
                                              rank, line_exp);
#endif
#endif  // FX_CARRY_IN
    __syncthreads();
#if FX_CLUSTER > 1
    fx_exchange(xs, rank, line_or[0], line_orc[0]);  // the halves of stage 2 on
    const u64 *or_1 = line_orc[0];
#else
    const u64 *or_1 = line_or[0];
#endif
#if FX_STAGES >= 2
    fx_stage<FX_R2, FX_R1, FX_R1, false, true, 0, FX_STAGES == 2>(xs, frag2, or_1, line_or[1],
                                                                   line_shift[1], rank);
#endif
#if FX_STAGES >= 3
#if FX_CLUSTER > 1
    fx_cluster_sync();  // both blocks' stage-2 ORs are complete
    if (threadIdx.x < FX_LINES)
        line_orc[1][threadIdx.x] =
            line_or[1][threadIdx.x] | fx_peer_u64(&line_or[1][threadIdx.x], rank);
    fx_cluster_arrive();  // the last read of the other block's shared memory
    __syncthreads();
    const u64 *or_2 = line_orc[1];
#else
    __syncthreads();
    const u64 *or_2 = line_or[1];
#endif
    fx_stage<FX_R3, FX_R2, FX_R1 * FX_R2, false, true, 0, true>(xs, frag3, or_2, line_or[2],
                                                                 line_shift[2], rank);
#endif
    __syncthreads();

    // exit exponent per line: E - T + the stages' gains - the renormalization shifts
    if (threadIdx.x < FX_LINES) {
        const int line = threadIdx.x;
        int e = line_exp[line] - FX_T + fx_ceil_log2(FX_R1) + 1;
#if FX_TWIDDLE
        e += 1 - line_shift[0][line];
#endif
#if FX_STAGES >= 2
        e += fx_ceil_log2(FX_R2) + 1 - line_shift[1][line];
#endif
#if FX_STAGES >= 3
        e += fx_ceil_log2(FX_R3) + 1 - line_shift[2][line];
#endif
        line_exp[line] = e;
    }
    __syncthreads();
    // exit: shared position fx_swizzle(((k1 r2) + k2) r3 + k3) holds natural k = k1 + r1 k2 +
    // r1 r2 k3; threads walk k (coalesced global stores, conflict-free shared reads).
    // Blocks whose lines all give normal numbers (or zero) take the short conversion.
#if FX_CARRY_OUT
    // a carried pass: the parts in natural order, the exponent of each line beside them
    if (threadIdx.x < FX_LINES && first + threadIdx.x < lines)
        exps_out[first + threadIdx.x] = line_exp[threadIdx.x];
    fx_exit_any<true, true>(xs, out, line_obase, line_exp, out_inner, out_n, rank);
#else
    bool all_normal = true;
#pragma unroll
    for (int l = 0; l < FX_LINES; ++l) all_normal &= fx_exit_is_normal(line_exp[l]);
    if (all_normal)
        fx_exit_any<true>(xs, out, line_obase, line_exp, out_inner, out_n, rank);
    else
        fx_exit_any<false>(xs, out, line_obase, line_exp, out_inner, out_n, rank);
#endif
#if FX_CLUSTER > 1 && FX_STAGES >= 3
    fx_cluster_wait();  // the other block has read this one's shared memory for the last time
#endif
}
