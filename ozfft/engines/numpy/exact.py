"""Exact integer matrix products on float BLAS.

Integer-valued float32 matrices multiply exactly in SGEMM while every partial sum
stays below ``2**24``; we split ``k`` into blocks that guarantee it and add the block
products in float64 (exact below ``2**53``). SGEMM runs at twice the DGEMM rate, so
this is the fastest exact Phase A on a CPU.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_int_matmul", "sgemm_block"]

_FLOAT32_EXACT = 2**24
_FLOAT64_EXACT = 2**53


def sgemm_block(max_abs_product: int) -> int:
    """Largest ``k`` block whose sums of products ``<= max_abs_product`` stay exact."""
    return max(1, _FLOAT32_EXACT // max_abs_product)


def exact_int_matmul(x: np.ndarray, y: np.ndarray, max_abs_product: int) -> np.ndarray:
    """``x @ y`` for integer-valued float32 stacks with ``|x_ih y_hj| <= max_abs_product``.

    Returns the exact integer result: float32 when one SGEMM block covers ``k``
    (every value < 2**24), else float64 (requires ``k * max < 2**53``).
    """
    k = x.shape[-1]
    if k * max_abs_product >= _FLOAT64_EXACT:
        raise ValueError(f"k = {k} is too large for an exact float64 accumulation")
    block = sgemm_block(max_abs_product)
    if k <= block:
        return np.matmul(x, y)
    out = None
    for start in range(0, k, block):
        part = np.matmul(x[..., start : start + block], y[..., start : start + block, :])
        out = part.astype(np.float64) if out is None else out + part
    return out
