"""Stage 1 on numpy: integer row statistics and the accurate-mode bound product."""

from __future__ import annotations

import math

import numpy as np

from ...errors import NonFiniteInputError
from ...ozaki.scaling import BOUND_MANTISSA_BITS, FRACTION_BITS, MIN_TERM_SHIFT, ZERO_ROW_EXP
from .exact import exact_int_matmul

__all__ = ["bound_operand", "bound_product", "check_finite", "real_parts", "row_stats"]


def real_parts(x: np.ndarray) -> list[np.ndarray]:
    """``[x]`` for real ``x``; ``[x.real, x.imag]`` for complex ``x``."""
    return [x.real, x.imag] if np.iscomplexobj(x) else [x]


def check_finite(x: np.ndarray, operand: str) -> None:
    """Raise :class:`NonFiniteInputError` naming ``operand`` if ``x`` has NaN/Inf."""
    finite = np.isfinite(x)
    if not finite.all():
        bad = x[~finite]
        kinds = []
        if np.isnan(bad).any():
            kinds.append("NaN")
        if np.isinf(bad).any():
            kinds.append("Inf")
        raise NonFiniteInputError(operand, int(bad.size), " and ".join(kinds))


#: entries of an operand whose row statistics are formed at a time (whole rows, at least
#: ``_STATS_MIN_ROWS``): temporaries that stay in cache instead of fresh operand-sized arrays
_STATS_CHUNK = 1 << 14
_STATS_MIN_ROWS = 16


def row_stats(x: np.ndarray, operand: str, *, need_sumsq: bool):
    """Row max exponent ``E`` and (fast mode) fixed-point sum of squares ``S`` (row by row:
    formed over chunks of whole rows)."""
    check_finite(x, operand)
    *lead, k = x.shape
    rows = x.reshape(math.prod(lead), k)
    max_exp = np.empty(rows.shape[0], np.int64)
    sumsq = np.empty(rows.shape[0], np.int64) if need_sumsq else None
    step = max(_STATS_MIN_ROWS, _STATS_CHUNK // max(k, 1))
    for start in range(0, rows.shape[0], step):
        block = slice(start, start + step)
        e, s = _block_stats(rows[block], need_sumsq)
        max_exp[block] = e
        if need_sumsq:
            sumsq[block] = s
    shape = tuple(lead)
    return max_exp.reshape(shape), None if sumsq is None else sumsq.reshape(shape)


def _block_stats(x: np.ndarray, need_sumsq: bool):
    """:func:`row_stats` of the rows of ``x`` (2-D)."""
    parts = [np.frexp(p) for p in real_parts(x)]
    max_exp = None
    for frac, exp in parts:
        e = np.where(frac != 0, exp, ZERO_ROW_EXP).max(axis=-1, initial=ZERO_ROW_EXP)
        max_exp = e if max_exp is None else np.maximum(max_exp, e)
    max_exp = max_exp.astype(np.int64)
    if not need_sumsq:
        return max_exp, None
    sumsq = np.zeros(max_exp.shape, np.int64)
    for frac, exp in parts:
        c = np.ceil(np.abs(frac) * 2.0**BOUND_MANTISSA_BITS)  # 64..128, 0 for zeros
        shift = 2 * (exp - max_exp[..., None].astype(np.int32)) + FRACTION_BITS
        term = np.ceil(np.ldexp(c * c, np.maximum(shift, MIN_TERM_SHIFT)))
        sumsq += term.astype(np.int64).sum(axis=-1)
    return max_exp, sumsq


def bound_operand(x: np.ndarray, max_exp: np.ndarray, bound_bits: int) -> np.ndarray:
    """``ceil(2**(g - E)|x|)`` (at least 1 where x != 0), complex parts summed; float32."""
    shift = np.where(max_exp == ZERO_ROW_EXP, 0, bound_bits - max_exp)[..., None]
    out = None
    for part in real_parts(x):
        mag = np.abs(part)
        bar = np.ceil(np.ldexp(mag, shift.astype(np.int32)))
        bar = np.where(mag != 0, np.maximum(bar, 1.0), 0.0)
        out = bar if out is None else out + bar
    return out.astype(np.float32)


def bound_product(abar: np.ndarray, btbar: np.ndarray, bound_bits: int) -> np.ndarray:
    """Exact ``Abar @ Btbar^T`` as int64 (entries <= 2**(2g) k)."""
    prod = exact_int_matmul(abar, np.swapaxes(btbar, -1, -2), 2 ** (2 * bound_bits))
    return prod.astype(np.int64)
