// Exact sums of digit diagonals, carried a byte at a time (the complex slices kernel,
// gemm/small_product.cu; docs/perf-notes.md, "The complex slices in diagonal order").
//
// V = sum_{d < D} D_d 256**d from the diagonals' INT32 sums D_d taken in ascending d:
// with c_0 = 0, v_d = c_d + D_d, byte_d = v_d mod 256 and c_{d+1} = floor(v_d / 256),
// V = sum_d byte_d 256**d + c_D 256**D. The carry stays below max |D_d| / 255 + 1, so the
// INT32 accumulator of the next diagonal starts from it (the products add onto it), and
// the bytes pack four to a word: per output one accumulator and ceil(D / 4) words, against
// ceil(8 (D - 1) / 31) + 1 64-bit digit sums, and two instructions per output and diagonal
// against one IMAD.WIDE per output and pair. oz_carried_digit_sums gives V back as the
// base-2**31 digit sums that oz_round_slice_sums rounds: the same integer, so the same bits.
#pragma once

#define OZ_CARRY_WORDS(diagonals) (((diagonals) + 3) / 4)

// Byte d of the diagonal sums: *w[d / 4]'s byte d % 4 = acc mod 256 (the word's higher
// bytes cleared where d % 4 == 0), acc = floor(acc / 256).
template <int words>
__device__ __forceinline__ void oz_carry_byte(int d, int& acc, oz_u32 (&w)[words]) {
    const int b = d % 4;  // (d is a constant in the unrolled loops of the callers)
    // __byte_perm selector: byte b from the second word's byte 0 (selector 4), others kept
    const unsigned sel = b == 0 ? 0x3214u : b == 1 ? 0x3240u : b == 2 ? 0x3410u : 0x4210u;
    w[d / 4] = __byte_perm(b == 0 ? 0u : w[d / 4], (oz_u32)acc, sel);
    acc >>= 8;  // arithmetic: the floor of the quotient
}

// V = sum_{d < diagonals} byte_d 256**d + carry 256**diagonals (the bytes packed in w, as
// oz_carry_byte left them) as base-2**31 digit sums x[0 .. digits): x[l] holds bits 31 l
// .. 31 l + 30 of the bytes, the top one the rest plus the carry (signed).
template <int diagonals, int digits>
__device__ __forceinline__ void oz_carried_digit_sums(const oz_u32 (&w)[OZ_CARRY_WORDS(diagonals)],
                                                      int carry, oz_i64 (&x)[digits]) {
    constexpr int words = OZ_CARRY_WORDS(diagonals), bits = 8 * diagonals;
    static_assert(31 * (digits - 1) < bits && bits - 31 * (digits - 1) <= 31,
                  "the top digit holds the last bytes");
#pragma unroll
    for (int l = 0; l < digits; ++l) {
        const int lo = 31 * l, j = lo / 32;
        const oz_u32 next = j + 1 < words ? w[j + 1] : 0u;
        const oz_u32 u = __funnelshift_r(w[j], next, lo % 32);
        const int width = l + 1 < digits ? 31 : bits - lo;
        x[l] = (oz_i64)(u & ((1u << width) - 1u));
        if (l + 1 == digits) x[l] += (oz_i64)carry * ((oz_i64)1 << width);
    }
}
