"""Ozaki-II products with a fixed integer left operand (the FFT's stage matrices).

``W`` is an exact Gaussian-integer matrix ``round(2**bits M)`` with every squared row
norm below ``2**G_a``; only the right operand ``X`` is scaled, per column, so that
``||2**tau x||_2**2 <= 2**(2(L-1) - G_a)``: then ``2 sum |w||x'| <= 2**L < P`` and the
product ``W X'`` is recovered exactly and rounded once (times ``2**-(bits + tau)``).

With an FP8 residue system (``system``, at least the bits of the ``num_moduli`` INT8
moduli) the scaling keeps the INT8 budget and Phase A runs on the system: the same exact
product, the same bits.
"""

from __future__ import annotations

from typing import Any

from ..engines.base import Engine, ResidueStack
from ..ozaki.residue_system import ResidueSystem, int8_system
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
    system: ResidueSystem | None = None,
) -> Any:
    """``(W / 2**bits) @ x`` for residues ``w`` of shape ``(..., r, r)`` and complex ``x``
    ``(..., r, cols)`` with the same batch shape; Phase A on ``system`` (whose budget
    must hold that of ``num_moduli`` INT8 moduli; ``w`` its residues) where given."""
    xp = engine.xp
    int8 = int8_system(num_moduli)
    moduli = int8 if system is None else system
    if moduli.budget_bits < int8.budget_bits:
        raise ValueError("the residue system holds fewer bits than the INT8 moduli")
    xt = engine.prepare_operand(xp.swapaxes(x, -1, -2))
    stats = engine.row_stats(xt, "x", need_sumsq=True)
    budget = 2 * (int8.budget_bits - 1) - squared_row_bound_log2
    shift_x = fast_shift_squared(xp, stats.max_exp, stats.sumsq, budget)
    rx = engine.residues(xt, shift_x, moduli)
    rows = x.shape[-2]
    shift_w = xp.full((*x.shape[:-2], rows), bits, dtype=xp.int64)
    return engine.exact_product(w, rx, shift_w, shift_x, moduli, out_dtype)
