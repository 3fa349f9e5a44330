// Stage 3 (Phase A) on FP8 tensor cores: for every modulus m = s**d of an FP8 residue
// system and every product (A plane, Bt plane), the residue modulo m of the exact product
// of the symmetric residues, from e4m3 digit planes (gemm/fp8_residues.cu):
//
//     r r' = sum_{t < d} s**t P_t  (mod m),   P_t = sum_{a + b = t} C_a C'_b^T,
//
// written as INT32 in [0, m) to planes [modulus][product][m][ldc], the layout the INT8
// Phase A's cuBLAS GEMMs give gemm/phase_b.cu (whose reductions mod m are then no-ops).
//
// Tile: a block of 8 warps (2 x 4) computes OZ_FP8_BM x OZ_FP8_BN outputs (each warp 32 x 16
// for 64 x 64) of one (modulus, product, item). Per k-step of OZ_FP8_BK, every digit
// plane of A and Bt the modulus has is copied to shared memory with cp.async (two stages,
// rows zero-filled past m / nb; kp is a multiple of OZ_FP8_BK, padded with zero digits),
// and each warp loads its fragments with ldmatrix and runs mma.sync m16n8k32 e4m3 x e4m3 ->
// f32 for the d(d+1)/2 digit pairs into d FP32 accumulator sets, one per P_t (on Hopper
// ptxas makes that F2FP.F16.E4M3 conversions and HMMA.16816.F32). Exactness: every product
// is an integer of at most OZ_FP8_DIGIT_MAX**2 = 256 and P_t sums at most d of them per k,
// so after OZ_FP8_KBLOCK k-indices every partial sum is below 256 d OZ_FP8_KBLOCK < 2**24
// (the static_assert below; the H200's mma.sync keeps such sums exact, docs/numerics.md
// "FP8 accumulation"). At the end of each k-block the accumulators become exact integers,
// are folded into the running residue (sum_t s**t (P_t mod m), reduced mod m) and reset.
#include "common/ozaki_common.cuh"
#include "common/ozaki_fp8.cuh"

#define OZ_FP8_WARPS_M 2
#define OZ_FP8_WARPS_N 4
#define OZ_FP8_THREADS (32 * OZ_FP8_WARPS_M * OZ_FP8_WARPS_N)
#define OZ_FP8_STAGES 2
// blocks per multiprocessor the registers are budgeted for (2: at most 128 per thread)
#ifndef OZ_FP8_MIN_BLOCKS
#define OZ_FP8_MIN_BLOCKS 2
#endif
// shared row: the k-step plus 16 bytes, so the eight 16-byte rows an ldmatrix phase reads
// hit 32 distinct banks for a k-step of 32 (stride 12 words) or 64 (20 words)
#define OZ_FP8_ROW (OZ_FP8_BK + 16)
#define OZ_FP8_MI (OZ_FP8_BM / (16 * OZ_FP8_WARPS_M))  // m16 tiles per warp
#define OZ_FP8_NI (OZ_FP8_BN / (8 * OZ_FP8_WARPS_N))   // n8 tiles per warp (even)

static_assert(OZ_FP8_BM % (16 * OZ_FP8_WARPS_M) == 0 && OZ_FP8_BN % (16 * OZ_FP8_WARPS_N) == 0,
              "whole m16 tiles and pairs of n8 tiles per warp");
static_assert(OZ_FP8_BK == 32 || OZ_FP8_BK == 64, "k-step of one or two mma k32 steps");
static_assert(OZ_FP8_KBLOCK % OZ_FP8_BK == 0, "the k-block is a whole number of k-steps");
static_assert(OZ_FP8_EXACT_BITS <= 24, "an FP32 accumulator holds integers below 2**24");
static_assert((long long)OZ_FP8_DIGIT_MAX * OZ_FP8_DIGIT_MAX * OZ_FP8_MAX_DIGITS * OZ_FP8_KBLOCK <
                  (1LL << OZ_FP8_EXACT_BITS),
              "a k-block's digit-product sums must stay below 2**OZ_FP8_EXACT_BITS");

#define OZ_FP8_ROWS (OZ_FP8_BM + OZ_FP8_BN)  // A rows, then Bt rows, of one digit
#define OZ_FP8_DIGIT_BYTES (OZ_FP8_ROWS * OZ_FP8_ROW)
#define OZ_FP8_STAGE_BYTES (OZ_FP8_MAX_DIGITS * OZ_FP8_DIGIT_BYTES)
static_assert(OZ_FP8_ROWS * (OZ_FP8_BK / 16) == OZ_FP8_THREADS,
              "one 16-byte chunk of every digit plane per thread and k-step");

__device__ __forceinline__ void oz_cp_async16(unsigned dst, const void* gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
                 "r"(bytes));
}

__device__ __forceinline__ void oz_cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void oz_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// c += a b for one m16n8k32 tile. Fragments (PTX ISA, mma.m16n8k32 with 8-bit A/B; g =
// lane / 4, q = lane % 4): a0 = A[g][4q..4q+3], a1 = A[g+8][4q..], a2 = A[g][16+4q..],
// a3 = A[g+8][16+4q..]; b0 = B[4q..4q+3][g] (Bt row g), b1 = B[16+4q..][g]; c0, c1 =
// C[g][2q, 2q+1], c2, c3 = C[g+8][2q, 2q+1]. Byte i of a register is element 4q + i.
// An 8 x 8 b16 matrix of ldmatrix is 8 rows of 16 bytes, and lane L receives row L / 4,
// bytes 4 (L % 4) .. +3: exactly such a register, for K-major A and Bt rows alike.
__device__ __forceinline__ void oz_mma_e4m3(float (&c)[4], const unsigned (&a)[4],
                                            const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// r[i] = matrix i of four 8 x 16-byte matrices; lane L gives the shared address of row
// L % 8 of matrix L / 8.
__device__ __forceinline__ void oz_ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// One output tile of one modulus with D digits (base s, modulus p): a and b point at digit
// plane 0 of the item's A rows and of the column block's Bt rows; c at the tile's plane.
// Shared memory (smem, a shared-space address): [stage][digit][A rows, Bt rows][ROW].
template <int D>
__device__ __forceinline__ void oz_fp8_tile_product(unsigned smem,
                                                    const unsigned char* __restrict__ a,
                                                    const unsigned char* __restrict__ b,
                                                    long long m, long long nb, long long kp,
                                                    long long a_digit, long long b_digit,
                                                    long long m0, long long n0, int s, int p,
                                                    int* __restrict__ c, long long ldc) {
    constexpr int BM = OZ_FP8_BM, BK = OZ_FP8_BK, ROW = OZ_FP8_ROW;
    constexpr int MI = OZ_FP8_MI, NI = OZ_FP8_NI;
    constexpr int KBLOCK_STEPS = OZ_FP8_KBLOCK / BK;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long steps = kp / BK;

    // this thread's 16-byte chunk of every digit plane: tile row tid / chunks (A rows
    // first), bytes 16 (tid % chunks) of the k-step; rows past m (nb) are zero-filled
    const int load_row = tid / (BK / 16), load_col = 16 * (tid % (BK / 16));
    const unsigned load_dst = smem + load_row * ROW + load_col;
    const unsigned char* load_src;
    long long load_digit;
    int load_bytes;
    {
        const bool in_a = load_row < BM;
        const long long r = in_a ? m0 + load_row : n0 + (load_row - BM);
        const bool inside = r < (in_a ? m : nb);
        load_src = (in_a ? a : b) + (inside ? r : 0) * kp + load_col;
        load_digit = in_a ? a_digit : b_digit;
        load_bytes = inside ? 16 : 0;
    }
    auto load = [&](int stage, long long kt) {
#pragma unroll
        for (int dg = 0; dg < D; ++dg)
            oz_cp_async16(load_dst + stage * OZ_FP8_STAGE_BYTES + dg * OZ_FP8_DIGIT_BYTES,
                          load_src + dg * load_digit + kt * BK, load_bytes);
        oz_cp_async_commit();
    };

    // ldmatrix rows of this lane in the warp's part of the tile: A, matrices (rows 0-7,
    // k 0-15), (8-15, 0-15), (0-7, 16-31), (8-15, 16-31) = a0..a3; Bt, (n 0-7, k 0-15),
    // (0-7, 16-31), (8-15, 0-15), (8-15, 16-31) = b0, b1 of two n8 tiles
    const int wm = (warp / OZ_FP8_WARPS_N) * (MI * 16);
    const int wn = (warp % OZ_FP8_WARPS_N) * (NI * 8);
    const unsigned a_frag = smem + (wm + (lane & 7) + ((lane >> 3) & 1) * 8) * ROW +
                            (lane >> 4) * 16;
    const unsigned b_frag = smem + (BM + wn + (lane & 7) + (lane >> 4) * 8) * ROW +
                            ((lane >> 3) & 1) * 16;

    float acc[D][MI][NI][4];
#pragma unroll
    for (int t = 0; t < D; ++t)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int ni = 0; ni < NI; ++ni)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[t][mi][ni][e] = 0.f;

    // end of a k-block: the accumulators are exact integers |P_t| < 2**24; fold
    // sum_t s**t r_t, r_t = P_t (mod p) with |r_t| < 2 p, into the running residue in c
    // (|sum| < 2 p (1 + s + s**2) < 2**28), reduced to [0, p), and reset them. The running
    // residue lives in the output plane (each thread reads back only what it wrote).
    const float fp = (float)p, inv_p = 1.0f / fp;
    auto fold = [&](bool first) {
        const int g = lane >> 2, q = lane & 3;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int ni = 0; ni < NI; ++ni)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    int v = 0, w = 1;
#pragma unroll
                    for (int t = 0; t < D; ++t) {
                        // P_t - p rint(P_t / p), with rint off by one at most: exact
                        const float pt = acc[t][mi][ni][e];
                        v += w * __float2int_rn(fmaf(-rintf(pt * inv_p), fp, pt));
                        w *= s;
                        acc[t][mi][ni][e] = 0.f;
                    }
                    const long long row = m0 + wm + mi * 16 + g + (e >> 1) * 8;
                    const long long col = n0 + wn + ni * 8 + 2 * q + (e & 1);
                    if (row < m && col < nb) {
                        int* out = c + row * ldc + col;
                        *out = (int)oz_mod_nonneg((first ? 0 : *out) + v, p);
                    }
                }
    };

    load(0, 0);
    int in_block = 0;
    for (long long kt = 0; kt < steps; ++kt) {
        if (kt + 1 < steps) {
            load((int)((kt + 1) & 1), kt + 1);
            oz_cp_async_wait<1>();
        } else {
            oz_cp_async_wait<0>();
        }
        __syncthreads();
        const unsigned stage = (unsigned)(kt & 1) * OZ_FP8_STAGE_BYTES;
#pragma unroll
        for (int ks = 0; ks < BK / 32; ++ks) {
            // every Bt digit's fragments, then one A digit at a time (fewer live registers)
            unsigned bf[D][NI][2];
#pragma unroll
            for (int dg = 0; dg < D; ++dg)
#pragma unroll
                for (int ni = 0; ni < NI; ni += 2) {
                    unsigned r[4];
                    oz_ldmatrix_x4(r, b_frag + stage + dg * OZ_FP8_DIGIT_BYTES + ni * 8 * ROW +
                                          ks * 32);
                    bf[dg][ni][0] = r[0];
                    bf[dg][ni][1] = r[1];
                    bf[dg][ni + 1][0] = r[2];
                    bf[dg][ni + 1][1] = r[3];
                }
#pragma unroll
            for (int x = 0; x < D; ++x) {
                unsigned af[MI][4];
#pragma unroll
                for (int mi = 0; mi < MI; ++mi)
                    oz_ldmatrix_x4(af[mi], a_frag + stage + x * OZ_FP8_DIGIT_BYTES +
                                               mi * 16 * ROW + ks * 32);
                // A digit x times Bt digit y adds to P_{x+y} (x + y < D)
#pragma unroll
                for (int y = 0; x + y < D; ++y)
#pragma unroll
                    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                        for (int ni = 0; ni < NI; ++ni)
                            oz_mma_e4m3(acc[x + y][mi][ni], af[mi], bf[y][ni]);
            }
        }
        __syncthreads();  // the stage is refilled two steps on
        if (++in_block == KBLOCK_STEPS || kt + 1 == steps) {
            fold(kt < KBLOCK_STEPS);
            in_block = 0;
        }
    }
}

// grid: x over the output tiles (m-tiles fastest), z over (item, modulus, product), product
// fastest. a: digit planes [modulus][plane][digit][rows][kp] (a_digit bytes between digit
// planes, nplanes planes per modulus), item i's rows at a + i a_item; b likewise, pointing
// at the column block's first Bt row. Product t multiplies A plane (pairs >> 4t) & 3 by Bt
// plane (pairs >> 4t + 2) & 3. c: INT32 planes [modulus][product][m][ldc], item i's at
// c + i c_item.
extern "C" __global__ void __launch_bounds__(OZ_FP8_THREADS, OZ_FP8_MIN_BLOCKS)
    oz_fp8_phase_a(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                   long long m, long long nb, long long kp, long long a_digit,
                   long long b_digit, long long a_item, long long b_item, int nplanes,
                   int nprod, int pairs, int* __restrict__ c, long long ldc,
                   long long c_item) {
    __shared__ __align__(16) unsigned char smem[OZ_FP8_STAGES * OZ_FP8_STAGE_BYTES];
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    const int z = blockIdx.z, prod = z % nprod, l = (z / nprod) % OZ_NUM_MODULI;
    const long long item = z / nprod / OZ_NUM_MODULI;
    const int code = (pairs >> (4 * prod)) & 15, ia = code & 3, ib = code >> 2;
    const long long m_tiles = (m + OZ_FP8_BM - 1) / OZ_FP8_BM;
    const long long m0 = (blockIdx.x % m_tiles) * OZ_FP8_BM;
    const long long n0 = (blockIdx.x / m_tiles) * OZ_FP8_BN;
    a += item * a_item + ((long long)l * nplanes + ia) * OZ_FP8_MAX_DIGITS * a_digit;
    b += item * b_item + ((long long)l * nplanes + ib) * OZ_FP8_MAX_DIGITS * b_digit;
    c += item * c_item + ((long long)l * nprod + prod) * m * ldc;
    const int s = oz_fp8_bases[l], p = oz_moduli[l];
    const int d = oz_fp8_digits[l];
    (void)d;  // one digit count only when OZ_FP8_MAX_DIGITS is 1
#if OZ_FP8_MAX_DIGITS >= 3
    if (d == 3) {
        oz_fp8_tile_product<3>(base, a, b, m, nb, kp, a_digit, b_digit, m0, n0, s, p, c, ldc);
        return;
    }
#endif
#if OZ_FP8_MAX_DIGITS >= 2
    if (d == 2) {
        oz_fp8_tile_product<2>(base, a, b, m, nb, kp, a_digit, b_digit, m0, n0, s, p, c, ldc);
        return;
    }
#endif
    oz_fp8_tile_product<1>(base, a, b, m, nb, kp, a_digit, b_digit, m0, n0, s, p, c, ldc);
}
