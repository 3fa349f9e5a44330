"""The pipe probes of ``ozfft bench ceilings`` (kernels/probes/ceilings.cu) compute what
integer arithmetic says they compute, so the rates they report are rates of that work
(needs a GPU). The mma.sync probe also pins the m16n8k32 INT8 fragment layout that
kernels/gemm/small_product.cu assumes."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")


def _wrap32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _signed_bytes(word: int) -> list[int]:
    return [((word >> (8 * k)) & 0xFF) - (256 if (word >> (8 * k)) & 0x80 else 0) for k in range(4)]


def _run(name: str, a: int, b: int, iters: int, threads: int = 32) -> np.ndarray:
    from ozfft.engines.cuda.compiler import get_function

    out = cp.zeros(threads, cp.int32)
    kernel = get_function("probes/ceilings.cu", name)
    kernel((1,), (threads,), (out, np.int32(a), np.int32(b), np.int32(iters)))
    return cp.asnumpy(out)


@pytest.mark.parametrize(("a", "b", "iters"), [(0x01FF7F80, 1, 1), (-0x7F7F7F7F, -3, 2)])
def test_dp4a_probe_is_the_dot_product_of_signed_bytes(a, b, iters):
    """oz_probe_dp4a: eight chains x = t + j per thread, each step x = b + sum over the four
    bytes of x and a (signed) of their products, 16 iters steps, XORed."""
    want = []
    for t in range(32):
        chains = [t + j for j in range(8)]
        for _ in range(16 * iters):
            chains = [
                _wrap32(
                    b + sum(u * v for u, v in zip(_signed_bytes(x), _signed_bytes(a), strict=True))
                )
                for x in chains
            ]
        v = 0
        for x in chains:
            v ^= x
        want.append(v)
    np.testing.assert_array_equal(_run("oz_probe_dp4a", a, b, iters), want)


@pytest.mark.parametrize(("a", "b", "iters"), [(0x05F3117F, 0x7E80FF01, 1), (-0x01020304, 0x11, 3)])
def test_imma_probe_is_the_m16n8k32_product(a, b, iters):
    """oz_probe_imma: lane l = 4 g + q holds A[g][4q..], A[g+8][4q..], A[g][16+4q..],
    A[g+8][16+4q..] (registers a ^ l times 1, 3, 5, 7) and B[4q..][g], B[16+4q..][g]
    (b ^ l times 1, 3), bytes in k order, signed; after 2 iters products each of its eight
    tiles (started at t + e) holds C[g][2q], C[g][2q+1], C[g+8][2q], C[g+8][2q+1] of
    C_t(0) + 2 iters A B, XORed (INT32 wraparound)."""
    A = np.zeros((16, 32), np.int64)
    B = np.zeros((32, 8), np.int64)
    for lane in range(32):
        g, q = divmod(lane, 4)
        a0 = (a ^ lane) & 0xFFFFFFFF
        regs = [a0 * f & 0xFFFFFFFF for f in (1, 3, 5, 7)]
        for reg, (row, col) in zip(
            regs, ((g, 4 * q), (g + 8, 4 * q), (g, 16 + 4 * q), (g + 8, 16 + 4 * q)), strict=True
        ):
            A[row, col : col + 4] = _signed_bytes(reg)
        b0 = (b ^ lane) & 0xFFFFFFFF
        B[4 * q : 4 * q + 4, g] = _signed_bytes(b0)
        B[16 + 4 * q : 20 + 4 * q, g] = _signed_bytes(b0 * 3 & 0xFFFFFFFF)
    product = A @ B
    want = []
    for lane in range(32):
        g, q = divmod(lane, 4)
        v = 0
        for t in range(8):
            for e, (row, col) in enumerate(
                ((g, 2 * q), (g, 2 * q + 1), (g + 8, 2 * q), (g + 8, 2 * q + 1))
            ):
                v ^= _wrap32(t + e + 2 * iters * int(product[row, col]))
        want.append(_wrap32(v))
    np.testing.assert_array_equal(_run("oz_probe_imma", a, b, iters), want)
