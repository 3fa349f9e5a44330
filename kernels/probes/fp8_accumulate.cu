// The exactness of FP8 (e4m3) tensor-core products with FP32 accumulation on this GPU
// (`ozfft bench fp8`, ozfft/bench/fp8.py; docs/numerics.md, "FP8 accumulation").
//
// Block t runs one warp through `count` chained mma.sync m16n8k32 e4m3 products into one
// FP32 accumulator, step i taking the e4m3 bytes a = a_bytes[t count + i], b = b_bytes[...]
// and mode[...]: 1 ("full"), every element of A and B is that byte, so each output gains
// 32 a b; 0 ("unit"), only k = 0 is nonzero (A's column 0, B's row 0), so each output gains
// a b. Lane 0's first accumulator (output row 0, column 0) is written to out[t].

extern "C" __global__ void oz_probe_fp8_chain(const unsigned char *__restrict__ a_bytes,
                                              const unsigned char *__restrict__ b_bytes,
                                              const unsigned char *__restrict__ mode, int count,
                                              float *__restrict__ out) {
    const int t = blockIdx.x, lane = threadIdx.x & 31;
    float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
    for (int i = 0; i < count; ++i) {
        const unsigned a = a_bytes[t * count + i], b = b_bytes[t * count + i];
        unsigned a0, a1, a2, a3, b0, b1;
        if (mode[t * count + i]) {
            a0 = a1 = a2 = a3 = a * 0x01010101u;
            b0 = b1 = b * 0x01010101u;
        } else {  // k = 0: byte 0 of a0 (row g) and a1 (row g + 8), byte 0 of b0 (col g)
            const bool k0 = (lane & 3) == 0;
            a0 = a1 = k0 ? a : 0u;
            a2 = a3 = 0u;
            b0 = k0 ? b : 0u;
            b1 = 0u;
        }
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    if (lane == 0) out[t] = c0;
}
