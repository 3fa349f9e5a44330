"""Power-of-two scaling rules, decided by exact integer arithmetic.

Row ``i`` of ``A`` (and, by transposition, column ``j`` of ``B``) is scaled by
``2**sigma_i`` and made an integer: ``a'_ih = trunc(2**sigma_i * a_ih)``, or rounded to
nearest (:func:`scaled_integers`, below). The shifts must guarantee the CRT uniqueness
bound ``2 * sum_h |a'_ih| |b'_hj| < P``.

All decisions are made from *integer* statistics of the rows (frexp exponents and
integer upper bounds on mantissas), summed in integers, so they do not depend on
summation order: every engine computes bit-identical shifts.

Fast mode (Cauchy–Schwarz).  With ``a = f 2**e`` (``1/2 <= |f| < 1``),
``c = ceil(128 |f|)`` and ``E = max_h e_h`` (the row's exponent):
``a_h**2 <= c_h**2 2**(2 e_h - 14)``, so with the fixed-point integer
``S = sum_h ceil(c_h**2 2**(2 (e_h - E) + F))`` we have
``||a||_2**2 <= S 2**(2E - 14 - F)``. Choosing
``sigma = floor((L - 1 + 14 + F - 2E - ceil_log2 S) / 2)`` gives
``||a'||_2**2 <= 2**(L-1)``; the same for ``b`` gives
``2 sum|a'||b'| <= 2 ||a'|| ||b'|| <= 2**L < P`` (``L = floor(log2 P)``).

Accurate mode (an extra small integer GEMM; the accurate mode of Ozaki, Uchino, Imamura,
"Ozaki Scheme II: A GEMM-oriented emulation of floating-point matrix multiplication
using an integer modular technique").  With
``abar_h = ceil(2**(g - E) |a_h|) <= 2**g`` (``g = 6`` real; complex uses ``g = 5``
per part and sums the parts), ``sum_h |a_ih||b_hj| <= 2**(E_i - g) 2**(E_j - g) Cbar_ij``
with ``Cbar = Abar Bbar`` exact. For ``r_i = max_j Cbar_ij`` and ``c_j = max_i Cbar_ij``,
``alpha_i = floor((L - 1 - ceil_log2 r_i) / 2)`` and ``sigma_i = alpha_i - E_i + g`` give
``2 * 2**(alpha_i + beta_j) Cbar_ij <= 2**L < P`` because ``Cbar_ij <= sqrt(r_i c_j)``.

Complex operands use the complex 2-norm (fast) or ``|re| + |im|`` (accurate); the
same shifts bound both ``Re`` and ``Im`` of the product.

Rounding the scaled entries (:func:`scaled_integers`).  ``"trunc"`` gives
``|a'| <= |2**sigma a|``, which the accuracy guarantee's proofs use. ``"nearest"`` (the
explicit ``moduli=`` path) rounds every scaled entry of magnitude at least
:data:`NEAREST_MIN` ``= 2**6`` to the nearest integer (ties to even) and truncates the
smaller ones: the error per entry halves (``<= 1/2`` instead of ``< 1``) where it matters.
Both rules above stay proved: an entry with ``|2**sigma a| >= 2**6`` has
``e + sigma >= 7``, so its bound ``c 2**(e + sigma - 7)`` (fast) is an integer at least
``|2**sigma a|`` and rounding to nearest cannot pass it; in accurate mode such an entry
forces ``alpha + g >= 6`` (``|2**sigma a| <= 2**(alpha + g)``), so ``2**alpha abar`` is an
integer bound too (``g <= 6``).
"""

from __future__ import annotations

__all__ = [
    "BOUND_MANTISSA_BITS",
    "FRACTION_BITS",
    "MIN_TERM_SHIFT",
    "NEAREST_MIN",
    "ROUNDINGS",
    "ZERO_ROW_EXP",
    "accurate_bound_bits",
    "accurate_shift",
    "ceil_log2",
    "ceil_log2_int",
    "fast_shift",
    "fast_shift_squared",
    "norm1_exponent_bound",
    "norm1_exponent_fast",
    "scaled_integers",
]

#: ``c = ceil(|f| * 2**BOUND_MANTISSA_BITS)`` bounds each mantissa from above.
BOUND_MANTISSA_BITS = 7
#: fraction bits of the fixed-point sum of squares (each term rounds *up*).
FRACTION_BITS = 16
#: smallest shift applied to a squared mantissa bound: smaller terms count as ``2**MIN_TERM_SHIFT``
#: (rounded up), so both engines' fixed-point sums of squares stay in int64
MIN_TERM_SHIFT = -62
#: sentinel exponent of an all-zero row (its shift is irrelevant; we use 0).
ZERO_ROW_EXP = -(1 << 20)
#: how the scaled entries become integers: ``"trunc"`` (``|a'| <= |2**sigma a|``: the
#: accuracy guarantee) or ``"nearest"`` (``moduli=``; see the module docstring)
ROUNDINGS = ("trunc", "nearest")
#: ``"nearest"`` rounds scaled entries of at least this magnitude, ``2**(c bits - 1)``,
#: and truncates smaller ones (whose integer mantissa bound may be a fraction)
NEAREST_MIN = 1 << (BOUND_MANTISSA_BITS - 1)


def scaled_integers(xp, x, shift, rounding: str):
    """``a' = trunc(2**shift x)``, or for ``rounding="nearest"`` ``rint(2**shift x)``
    where ``|2**shift x| >= NEAREST_MIN`` (float64 integers; ``shift`` broadcasts
    against ``x``, an int array). The scaling rules keep ``|2**shift x| < 2**79``, so the
    power of two is exact wherever ``a'`` is nonzero."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding is one of {ROUNDINGS}, not {rounding!r}")
    y = xp.ldexp(x, shift)
    t = xp.trunc(y)
    if rounding == "trunc":
        return t
    return xp.where(xp.abs(y) >= NEAREST_MIN, xp.rint(y), t)


def accurate_bound_bits(is_complex: bool) -> int:
    """``g``: bits of the accurate-mode bound operand (entries <= 2**g <= 64, INT8-safe)."""
    return 5 if is_complex else 6


def ceil_log2(xp, v):
    """Exact ``ceil(log2 v)`` of a positive int64 array (0 for v <= 1)."""
    v = xp.maximum(v, 1) - 1  # ceil_log2(v) = bit_length(v - 1)
    _, e = xp.frexp(v.astype(xp.float64))
    e = e.astype(xp.int64)
    # float64(v) may round up to the next power of two: correct exactly.
    too_big = (e > 0) & ((v >> xp.maximum(e - 1, 0)) == 0)
    return e - too_big.astype(xp.int64)


def fast_shift(xp, max_exp, sumsq, budget_bits: int):
    """Fast-mode row shifts ``sigma`` from the row exponent and fixed-point sum of squares
    (each operand gets ``||2**sigma a||_2**2 <= 2**(L-1)``)."""
    return fast_shift_squared(xp, max_exp, sumsq, budget_bits - 1)


def fast_shift_squared(xp, max_exp, sumsq, squared_budget: int):
    """Largest shifts with ``||2**sigma a||_2**2 <= 2**squared_budget`` (exact integers).

    Used directly when the other operand is a fixed integer matrix whose squared row
    norms are known (the FFT's stage matrices): the data then gets the rest of
    ``2 (L - 1)``.
    """
    num = (
        (squared_budget + 2 * BOUND_MANTISSA_BITS + FRACTION_BITS)
        - 2 * max_exp.astype(xp.int64)
        - ceil_log2(xp, sumsq)
    )
    shift = num // 2  # floor division: floor for negatives too
    return xp.where(sumsq > 0, shift, 0).astype(xp.int64)


def accurate_shift(xp, max_exp, bound_max, budget_bits: int, bound_bits: int):
    """Accurate-mode shifts from the row exponent and the row max of ``Cbar``."""
    alpha = (budget_bits - 1 - ceil_log2(xp, bound_max.astype(xp.int64))) // 2
    shift = alpha - max_exp.astype(xp.int64) + bound_bits
    return xp.where(bound_max > 0, shift, 0).astype(xp.int64)


# -- 1-norm bounds for the accuracy guarantee (ozfft/ozaki/bounds.py) ------------------


def ceil_log2_int(v: int) -> int:
    """``ceil(log2(v))`` of a Python integer (0 for ``v <= 1``): the bits of a count of
    terms, as the 1-norm and pairing rules take it."""
    return max(int(v) - 1, 0).bit_length()


def norm1_exponent_fast(xp, max_exp, sumsq, terms: int):
    """``nb`` with ``||a||_1 <= 2**nb`` from the fast-mode statistics (exact integers).

    ``||a||_2**2 <= S 2**(2E - 30)`` and Cauchy–Schwarz over ``terms`` values (``k``, or
    ``2k`` parts of a complex row, whose 1-norm sums ``|re| + |im|``) give
    ``||a||_1 <= 2**(ceil((ceil_log2(terms) + ceil_log2 S) / 2) + E - 15)``.
    """
    half_bits = (2 * BOUND_MANTISSA_BITS + FRACTION_BITS) // 2
    total = ceil_log2_int(terms) + ceil_log2(xp, sumsq.astype(xp.int64))
    return -((-total) // 2) + max_exp.astype(xp.int64) - half_bits


def norm1_exponent_bound(xp, max_exp, bound_rowsum, bound_bits: int):
    """``nb`` with ``||a||_1 <= 2**nb`` from the accurate-mode bound operand: its row
    sums ``R = sum_h Abar_h`` (``Abar_h >= 2**(g-E)|a_h|``, complex parts summed) give
    ``||a||_1 <= 2**(E - g) R``."""
    return max_exp.astype(xp.int64) - bound_bits + ceil_log2(xp, bound_rowsum.astype(xp.int64))
