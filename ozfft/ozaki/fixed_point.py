"""Fixed-point DFT stages on byte digits: the integer rules both engines follow.

A line of a transform is held as complex integers ``x`` (``|x_j| <= 2**T``) with one
power-of-two exponent ``e`` per line (value ``x * 2**e``). A stage multiplies by an
exact integer matrix ``W = round(2**S M)`` (``M`` the radix-``r`` DFT with its twiddles
folded in) and rescales by a *static* shift ``h = S + ceil(log2 r) + 1``:

    y = W x  (exact),        z = floor((y' + 2**(h-1)) / 2**h),      e += h - S

so ``|z| <= 2**T`` again (``|Re y|, |Im y| <= r (sqrt 2 * 2**S + 1) 2**T``). The static
shift assumes the worst growth ``r``; typical data grow by ``sqrt r``. So before each
later stage the line is renormalized exactly — shifted *left* by ``s = T - bitlen(max|z|)``
(``e -= s``) — and every stage starts from a full ``T``-bit line: the rounding of a
stage costs about ``log2(r)/2 + 1`` bits against ``T``, and the losses do not add up.

The product runs on 8-bit digits, the work of INT8 tensor cores. The data digits are
the bytes of ``x`` (``b_0 .. b_{dx-2}`` unsigned, the top one signed), the matrix digits
are balanced (``w_c`` in ``[-128, 127]``), and the complex product is the real product
of the embedding ``[[Wr, -Wi], [Wi, Wr]]`` with interleaved ``(re, im)`` inputs:

    y = sum_{c, a} 256**(c + a) (W_c X_a) = sum_d 256**d acc_d,   acc_d = sum_{c+a=d} W_c X_a

Each ``acc_d`` is an exact INT32 sum (``|acc_d| <= 7 * 128 * 128 * 255 < 2**31`` for radix
<= 64). Diagonals ``d < D`` are left out: ``y' = sum_{d >= D} 256**d acc_d`` differs from
``y`` by less than ``2**(8D + 18)``, which ``D`` keeps below ``2**-P`` of the full scale
``2**(S+T)`` (``P`` = 58 bits for fp64, under the ``2**-55`` quantization of the roots;
34 for fp32). The truncation is part of the definition, so both engines compute the
same ``z``.

FP8 Phase A (``phase_a="fp8"``): e4m3 holds every integer of magnitude at most 16, so
each byte-digit product is formed from 4-bit sub-digits (:func:`nibbles`): a matrix digit
``c = 16 c_h + c_l`` (``c_l`` in ``[-8, 7]``, ``c_h`` in ``[-8, 8]``), a data digit
``a = 16 a_h + a_l`` (``a_l`` in ``[-8, 7]``; ``a_h`` in ``[0, 16]`` for an unsigned
byte, in ``[-4, 4]`` for the signed top one), and

    W_c X_a = 256 (C_h A_h) + 16 (C_h A_l + C_l A_h) + C_l A_l,

each nibble product a sum over the stage's ``k = 2r`` real terms of products of at most
``16 * 16`` in magnitude: FP32-accumulated, exact while ``256 k < 2**24``
(:func:`fp8_stage_check`; docs/numerics.md, "FP8 accumulation"). The nibble products are
then recombined in integers, which gives every ``acc_d`` bit for bit: the FP8 Phase A of
the FFT computes the same ``z`` as the INT8 one.

Entry from floating point: the line exponent ``E`` is the largest ``frexp`` exponent of
the line's components and ``x = floor(v 2**(T - E) + 1/2)``. Exit: ``z 2**e`` rounded
once, to nearest even (subnormals and overflow as IEEE 754) — no floating-point
arithmetic touches the data in between.

Multi-pass lines (Bailey's four-step)
-------------------------------------
A length ``n`` longer than one pass (``n <= 2**26``, prime factors <= 64) is split as
``n = n_a n_b`` with ``n_b <= 1024`` one pass (``ozfft.fourier.plan`` picks the split:
fewest passes, then the largest ``n_b``; ``n_a`` may split again). The data, viewed
row-major as ``(n_a, n_b)`` (``j = j_a n_b + j_b``), go through:

A. the length-``n_a`` transform (one pass, or recursively four-step) down every column
   ``j_b``, with its own entry (one line exponent per column) and its own exit: float64
   ``A(k_a, j_b)``;
B. per row ``k_a``, one pass of length ``n_b``:

   1. entry as above: ``E`` over the row's float64 values, ``x = to_fixed(v, E, T)``,
      ``e = E - T``;
   2. the exact twiddle: ``t = fixed_roots(n, S)[(k_a j_b) mod n]`` (Gaussian integers
      ``nint(2**S exp(-2 pi i k_a j_b / n))``, ``S`` = ``matrix_bits``) and, with the exact
      complex product ``x t`` (``re = xr tr - xi ti``, ``im = xr ti + xi tr``, ~117 bits),
      ``x' = floor(x t / 2**(S+1) + 1/2)`` per part (:func:`twiddle_product`), ``e += 1``
      (``|x'| <= 2**T / sqrt 2 + 1``);
   3. the exact renormalization of a later stage: ``x' <<= s``, ``e -= s`` with
      ``s = renormalize_shift(max |x'| over the row, T)``;
   4. the stages of ``n_b``'s one-pass plan (renormalized before stages 2.., not again
      before stage 1), exit ``from_fixed`` with the final exponent: ``X(k_a, k_b)``;

C. natural order: ``out[k_a + n_a k_b] = X(k_a, k_b)`` (the transpose of ``X``).

Every pass rounds once to float64 at its exit; the twiddle is rounded once, in fixed
point, inside the pass that applies it.

Carried fixed point between the passes of an n-D transform
----------------------------------------------------------
Consecutive one-pass axes of ``fftn``/``ifftn`` (and of the complex axes of ``rfftn``/
``irfftn``) hand their result on in fixed point instead of float64 (:class:`Carried`):
the int64 parts ``z`` of every element in natural order and, per line of the pass that
made them, its exit exponent ``e`` (value ``z 2**e``), so the transform rounds to float64
once, at the exit of its last pass. The next pass, along another axis, reads element ``j``
of its line with the exponent ``e_j`` of the line it came from, and enters fixed point as
from float64, with ``z 2**e`` in place of ``v``:

    E = max over nonzero elements of (bitlen(|z_re| | |z_im|) + e_j)   (the frexp exponent)
    x = floor(z 2**(e_j + T - E) + 1/2)                                  (:func:`align_carried`)

(exact left shifts where ``e_j + T >= E``). A float64 line is the special case
``z = ±m``, ``e = f - 1075`` of its significands and biased exponents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .residue_system import FP8_DIGIT_MAX, FP8_EXACT_BITS
from .scaling import ceil_log2_int

__all__ = [
    "FORMATS",
    "Carried",
    "DigitFormat",
    "align_carried",
    "bit_length",
    "carried_line_exponent",
    "combine_diagonals",
    "data_digits",
    "fp8_stage_check",
    "from_fixed",
    "line_exponent",
    "matrix_digits",
    "nibbles",
    "renormalize_shift",
    "round_shift_sum",
    "to_fixed",
    "twiddle_product",
]


@dataclass(frozen=True)
class DigitFormat:
    """Digit counts of one precision: data ``x`` in ``dx`` bytes, matrices in ``dw``."""

    data_digits: int
    matrix_digits: int
    #: bits of the full scale the dropped diagonals may not reach (see :attr:`first_diagonal`)
    target_bits: int

    @property
    def data_bits(self) -> int:
        """``T``: ``|x| <= 2**T`` keeps the top byte of ``x`` in ``[-64, 64]``."""
        return 8 * self.data_digits - 2

    @property
    def matrix_bits(self) -> int:
        """``S``: ``|W| <= 2**S + 1`` has ``dw`` balanced base-256 digits."""
        return 8 * self.matrix_digits - 2

    @property
    def first_diagonal(self) -> int:
        """``D``: the dropped diagonals ``d < D`` sum to less than ``2**(8D + 18)`` (at most
        7 pairs, k <= 128, |digit products| < 2**15 each), at most ``2**-P`` of ``2**(S+T)``."""
        return max(0, (self.matrix_bits + self.data_bits - self.target_bits - 18) // 8)

    @property
    def last_diagonal(self) -> int:
        return self.data_digits + self.matrix_digits - 2

    def stage_shift(self, radix: int) -> int:
        """``h = S + ceil(log2 r) + 1``: the static rescale of a radix-``r`` stage."""
        return self.matrix_bits + ceil_log2_int(radix) + 1

    def exponent_gain(self, radix: int) -> int:
        """``h - S``: what a stage adds to the line exponent."""
        return ceil_log2_int(radix) + 1

    def pairs(self, diagonal: int) -> list[tuple[int, int]]:
        """``(c, a)`` digit pairs (matrix, data) on one diagonal ``c + a = d``."""
        return [
            (c, diagonal - c)
            for c in range(self.matrix_digits)
            if 0 <= diagonal - c < self.data_digits
        ]


#: fp64: T = 62, S = 54 (relative root error 2**-55), D = 5: 41 digit products per stage;
#: fp32: T = 30, S = 30, D = 1: 15.
FORMATS: dict[str, DigitFormat] = {
    "fp64": DigitFormat(data_digits=8, matrix_digits=7, target_bits=58),
    "fp32": DigitFormat(data_digits=4, matrix_digits=4, target_bits=34),
}


def matrix_digits(w: np.ndarray, count: int) -> np.ndarray:
    """Balanced base-256 digits ``(count, ...)`` int8 of an int64 array: ``w = sum_c
    w_c 256**c``, ``w_c`` in ``[-128, 127]``; raises if ``w`` needs more digits."""
    rest = np.asarray(w, np.int64).copy()
    out = np.empty((count, *rest.shape), np.int8)
    for c in range(count):
        digit = ((rest + 128) & 255) - 128
        out[c] = digit
        rest = (rest - digit) >> 8
    if rest.any():
        raise ValueError(f"matrix entries need more than {count} balanced base-256 digits")
    return out


def data_digits(x: np.ndarray, count: int) -> np.ndarray:
    """Digits ``(count, ...)`` int64 of ``x``: bytes ``0 .. count-2`` unsigned, the top
    byte signed (``x = sum_a b_a 256**a``, two's complement)."""
    x = np.asarray(x, np.int64)
    out = np.empty((count, *x.shape), np.int64)
    for a in range(count - 1):
        out[a] = (x >> (8 * a)) & 255
    out[count - 1] = x >> (8 * (count - 1))
    return out


def nibbles(digits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` int64 sub-digits of byte digits (balanced matrix digits in
    ``[-128, 127]``, unsigned data bytes in ``[0, 255]`` or a signed top byte):
    ``digit = 16 high + low``, ``low = ((digit + 8) & 15) - 8`` in ``[-8, 7]``, so
    ``|high| <= 16`` (``[-8, 8]`` for balanced digits, ``[0, 16]`` for unsigned bytes):
    every sub-digit is an exact e4m3 value. Raises if a digit is out of byte range."""
    d = np.asarray(digits, np.int64)
    low = ((d + 8) & 15) - 8
    high = (d - low) >> 4
    if np.abs(high).max(initial=0) > FP8_DIGIT_MAX:
        raise ValueError("a digit does not split into e4m3 sub-digits (|digit| > 263)")
    return low, high


def fp8_stage_check(radix: int) -> int:
    """``k = 2 radix``, the real terms of a stage's nibble products, after checking that
    their FP32 sums stay exact: every term is at most ``16 * 16`` in magnitude, so every
    partial sum is below ``256 k``, which must stay below ``2**24`` (radix < 32768)."""
    k = 2 * radix
    if FP8_DIGIT_MAX**2 * k >= 1 << FP8_EXACT_BITS:
        raise AssertionError(f"radix {radix}: FP32 sums of FP8 nibble products are not exact")
    return k


def combine_diagonals(acc: list[np.ndarray], fmt: DigitFormat, radix: int) -> np.ndarray:
    """``z = floor((sum_{d>=D} 256**d acc_d + 2**(h-1)) / 2**h)`` exactly, int64.

    ``acc[i]`` holds diagonal ``D + i`` (int64, ``|acc| < 2**31``). Four diagonals form a
    32-bit limb group (``|G| < 2**50``); the groups are carried in base ``2**32`` and the
    shift is applied across them in wrapping 64-bit arithmetic, exact because ``|z| <=
    2**T < 2**63``.
    """
    shift = fmt.stage_shift(radix) - 8 * fmt.first_diagonal  # h' in [23, 30)
    groups = []
    for g in range(0, len(acc), 4):
        total = np.zeros_like(acc[0])
        for i, a in enumerate(acc[g : g + 4]):
            total += a << (8 * i)
        groups.append(total)
    groups[0] = groups[0] + (1 << (shift - 1))
    mask = (1 << 32) - 1
    z = np.zeros_like(groups[0])
    carry = np.zeros_like(groups[0])
    for g, total in enumerate(groups):
        t = total + carry
        last = g == len(groups) - 1
        limb = t if last else t & mask
        carry = t >> 32
        offset = 32 * g - shift
        if offset < 0:
            z += limb >> -offset
        elif offset < 64:
            z += np.left_shift(limb, offset)  # wraps mod 2**64; the true z fits
    return z


def bit_length(m: np.ndarray) -> np.ndarray:
    """Exact bit length of non-negative int64 values (0 for 0)."""
    m = np.asarray(m, np.int64)
    _, e = np.frexp(m.astype(np.float64))
    e = e.astype(np.int64)
    # the conversion may round up to the next power of two: correct exactly
    too_big = (e > 0) & ((m >> np.maximum(e - 1, 0)) == 0)
    return e - too_big


def renormalize_shift(line_max: np.ndarray, data_bits: int) -> np.ndarray:
    """``s = T - bitlen(max|z|)`` per line (0 for an all-zero line): the exact left shift
    that brings the line's largest component back to ``T`` bits."""
    bl = bit_length(line_max)
    return np.where(bl > 0, np.maximum(data_bits - bl, 0), 0).astype(np.int64)


def line_exponent(re: np.ndarray, im: np.ndarray, axis: int = 0) -> np.ndarray:
    """``E``: the largest frexp exponent of the components along ``axis`` (0 if all
    are zero), so every ``|v| < 2**E``."""
    _, er = np.frexp(re)
    _, ei = np.frexp(im)
    er = np.where(re != 0, er, np.iinfo(np.int32).min)
    ei = np.where(im != 0, ei, np.iinfo(np.int32).min)
    e = np.maximum(er.max(axis=axis), ei.max(axis=axis)).astype(np.int64)
    return np.where(e == np.iinfo(np.int32).min, 0, e)


class Carried(NamedTuple):
    """Fixed point handed from one pass of an n-D transform to the next (module doc,
    "Carried fixed point"): ``parts`` the int64 pairs (re, im) of every element in natural
    order, ``exponents`` one integer per line of the pass along ``axis`` (the lines in
    C order of the shape without ``axis``): element ``idx`` is ``parts[idx] 2**exponents
    [idx without axis]``. Arrays of the engine that made them, in its layout: the NumPy
    engine keeps int64 ``(*shape, 2)`` and exponents of the shape without ``axis``, the
    CUDA engine the complex128-typed buffer of the same bytes and a flat exponent array;
    ``shape`` is the transform's shape in both."""

    parts: Any
    exponents: Any
    axis: int
    shape: tuple[int, ...]


def carried_line_exponent(
    zr: np.ndarray, zi: np.ndarray, e: np.ndarray, axis: int = 0
) -> np.ndarray:
    """``E`` of lines of carried values ``z 2**e``: the largest ``bitlen(|z|) + e`` over
    the nonzero elements along ``axis`` (0 if all are zero), as :func:`line_exponent`."""
    b = bit_length(np.abs(zr) | np.abs(zi))
    key = np.where(b > 0, b + e, np.iinfo(np.int64).min)
    top = key.max(axis=axis)
    return np.where(top == np.iinfo(np.int64).min, 0, top)


def align_carried(z: np.ndarray, e: np.ndarray, exponent: np.ndarray, data_bits: int) -> np.ndarray:
    """``floor(z 2**(e + T - E) + 1/2)`` exactly as int64 (``e`` and ``E`` broadcast; a
    left shift where ``e + T >= E``, else ``((z >> (k - 1)) + 1) >> 1`` for the right
    shift ``k``, ``k - 1`` clipped to 63)."""
    q = np.asarray(e, np.int64) + data_bits - exponent
    left = np.left_shift(z, np.clip(q, 0, 62))
    right = ((z >> np.clip(-q - 1, 0, 63)) + 1) >> 1
    return np.where(q >= 0, left, right)


def to_fixed(v: np.ndarray, exponent: np.ndarray, data_bits: int) -> np.ndarray:
    """``floor(v 2**(T - E) + 1/2)`` exactly as int64 (``exponent`` broadcasts)."""
    f, ev = np.frexp(np.asarray(v, np.float64))
    m = np.ldexp(f, 53).astype(np.int64)  # v = m 2**(ev - 53), |m| < 2**53
    q = ev.astype(np.int64) - 53 + data_bits - exponent
    left = np.left_shift(m, np.clip(q, 0, 62))
    k = np.clip(-q, 1, 62)
    right = (m + (np.int64(1) << (k - 1))) >> k
    return np.where(q >= 0, left, np.where(-q >= 55, 0, right))


def from_fixed(z: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """float64 ``z 2**e`` rounded once to nearest even (IEEE 754 subnormals and overflow
    to infinity).

    Normal results: the int64 -> float64 conversion (IEEE, round to nearest even) and an
    exact scaling by ``2**e``; a result below ``2**-1022`` would be rounded twice that
    way, so those are assembled from integer bits (:func:`_from_fixed_bits`)."""
    z = np.asarray(z, np.int64)
    e = np.broadcast_to(np.asarray(exponent, np.int64), z.shape)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(z.astype(np.float64), np.clip(e, -4000, 4000).astype(np.int32))
    tiny = np.abs(out) < _SMALLEST_NORMAL
    tiny &= z != 0
    if tiny.any():
        out[tiny] = _from_fixed_bits(z[tiny], e[tiny])
    return out


_SMALLEST_NORMAL = 2.0**-1022


def _from_fixed_bits(z: np.ndarray, e: np.ndarray) -> np.ndarray:
    """:func:`from_fixed` assembled from integer bits (any result)."""
    negative = z < 0
    m = np.abs(z)
    b = bit_length(m)
    p = np.maximum(b - 53, -1074 - e)  # lowest kept bit of m
    ps = np.clip(p, 1, 63)
    q = np.where(p >= 64, 0, m >> ps)
    rem = m & ((np.int64(1) << ps) - 1)
    half = np.int64(1) << (ps - 1)
    up = (p < 64) & ((rem > half) | ((rem == half) & ((q & 1) == 1)))
    q = np.where(p > 0, q + up, m)
    e2 = e + np.maximum(p, 0)  # value = q 2**e2, q <= 2**53
    bq = bit_length(q)
    top = bq - 1 + e2
    normal_mant = np.where(bq > 53, q >> 1, np.left_shift(q, np.clip(53 - bq, 0, 63)))
    normal = ((top + 1023) << 52) | (normal_mant & ((np.int64(1) << 52) - 1))
    sub = np.left_shift(q, np.clip(e2 + 1074, 0, 63))
    bits = np.where(top >= -1022, normal, sub)
    bits = np.where(top > 1023, np.int64(0x7FF) << 52, bits)
    bits = np.where(q == 0, 0, bits)
    bits = bits | (negative.astype(np.int64) << 63)
    return bits.view(np.float64)


#: limb split of :func:`twiddle_product`: ``x = x1 2**32 + x0``, ``t = t1 2**27 + t0``
_X_SPLIT = 32
_T_SPLIT = 27


def twiddle_product(
    xr: np.ndarray, xi: np.ndarray, tr: np.ndarray, ti: np.ndarray, bits: int
) -> tuple[np.ndarray, np.ndarray]:
    """``floor(x t / 2**(bits+1) + 1/2)`` per part of the exact complex product ``x t``
    (``re = xr tr - xi ti``, ``im = xr ti + xi tr``), int64, elementwise (broadcasting).

    Exact for ``|x| <= 2**62`` and ``|t| <= 2**55`` whenever the result fits int64 (the
    four-step: ``|x| <= 2**T``, ``|t| <= 2**S``, so ``|x'| <= 2**T / sqrt 2 + 1``):
    ``x = x1 2**32 + x0``, ``t = t1 2**27 + t0`` (``x0, t0`` unsigned), so the four partial
    products of each part (weights ``2**0, 2**27, 2**32, 2**59``) are below ``2**61``; they
    are absorbed from the lowest weight up, each step an exact floor shift.
    """
    xr, xi, tr, ti = (np.asarray(a, np.int64) for a in (xr, xi, tr, ti))
    xmask = np.int64((1 << _X_SPLIT) - 1)
    tmask = np.int64((1 << _T_SPLIT) - 1)
    xr0, xr1 = xr & xmask, xr >> _X_SPLIT
    xi0, xi1 = xi & xmask, xi >> _X_SPLIT
    tr0, tr1 = tr & tmask, tr >> _T_SPLIT
    ti0, ti1 = ti & tmask, ti >> _T_SPLIT
    real = (
        xr0 * tr0 - xi0 * ti0,
        xr0 * tr1 - xi0 * ti1,
        xr1 * tr0 - xi1 * ti0,
        xr1 * tr1 - xi1 * ti1,
    )
    imag = (
        xr0 * ti0 + xi0 * tr0,
        xr0 * ti1 + xi0 * tr1,
        xr1 * ti0 + xi1 * tr0,
        xr1 * ti1 + xi1 * tr1,
    )
    weights = (0, _T_SPLIT, _X_SPLIT, _X_SPLIT + _T_SPLIT)
    return round_shift_sum(real, weights, bits + 1), round_shift_sum(imag, weights, bits + 1)


def round_shift_sum(terms, weights, h: int) -> np.ndarray:
    """``floor((sum_i terms[i] 2**weights[i] + 2**(h-1)) / 2**h)`` exactly, int64
    (``weights`` ascending from 0, ``h >= 1``; the terms, ``terms[0] + 2**(h-1)`` and the
    result within int64): the terms are absorbed from the lowest weight up; a right shift
    only drops non-negative low bits below the next weight, so each floor is exact, and
    terms above ``2**h`` are added in wrapping arithmetic, exact because the result fits."""
    acc = terms[0] + (np.int64(1) << (h - 1))
    cur = 0
    for w, term in zip(weights[1:], terms[1:], strict=True):
        if w <= h:
            acc = (acc >> (w - cur)) + term
            cur = w
        else:
            if cur < h:
                acc = acc >> (h - cur)
                cur = h
            # wraps mod 2**64 only where the result would not fit
            acc = acc + np.left_shift(term, w - h)
    if cur < h:
        acc = acc >> (h - cur)
    return acc
