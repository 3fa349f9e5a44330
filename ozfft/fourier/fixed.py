"""The fixed-point scheme on the NumPy engine (the bitwise reference for the GPU).

:class:`FixedPointExecutor` runs a one-pass plan per line (column): entry to fixed point
with one exponent, the stages as exact digit products with static rescales and exact
renormalizations, exit with one rounding — the integer rules of
:mod:`ozfft.ozaki.fixed_point`. :class:`FourStepExecutor` runs a four-step (multi-pass)
plan: the column transforms, the exact twiddle at the entry of each row pass, the row
passes, the transpose ("Multi-pass lines" there). The CUDA engine computes the same
integers, so both engines return the same bits.

Stage products
--------------
A stage's result is ``z = floor((y' + 2**(h-1)) / 2**h)`` with ``y' = sum_{d >= D}
256**d acc_d`` (the digit diagonals from ``D`` up). Grouping the pairs ``(c, a)`` by the
matrix digit ``c`` gives the same integer with far fewer products:

    y' = 256**D Y,   Y = sum_{c < D} W_c (x >> 8(D - c)) + W_h x,
    W_h = (W - sum_{c < D} 256**c W_c) / 256**D

(for ``c < D`` the data digits ``a >= D - c`` are ``x`` without its ``D - c`` low unsigned
bytes; for ``c >= D`` all of ``x``). ``Y`` is evaluated exactly as float64 GEMMs: each data
operand is cut into pieces of ``P`` bits, and pieces of one weight are stacked along the
reduction axis as long as ``sum |W| |piece| <= 2**53`` bounds every partial sum (fp64: two
GEMMs of reduction 12r and 8r per stage instead of 41 digit products of 2r); the
weighted sum and the rounding shift are then exact integer arithmetic
(:func:`~ozfft.ozaki.fixed_point.round_shift_sum`). The result equals the diagonal
definition bit for bit (the tests check it against Python integers).

FP8 Phase A (``phase_a="fp8"``, :class:`_Fp8StageProduct`): the diagonal definition
itself, each byte-digit product ``W_c X_a`` from the FP8 tensor cores' operands — the
4-bit sub-digits of both (:func:`~ozfft.ozaki.fixed_point.nibbles`, at most 16 in
magnitude: exact e4m3 values) — as float32 products over the stage's ``k = 2r`` terms
(every partial sum below ``256 k < 2**24``: exact), recombined in integers,
``256 C_h A_h + 16 (C_h A_l + C_l A_h) + C_l A_l``, and summed per diagonal
(:func:`~ozfft.ozaki.fixed_point.combine_diagonals`). Same integers, same bits as INT8.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ozaki.fixed_point import (
    Carried,
    DigitFormat,
    align_carried,
    carried_line_exponent,
    combine_diagonals,
    data_digits,
    fp8_stage_check,
    from_fixed,
    line_exponent,
    matrix_digits,
    nibbles,
    renormalize_shift,
    round_shift_sum,
    to_fixed,
    twiddle_product,
)
from .execute import ColumnsExecutor, no_input_flag, regroup_in, regroup_out, unreverse
from .plan import FFTPlan, Stage

__all__ = ["FixedPointExecutor", "FourStepExecutor", "fixed_executor"]

#: vectors per stage-product chunk (bounds the float64 piece buffers)
_CHUNK = 1 << 15
#: complex elements per block of columns a transform processes at once
_ELEMENTS = 1 << 18
#: every partial sum of an exact float64 GEMM stays within this
_EXACT = 1 << 53
#: data integers per chunk of the FP8 stage product (its float32 nibble products take
#: ``16 dw dx`` bytes per data integer: ~28 MiB for fp64)
_FP8_CHUNK = 1 << 15


def _columns(n: int) -> int:
    return max(1, _ELEMENTS // n)


class _StageProduct:
    """``z = floor((y' + 2**(h-1)) / 2**h)`` of one stage as a few exact float64 GEMMs
    (module doc, "Stage products")."""

    def __init__(self, stage: Stage, fmt: DigitFormat) -> None:
        d_first = fmt.first_diagonal
        if not (1 <= d_first <= fmt.matrix_digits and d_first < fmt.data_digits):
            raise ValueError(f"no grouped stage product for first diagonal {d_first}")
        self.k = 2 * stage.radix
        self.shift = fmt.stage_shift(stage.radix) - 8 * d_first  # h - 8D
        if self.shift < 1:
            raise ValueError("the stage shift must exceed the dropped diagonals")
        emb = stage.real_embedding()
        digits = matrix_digits(emb, fmt.matrix_digits).astype(np.int64)
        low = sum(digits[c] << (8 * c) for c in range(d_first))
        rest = emb - low
        if (rest & ((1 << (8 * d_first)) - 1)).any():
            raise AssertionError("W - low digits must be a multiple of 256**D")
        # (matrix, data shift) of every term of Y
        terms = [(digits[c], 8 * (d_first - c)) for c in range(d_first)]
        terms.append((rest >> (8 * d_first), 0))
        row_l1 = [int(np.abs(m).sum(axis=-1).max()) for m, _ in terms]
        best = None
        for width in range(52, 7, -1):
            bins = _pack(terms, row_l1, fmt.data_bits, width, self.k)
            if bins is not None and (best is None or _cost(bins, self.k) < _cost(best, self.k)):
                best = bins
        if best is None:
            raise ValueError("no exact float64 split of the stage product")
        #: (weight, stacked float64 matrix (prev, suffix, 2r, 2r * pieces), pieces)
        self.bins = [
            (
                w,
                np.concatenate([terms[t][0] for t, _, _ in pieces], axis=-1).astype(np.float64),
                [(shift, mask) for _, shift, mask in pieces],
            )
            for w, pieces in best
        ]
        self.weights = sorted({w for w, _, _ in self.bins})

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``z`` for integer vectors ``x`` ``(prev, suffix, 2r, V)`` (columns independent)."""
        out = np.empty(x.shape, np.int64)
        k = self.k
        for v0 in range(0, x.shape[-1], _CHUNK):
            xv = x[..., v0 : v0 + _CHUNK]
            sums: dict[int, np.ndarray] = {}
            tmp = np.empty(xv.shape, np.int64)
            for weight, matrix, pieces in self.bins:
                buf = np.empty((*xv.shape[:2], k * len(pieces), xv.shape[-1]), np.float64)
                for j, (shift, mask) in enumerate(pieces):
                    np.right_shift(xv, shift, out=tmp)
                    if mask is not None:
                        np.bitwise_and(tmp, mask, out=tmp)
                    buf[..., j * k : (j + 1) * k, :] = tmp
                part = np.matmul(matrix, buf).astype(np.int64)
                sums[weight] = part if weight not in sums else sums[weight] + part
            out[..., v0 : v0 + _CHUNK] = round_shift_sum(
                [sums[w] for w in self.weights], self.weights, self.shift
            )
        return out


class _Fp8StageProduct:
    """``z`` of one stage from FP8 products (module doc, FP8 Phase A): the nibble planes of
    the matrix digits times those of the data digits, float32 (exact), recombined per digit
    pair and diagonal in int64, then :func:`combine_diagonals`."""

    def __init__(self, stage: Stage, fmt: DigitFormat) -> None:
        self.fmt = fmt
        self.radix = stage.radix
        self.k = k = fp8_stage_check(stage.radix)
        emb = stage.real_embedding()  # (prev, suffix, k, k)
        low, high = nibbles(matrix_digits(emb, fmt.matrix_digits))  # (dw, prev, suffix, k, k)
        planes = np.stack([low, high], axis=1)  # (dw, 2, prev, suffix, k, k)
        # rows (c, h, i) of one stacked float32 matrix per (prev, suffix)
        planes = np.moveaxis(planes, (0, 1), (2, 3))  # (prev, suffix, dw, 2, k, k)
        self.matrix = np.ascontiguousarray(
            planes.reshape(*emb.shape[:2], 2 * fmt.matrix_digits * k, k), dtype=np.float32
        )
        self.diagonals = range(fmt.first_diagonal, fmt.last_diagonal + 1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``z`` for integer vectors ``x`` ``(prev, suffix, 2r, V)`` (columns independent)."""
        fmt, k = self.fmt, self.k
        dw, dx = fmt.matrix_digits, fmt.data_digits
        prev, suffix, _, vectors = x.shape
        out = np.empty(x.shape, np.int64)
        step = max(1, _FP8_CHUNK // (prev * suffix * k))
        for v0 in range(0, vectors, step):
            xv = x[..., v0 : v0 + step]
            v = xv.shape[-1]
            low, high = nibbles(data_digits(xv, dx))  # (dx, prev, suffix, k, v)
            planes = np.stack([low, high], axis=1)  # (dx, 2, prev, suffix, k, v)
            data = np.moveaxis(planes, (0, 1), (3, 4)).reshape(prev, suffix, k, 2 * dx * v)
            # every partial sum of these float32 products is an integer below 256 k < 2**24
            p = np.matmul(self.matrix, data.astype(np.float32))
            p = p.reshape(prev, suffix, dw, 2, k, dx, 2, v).astype(np.int32)
            # byte-digit products W_c X_a (|.| <= 128 * 255 k < 2**31): (prev, suffix, dw,
            # k, dx, v)
            q = (
                (p[:, :, :, 1, :, :, 1] << 8)
                + ((p[:, :, :, 1, :, :, 0] + p[:, :, :, 0, :, :, 1]) << 4)
                + p[:, :, :, 0, :, :, 0]
            )
            acc = [
                sum(q[:, :, c, :, a].astype(np.int64) for c, a in fmt.pairs(d))
                for d in self.diagonals
            ]
            out[..., v0 : v0 + v] = combine_diagonals(acc, fmt, self.radix)
        return out


#: the stage products of each Phase A
_STAGE_PRODUCTS = {"int8": _StageProduct, "fp8": _Fp8StageProduct}


def _pack(terms, row_l1, data_bits: int, width: int, k: int):
    """Pieces of ``width`` bits of every term's data, packed per weight into GEMMs whose
    partial sums stay within ``2**53`` (first fit, largest bound first); None if a piece
    alone exceeds it. Returns ``[(weight, [(term, shift, mask or None), ...]), ...]``."""
    by_weight: dict[int, list[tuple[int, int, int, int | None]]] = {}
    for t, (_, shift) in enumerate(terms):
        bits = data_bits - shift  # |x >> shift| <= 2**bits
        count = 1 if bits <= width else -(-bits // width)
        for i in range(count):
            top = i == count - 1
            largest = (1 << (bits - i * width)) if top else (1 << width) - 1
            bound = row_l1[t] * largest
            if bound > _EXACT:
                return None
            mask = None if top else (1 << width) - 1
            by_weight.setdefault(i * width, []).append((bound, t, shift + i * width, mask))
    packed = []
    for weight in sorted(by_weight):
        bins: list[list] = []  # [total bound, pieces]
        for bound, t, shift, mask in sorted(by_weight[weight], key=lambda p: -p[0]):
            for b in bins:
                if b[0] + bound <= _EXACT:
                    b[0] += bound
                    b[1].append((t, shift, mask))
                    break
            else:
                bins.append([bound, [(t, shift, mask)]])
        packed += [(weight, pieces) for _, pieces in bins]
    return packed


def _cost(bins, k: int) -> int:
    """Reduction length of all GEMMs plus a charge per GEMM (its conversion and sum)."""
    return sum(k * len(pieces) + 2 * k for _, pieces in bins)


class FixedPointExecutor(ColumnsExecutor):
    """A one-pass ``"fixed"`` plan on numpy arrays; owns the stages' float64 matrices."""

    def __init__(self, plan: FFTPlan, phase_a: str = "int8") -> None:
        if plan.scheme != "fixed" or plan.four_step is not None or plan.bluestein is not None:
            raise ValueError("not a one-pass fixed-point plan")
        if phase_a not in _STAGE_PRODUCTS:
            raise ValueError(f"phase_a is one of {tuple(_STAGE_PRODUCTS)} here, not {phase_a!r}")
        self.plan = plan
        #: the arithmetic of the stage products ("int8" or "fp8"); the same integers
        self.phase_a = phase_a
        product = _STAGE_PRODUCTS[phase_a]
        self._products = [product(s, plan.digit_format) for s in plan.stages]

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Forward DFT of each column of complex128 ``x`` ``(n, B)``."""
        if x.shape[1] == 0 or self.plan.n == 1:
            return x.astype(np.complex128, copy=True)
        return self.forward_carried(x, 0)

    def forward_carried(
        self,
        x: np.ndarray | None,
        axis: int,
        *,
        overwrite: bool = False,
        carry: Carried | None = None,
        keep: bool = False,
        nonfinite: Any = None,
    ) -> np.ndarray | Carried:
        """The transform along ``axis`` (>= 0) of complex ``x``, or of the carried fixed
        point ``carry`` of the previous pass (``x`` unused), with one rounding to float64
        at the exit — or none with ``keep``: then the result is :class:`Carried`
        (:mod:`ozfft.ozaki.fixed_point`, "Carried fixed point")."""
        no_input_flag(self, nonfinite)
        fmt = self.plan.digit_format
        n, bits = self.plan.n, fmt.data_bits
        if carry is None:
            moved = np.moveaxis(x, axis, 0)
            rest = moved.shape[1:]
            cols = np.ascontiguousarray(moved, dtype=np.complex128).reshape(n, -1)
            source_e = None
        else:
            shape = carry.shape
            rest = shape[:axis] + shape[axis + 1 :]
            cols = np.ascontiguousarray(np.moveaxis(carry.parts, axis, 0)).reshape(n, -1, 2)
            e_full = np.broadcast_to(np.expand_dims(carry.exponents, carry.axis), shape)
            source_e = np.ascontiguousarray(np.moveaxis(e_full, axis, 0)).reshape(n, -1)
        batch = cols.shape[1]
        if keep:
            parts = np.empty((n, batch, 2), np.int64)
            exponents = np.empty(batch, np.int64)
        else:
            out = np.empty((n, batch), np.complex128)
        step = _columns(n)
        for c0 in range(0, batch, step):
            c1 = min(c0 + step, batch)
            if source_e is None:
                block = cols[:, c0:c1]
                re, im = np.ascontiguousarray(block.real), np.ascontiguousarray(block.imag)
                line_exp = line_exponent(re, im, axis=0)
                xr = to_fixed(re, line_exp[None, :], bits)
                xi = to_fixed(im, line_exp[None, :], bits)
            else:
                zr, zi, e = cols[:, c0:c1, 0], cols[:, c0:c1, 1], source_e[:, c0:c1]
                line_exp = carried_line_exponent(zr, zi, e, axis=0)
                xr = align_carried(zr, e, line_exp[None, :], bits)
                xi = align_carried(zi, e, line_exp[None, :], bits)
            zr, zi, exponent = self.run_stages(xr, xi, line_exp - bits)
            if keep:
                parts[:, c0:c1, 0] = zr
                parts[:, c0:c1, 1] = zi
                exponents[c0:c1] = exponent
            else:
                out.real[:, c0:c1] = from_fixed(zr, exponent[None, :])
                out.imag[:, c0:c1] = from_fixed(zi, exponent[None, :])
        if keep:
            moved_parts = np.moveaxis(parts.reshape(n, *rest, 2), 0, axis)
            return Carried(moved_parts, exponents.reshape(rest), axis, moved_parts.shape[:-1])
        return np.moveaxis(out.reshape(n, *rest), 0, axis)

    def forward_real(
        self, x: np.ndarray, axis: int, *, keep: bool = False, nonfinite: Any = None
    ) -> np.ndarray | Carried:
        """The first ``n // 2 + 1`` outputs along ``axis`` (>= 0) of the transform of real
        ``x``: the complex transform of ``x + 0j`` (:meth:`forward_carried`), cropped."""
        no_input_flag(self, nonfinite)
        result = self.forward_carried(
            np.asarray(x, np.float64).astype(np.complex128), axis, keep=keep
        )
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, self.plan.n // 2 + 1)
        if keep:
            parts = np.ascontiguousarray(result.parts[(*index, slice(None))])
            return Carried(parts, result.exponents, axis, parts.shape[:-1])
        return np.ascontiguousarray(result[tuple(index)])

    def run_stages(
        self, xr: np.ndarray, xi: np.ndarray, exponent: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The plan's stages on fixed-point lines: int64 ``(n, C)`` parts with one exponent
        per column; renormalizes before stages 2.. (not before stage 1). Returns the
        parts in natural order and the exponents."""
        plan, fmt = self.plan, self.plan.digit_format
        n, batch = xr.shape
        data = [xr.reshape(1, n, batch), xi.reshape(1, n, batch)]
        for idx, stage in enumerate(plan.stages):
            if idx > 0:  # exact left shift back to T bits per line
                line_max = np.maximum(
                    np.abs(data[0]).max(axis=(0, 1)), np.abs(data[1]).max(axis=(0, 1))
                )
                shift = renormalize_shift(line_max, fmt.data_bits)
                data = [part << shift for part in data]
                exponent = exponent - shift
            shape = data[0].shape
            ops = [regroup_in(np, part, plan.radices, idx) for part in data]
            interleaved = np.empty((*ops[0].shape[:2], 2 * stage.radix, ops[0].shape[3]), np.int64)
            interleaved[..., 0::2, :] = ops[0]
            interleaved[..., 1::2, :] = ops[1]
            z = self._products[idx](interleaved)
            data = [regroup_out(np, z[..., c::2, :], plan.radices, idx, shape) for c in (0, 1)]
            exponent = exponent + fmt.exponent_gain(stage.radix)
        zr = unreverse(np, data[0], plan.radices, n, batch)
        zi = unreverse(np, data[1], plan.radices, n, batch)
        return zr, zi, exponent


class FourStepExecutor(ColumnsExecutor):
    """A four-step ``"fixed"`` plan on numpy arrays (:class:`~.plan.FourStep`): step A
    through ``inner_a``'s executor down the columns, step B (entry, exact twiddle,
    renormalization, ``inner_b``'s stages, exit) per row, output transposed."""

    def __init__(self, plan: FFTPlan, sub_executor: Callable[[FFTPlan], Any] | None = None) -> None:
        if plan.scheme != "fixed" or plan.four_step is None:
            raise ValueError("not a four-step fixed-point plan")
        self.plan = plan
        sub_executor = sub_executor or fixed_executor
        steps = plan.four_step
        self._inner_a = sub_executor(steps.inner_a)
        self._inner_b = sub_executor(steps.inner_b)
        if not isinstance(self._inner_b, FixedPointExecutor):
            raise ValueError("the row pass must be a one-pass executor")

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Forward DFT of each column of complex128 ``x`` ``(n, B)``."""
        steps, fmt = self.plan.four_step, self.plan.digit_format
        n, batch = x.shape
        if batch == 0:
            return x.astype(np.complex128, copy=True)
        n_a, n_b = steps.n_a, steps.n_b
        # step A: x[j_a n_b + j_b, b] is column (j_b, b) of an (n_a, n_b B) array
        a = self._inner_a.transform(np.ascontiguousarray(x).reshape(n_a, n_b * batch))
        rows = np.ascontiguousarray(a.reshape(n_a, n_b, batch).transpose(1, 0, 2))
        del a
        rows = rows.reshape(n_b, n_a * batch)  # column c: row k_a = c // B of the (n_a, n_b) view
        out = np.empty((n_b, n_a * batch), np.complex128)
        j_b = np.arange(n_b, dtype=np.int64)[:, None]
        step = _columns(n_b)
        for c0 in range(0, n_a * batch, step):
            c1 = min(c0 + step, n_a * batch)
            block = rows[:, c0:c1]
            re, im = np.ascontiguousarray(block.real), np.ascontiguousarray(block.imag)
            line_exp = line_exponent(re, im, axis=0)
            xr = to_fixed(re, line_exp[None, :], fmt.data_bits)
            xi = to_fixed(im, line_exp[None, :], fmt.data_bits)
            k_a = np.arange(c0, c1, dtype=np.int64) // batch
            index = (j_b * k_a[None, :]) % n
            xr, xi = twiddle_product(
                xr, xi, steps.twiddle_re[index], steps.twiddle_im[index], steps.twiddle_bits
            )
            line_max = np.maximum(np.abs(xr).max(axis=0), np.abs(xi).max(axis=0))
            shift = renormalize_shift(line_max, fmt.data_bits)
            exponent = line_exp - fmt.data_bits + 1 - shift
            zr, zi, exponent = self._inner_b.run_stages(xr << shift, xi << shift, exponent)
            out.real[:, c0:c1] = from_fixed(zr, exponent[None, :])
            out.imag[:, c0:c1] = from_fixed(zi, exponent[None, :])
        # out[k_b, (k_a, b)] is X(k_a, k_b): natural order k = k_b n_a + k_a
        return out.reshape(n, batch)


def fixed_executor(
    plan: FFTPlan,
    sub_executor: Callable[[FFTPlan], Any] | None = None,
    phase_a: str = "int8",
) -> FixedPointExecutor | FourStepExecutor:
    """The NumPy executor of a one-pass or four-step fixed-point plan (a four-step plan's
    sub-plans through ``sub_executor``, default: this function with the same
    ``phase_a``), its stage products on INT8 or FP8 operands (``phase_a``)."""
    if plan.four_step is not None:
        if sub_executor is None:

            def sub_executor(sub: FFTPlan) -> Any:
                return fixed_executor(sub, phase_a=phase_a)

        return FourStepExecutor(plan, sub_executor)
    return FixedPointExecutor(plan, phase_a)
