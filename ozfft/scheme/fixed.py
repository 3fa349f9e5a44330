"""Ozaki-II products with a fixed integer left operand (the FFT's stage matrices).

``W`` is an exact Gaussian-integer matrix ``round(2**bits M)`` with every squared row
norm below ``2**G_a``; only the right operand ``X`` is scaled, per column, so that
``||2**tau x||_2**2 <= 2**(2(L-1) - G_a)``: then ``2 sum |w||x'| <= 2**L < P`` and the
product ``W X'`` is recovered exactly and rounded once (times ``2**-(bits + tau)``).
"""

from __future__ import annotations

from typing import Any

from ..engines.base import Engine, ResidueStack
from ..ozaki.moduli import moduli_set
from ..ozaki.scaling import fast_shift_squared

__all__ = ["fixed_left_product"]


def fixed_left_product(
    engine: Engine,
    w: ResidueStack,
    bits: int,
    squared_row_bound_log2: int,
    x: Any,
    num_moduli: int,
    out_dtype: Any,
) -> Any:
    """``(W / 2**bits) @ x`` for residues ``w`` of shape ``(..., r, r)`` and complex ``x``
    ``(..., r, cols)`` with the same batch shape."""
    xp = engine.xp
    moduli = moduli_set(num_moduli)
    xt = engine.prepare_operand(xp.swapaxes(x, -1, -2))
    stats = engine.row_stats(xt, "x", need_sumsq=True)
    budget = 2 * (moduli.budget_bits - 1) - squared_row_bound_log2
    shift_x = fast_shift_squared(xp, stats.max_exp, stats.sumsq, budget)
    rx = engine.residues(xt, shift_x, moduli)
    rows = x.shape[-2]
    shift_w = xp.full((*x.shape[:-2], rows), bits, dtype=xp.int64)
    return engine.exact_product(w, rx, shift_w, shift_x, moduli, out_dtype)
