"""The fixed-point digit-stage scheme on the NumPy engine (the reference for the GPU).

Per line (column): entry to fixed point with one exponent, the stages of the plan as
exact digit products with static rescales, exit with one rounding — the integer rules
of :mod:`ozfft.ozaki.fixed_point`. Digit products run as float64 matrix products, exact
because every partial sum stays below ``2**31``. The CUDA engine's fused kernel computes
the same integers per vector, so both engines return the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ozaki.fixed_point import (
    combine_diagonals,
    data_digits,
    from_fixed,
    line_exponent,
    matrix_digits,
    renormalize_shift,
    to_fixed,
)
from .execute import regroup_in, regroup_out, unreverse
from .plan import FFTPlan

__all__ = ["FixedPointExecutor"]

#: vectors per digit-product chunk (bounds the float64 digit planes' memory)
_CHUNK = 1 << 15


class FixedPointExecutor:
    """A ``"fixed"`` plan on numpy arrays; owns the stage matrices' digit planes."""

    def __init__(self, plan: FFTPlan) -> None:
        if plan.scheme != "fixed":
            raise ValueError(f"not a fixed-point plan: {plan.scheme!r}")
        self.plan = plan
        fmt = plan.digit_format
        #: per stage: (dw, prev, suffix, 2r, 2r) float64 balanced digits of the embedding
        self._digits = [
            matrix_digits(s.real_embedding(), fmt.matrix_digits).astype(np.float64)
            for s in plan.stages
        ]

    def forward(self, x: Any, axis: int) -> Any:
        n = self.plan.n
        moved = np.moveaxis(x, axis, 0)
        shape = moved.shape
        cols = np.ascontiguousarray(moved).reshape(n, -1)
        return np.moveaxis(self.transform(cols).reshape(shape), 0, axis)

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Forward DFT of each column of complex128 ``x`` ``(n, B)``."""
        plan, fmt = self.plan, self.plan.digit_format
        n, batch = x.shape
        if batch == 0 or n == 1:
            return x.astype(np.complex128, copy=True)
        re, im = np.ascontiguousarray(x.real), np.ascontiguousarray(x.imag)
        line_exp = line_exponent(re, im, axis=0)
        data = [
            to_fixed(part, line_exp[None, :], fmt.data_bits).reshape(1, n, batch)
            for part in (re, im)
        ]
        exponent = line_exp - fmt.data_bits
        for idx, stage in enumerate(plan.stages):
            if idx > 0:  # exact left shift back to T bits per line
                line_max = np.maximum(np.abs(data[0]).max(axis=(0, 1)), np.abs(data[1]).max(axis=(0, 1)))
                shift = renormalize_shift(line_max, fmt.data_bits)
                data = [part << shift for part in data]
                exponent = exponent - shift
            shape = data[0].shape
            ops = [regroup_in(np, part, plan.radices, idx) for part in data]
            interleaved = np.empty((*ops[0].shape[:2], 2 * stage.radix, ops[0].shape[3]), np.int64)
            interleaved[..., 0::2, :] = ops[0]
            interleaved[..., 1::2, :] = ops[1]
            z = self._stage_product(idx, interleaved)
            data = [regroup_out(np, z[..., c::2, :], plan.radices, idx, shape) for c in (0, 1)]
            exponent = exponent + fmt.exponent_gain(stage.radix)
        out = np.empty((n, batch), np.complex128)
        out.real = from_fixed(unreverse(np, data[0], plan.radices, n, batch), exponent[None, :])
        out.imag = from_fixed(unreverse(np, data[1], plan.radices, n, batch), exponent[None, :])
        return out

    def _stage_product(self, idx: int, x: np.ndarray) -> np.ndarray:
        """``z = round(W x / 2**h)`` of stage ``idx`` for integer vectors ``x``
        ``(prev, suffix, 2r, V)`` (columns are independent)."""
        fmt = self.plan.digit_format
        radix = self.plan.stages[idx].radix
        w = self._digits[idx]
        out = np.empty(x.shape, np.int64)
        for v0 in range(0, x.shape[-1], _CHUNK):
            xd = data_digits(x[..., v0 : v0 + _CHUNK], fmt.data_digits).astype(np.float64)
            acc = []
            for d in range(fmt.first_diagonal, fmt.last_diagonal + 1):
                total = None
                for c, a in fmt.pairs(d):
                    term = np.matmul(w[c], xd[a])
                    total = term if total is None else total + term
                acc.append(total.astype(np.int64))
            out[..., v0 : v0 + _CHUNK] = combine_diagonals(acc, fmt, radix)
        return out
