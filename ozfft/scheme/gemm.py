"""The engine-independent Ozaki-II product: scaling -> residues -> Phase A -> Phase B."""

from __future__ import annotations

from typing import Any

from .._logging import logger
from ..engines.base import Engine
from ..ozaki.moduli import moduli_set
from ..ozaki.scaling import accurate_bound_bits, accurate_shift, fast_shift

__all__ = ["compute_shifts", "emulated_matmul"]


def compute_shifts(engine: Engine, a: Any, bt: Any, num_moduli: int, mode: str):
    """Row shifts of ``a`` ``(..., m, k)`` and of ``bt`` ``(..., n, k)`` (stage 1)."""
    xp = engine.xp
    budget = moduli_set(num_moduli).budget_bits
    need_sumsq = mode == "fast"
    sa = engine.row_stats(a, "a", need_sumsq=need_sumsq)
    sb = engine.row_stats(bt, "b", need_sumsq=need_sumsq)
    if mode == "fast":
        return fast_shift(xp, sa.max_exp, sa.sumsq, budget), fast_shift(
            xp, sb.max_exp, sb.sumsq, budget
        )
    g = accurate_bound_bits(xp.iscomplexobj(a))
    abar = engine.bound_operand(a, sa.max_exp, g)
    btbar = engine.bound_operand(bt, sb.max_exp, g)
    cbar = engine.bound_product(abar, btbar, g)  # (..., m, n)
    row_max = cbar.max(axis=-1) if cbar.shape[-1] else xp.zeros(cbar.shape[:-1], xp.int64)
    col_max = (
        cbar.max(axis=-2)
        if cbar.shape[-2]
        else xp.zeros(cbar.shape[:-2] + cbar.shape[-1:], xp.int64)
    )
    return (
        accurate_shift(xp, sa.max_exp, row_max, budget, g),
        accurate_shift(xp, sb.max_exp, col_max, budget, g),
    )


def emulated_matmul(
    engine: Engine,
    a: Any,
    b: Any,
    *,
    num_moduli: int,
    mode: str,
    out_dtype: Any,
    complex_method: str = "karatsuba",
) -> Any:
    """``a @ b`` for same-batch-shape float64/complex128 stacks, via Ozaki scheme II."""
    xp = engine.xp
    moduli = moduli_set(num_moduli)
    a = engine.prepare_operand(a)
    bt = engine.prepare_operand(xp.swapaxes(b, -1, -2))
    shift_a, shift_b = compute_shifts(engine, a, bt, num_moduli, mode)
    logger.debug(
        "ozaki-II %s: %s @ %s, %d moduli (log2 P = %.1f), mode %s",
        engine.name,
        a.shape,
        b.shape,
        num_moduli,
        moduli.log2_product,
        mode,
    )
    ra = engine.residues(a, shift_a, moduli)
    rbt = engine.residues(bt, shift_b, moduli)
    return engine.exact_product(
        ra, rbt, shift_a, shift_b, moduli, out_dtype, complex_method=complex_method
    )
