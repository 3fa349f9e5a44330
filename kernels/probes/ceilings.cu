// Rate probes for `ozfft bench ceilings`: dependent chains of one instruction kind,
// eight independent chains per thread so the pipe, not latency, is the limit.

extern "C" __global__ void oz_probe_imad(int* out, int a, int b, int iters) {
    int x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
    int x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a + b; x3 = x3 * a + b;
            x4 = x4 * a + b; x5 = x5 * a + b; x6 = x6 * a + b; x7 = x7 * a + b;
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;
}

extern "C" __global__ void oz_probe_dfma(double* out, double a, double b, int iters) {
    double x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
    double x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
            x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// IDP4A (dp4a: four signed byte products and a sum, one instruction).
extern "C" __global__ void oz_probe_dp4a(int* out, int a, int b, int iters) {
    int x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
    int x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            x0 = __dp4a(x0, a, b); x1 = __dp4a(x1, a, b); x2 = __dp4a(x2, a, b);
            x3 = __dp4a(x3, a, b); x4 = __dp4a(x4, a, b); x5 = __dp4a(x5, a, b);
            x6 = __dp4a(x6, a, b); x7 = __dp4a(x7, a, b);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 ^ x1 ^ x2 ^ x3 ^ x4 ^ x5 ^ x6 ^ x7;
}

// mma.sync m16n8k32 with INT8 operands and INT32 sums from registers (8192 operations per
// warp instruction), eight independent accumulator tiles per warp: the rate the
// small-product kernel's products can reach without fragment loads.
extern "C" __global__ void oz_probe_imma(int* out, int a, int b, int iters) {
    const unsigned a0 = (unsigned)(a ^ (int)threadIdx.x), a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u;
    const unsigned b0 = (unsigned)(b ^ (int)threadIdx.x), b1 = b0 * 3u;
    int c[8][4];
#pragma unroll
    for (int t = 0; t < 8; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) c[t][e] = t + e;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int t = 0; t < 8; ++t)
                asm volatile(
                    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                    "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                    : "+r"(c[t][0]), "+r"(c[t][1]), "+r"(c[t][2]), "+r"(c[t][3])
                    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    int x = 0;
#pragma unroll
    for (int t = 0; t < 8; ++t) x ^= c[t][0] ^ c[t][1] ^ c[t][2] ^ c[t][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
