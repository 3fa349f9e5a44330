"""Error bounds of the emulated product and the choice of the moduli count.

With shifts ``sigma_i`` (rows of A) and ``tau_j`` (columns of B) the scaled integers
``a'`` (:func:`~ozfft.ozaki.scaling.scaled_integers`) satisfy
``|a - a'/2**sigma| < 2**-sigma``; truncated ones ``|a'| <= |2**sigma a|``, rounded ones
(``"nearest"``, from ``|2**sigma a| >= 64``) ``|a'| <= (1 + 2**-7) |2**sigma a|``. So the
exact integer product ``A'B'`` (recovered exactly by the CRT) differs from ``AB`` by

    |C_ij - 2**-(sigma_i+tau_j) (A'B')_ij| < 2**-sigma_i ||b_j||_1 + 2**-tau_j ||a'_i||_1
                                           <= (2**-sigma_i ||b_j||_1 + 2**-tau_j ||a_i||_1)
                                              (1 + 2**-7)

(``a'_i`` here at the scale of ``a``; complex: the same with ``|re| + |im|`` in the
1-norms, for each of Re and Im); the single final rounding adds at most ``u |result|``
(``u = 2**-53`` or ``2**-24``). :func:`truncation_bound` evaluates the first term;
docs/numerics.md derives it.

In fast mode ``||2**sigma a||_2 ~ 2**((L-1)/2)``, so the relative truncation error per
row is about ``sqrt(k) 2**-((L-1)/2)`` against ``||a||_2 ||b||_2`` — the same sqrt(k)
growth as a float dot product's typical ``sqrt(k) u``.  Matching FP64 therefore needs
``(L-1)/2 >= 53 + 2`` bits of headroom (``L >= 111``, N >= 15), plus about one bit per
unit of the exponent spread ``phi``; the defaults below were chosen on the papers'
test matrices (phi <= 1, k = 1 .. 2**17+1) so that the max relative error is never
worse than numpy's float64 (resp. float32) matmul; tests/test_accuracy.py checks it.

The accuracy guarantee (docs/numerics.md, "The accuracy guarantee of matmul").  Without
``moduli=``, ``ozfft.matmul`` promises ``|C_ij - Ĉ_ij| <= k u (|A||B|)_ij`` (plus the
underflow term of the final rounding) with ``u = max(2**-p, u_out)``, ``p`` =
:data:`PRECISION_BITS`.  The rules below turn that promise into integer conditions:
:func:`truncation_budget` gives the exponent ``r`` of the truncation budget
``rho = 2**-r`` left after the roundings; each operand gets ``rho / 2``. A row of A
meets its half when every entry is represented to relative precision ``rho / 4``, which
leaves room for the other operand's rounded entries (:func:`element_deficit`), or when
``2**-sigma_i ||b_j||_1 <= (rho/2) LB_ij`` for an exact integer lower bound ``LB`` of
``(|A||B|)_ij`` (:func:`pairing_offset`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .scaling import NEAREST_MIN, ceil_log2_int

__all__ = [
    "DEFAULT_FFT_MODULI",
    "DEFAULT_MODULI",
    "INDEX_HASH_MIX",
    "INDEX_HASH_MULT",
    "MAX_PRODUCTS",
    "NO_BUDGET",
    "PRECISIONS",
    "PRECISION_BITS",
    "default_fft_moduli",
    "default_moduli",
    "element_deficit",
    "floor_log2_fraction",
    "index_hash_weights",
    "lower_bound_bits",
    "pairing_offset",
    "rounding_error_bound",
    "truncation_bound",
    "truncation_budget",
    "truncation_slack",
]

#: target precisions every entry point accepts
PRECISIONS = ("fp64", "fp32")

#: default moduli count per (precision, mode); see the module docstring.
DEFAULT_MODULI: dict[tuple[str, str], int] = {
    ("fp64", "fast"): 16,
    ("fp64", "accurate"): 16,
    ("fp32", "fast"): 8,
    ("fp32", "accurate"): 8,
}


#: moduli of the Ozaki-II FFT stage path per precision: stage bits s and data bits t with
#: s + t + log2(r) + 3 <= L (docs/numerics.md, "FFT")
DEFAULT_FFT_MODULI: dict[str, int] = {"fp64": 16, "fp32": 8}


def default_fft_moduli(precision: str) -> int:
    """The Ozaki-II FFT stage path's default moduli count for ``precision``."""
    return DEFAULT_FFT_MODULI[precision]


def default_moduli(precision: str, mode: str) -> int:
    """The documented default moduli count for ``precision`` and ``mode``."""
    return DEFAULT_MODULI[(precision, mode)]


def truncation_bound(abs_a_rowsum, abs_b_colsum, shift_a, shift_b, xp):
    """Elementwise bound ``(2**-sigma_i ||b_j||_1 + 2**-tau_j ||a_i||_1) (1 + 2**-7)``
    (float64), for either rounding of the scaled integers.

    ``abs_a_rowsum``: ``(..., m)`` 1-norms of the rows of A; ``abs_b_colsum``:
    ``(..., n)`` 1-norms of the columns of B; shifts as returned by the scaling.
    Evaluated in float64 and rounded up by a relative 2**-50 for safety.
    """
    term_b = xp.ldexp(abs_b_colsum[..., None, :], -shift_a[..., :, None])
    term_a = xp.ldexp(abs_a_rowsum[..., :, None], -shift_b[..., None, :])
    return (term_a + term_b) * ((1 + 2.0**-7) * (1 + 2.0**-50))


# -- the accuracy guarantee (docs/numerics.md, "The accuracy guarantee of matmul") ------

#: ``p`` of each precision's unit roundoff ``u = 2**-p``
PRECISION_BITS: dict[str, int] = {"fp64": 53, "fp32": 24}

#: most exact products one call may run (hi/lo parts of both operands); a call that
#: would need more is computed by the native routine
MAX_PRODUCTS = 4

#: "no truncation budget": the truncated operands must be exact
NO_BUDGET = None

_FLOAT64_BITS = 53
#: ``sigma + e`` from which an entry is rounded to nearest (``|2**sigma a| >= 2**6``:
#: :data:`ozfft.ozaki.scaling.NEAREST_MIN`)
NEAREST_BITS = NEAREST_MIN.bit_length()


def floor_log2_fraction(value: Fraction) -> int:
    """Exact ``floor(log2 value)`` of a positive rational."""
    if value <= 0:
        raise ValueError("floor_log2_fraction needs a positive value")
    e = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** e > value:
        e -= 1
    return e


def rounding_error_bound(products: int, out_bits: int) -> Fraction:
    """``F``: every rounding after the exact integer products, relative to what they
    act on.

    One product rounded once to a float64 or float32 output: ``F = u_out``, acting on at
    most ``(1 + rho) (|A||B|)_ij`` (its scaled integers are rounded to nearest, so the
    exact product's magnitude is at most ``(|A||B|)_ij`` plus its truncation error:
    :func:`truncation_slack`). ``S >= 2`` products (split operands) are each rounded to
    float64, added with error-free TwoSum steps whose errors are summed apart, and the
    two sums added once: their magnitudes add up to at most ``(|A||B|)_ij`` (hi and lo
    parts share the entry's sign: split products truncate), so the product roundings cost
    ``u64``, the final addition ``u64`` and the error sum's own roundings less than
    ``3 S**2 u64**2``. A narrower output adds its rounding of that float64 value; a
    float16 output is always rounded from float64 (``S = 1`` included).
    """
    u_out = Fraction(1, 2**out_bits)
    if products == 1 and out_bits in (53, 24):
        return u_out
    u64 = Fraction(1, 2**_FLOAT64_BITS)
    f = u64 if products == 1 else 2 * u64 + 3 * products**2 * u64**2
    return f if out_bits == _FLOAT64_BITS else f + u_out * (1 + f)


def truncation_slack(k: int, precision: str, out_bits: int, products: int) -> Fraction:
    """What the promise ``k u (|A||B|)_ij`` leaves for truncation, with
    ``u = max(2**-PRECISION_BITS[precision], 2**-out_bits)`` and ``F`` the
    :func:`rounding_error_bound`: ``k u - F`` for split products; ``(k u - F) / (1 + F)``
    for one product, whose rounding acts on up to ``(1 + rho) (|A||B|)_ij``
    (``rho + F (1 + rho) <= k u``). Negative: no plan with that many products can keep
    the promise; zero: the scaled operands must be exact."""
    u = max(Fraction(1, 2 ** PRECISION_BITS[precision]), Fraction(1, 2**out_bits))
    f = rounding_error_bound(products, out_bits)
    slack = k * u - f
    return slack / (1 + f) if products == 1 else slack


@lru_cache(maxsize=256)  # exact rational arithmetic, ~25 µs a call; asked on every matmul
def truncation_budget(k: int, precision: str, out_bits: int, products: int) -> int | None:
    """Exponent ``r`` of the truncation budget ``rho = 2**-r <= k u - F``
    (:func:`truncation_slack`), or :data:`NO_BUDGET` when there is none (slack <= 0:
    the truncated operands must be exact, and for a negative slack even that is not
    enough — callers check :func:`truncation_slack` first)."""
    slack = truncation_slack(k, precision, out_bits, products)
    if slack <= 0:
        return NO_BUDGET
    return -floor_log2_fraction(slack)


def element_deficit(xp, q_min, exact_bits: int, r: int | None):
    """Bits a row's shift lacks so that every entry meets relative precision
    ``rho / 2 = 2**-(r+1)`` with room for the other operand's rounding, or is exact.

    ``q_min = sigma + e_min`` (``e_min`` the smallest frexp exponent of the row's nonzero
    entries, each part of a complex entry counted). An entry ``f 2**e`` scaled by
    ``2**sigma`` is exact when ``sigma + e >= exact_bits`` (its significand bits);
    otherwise, with ``sigma + e >= 7`` it is rounded to nearest (``|2**sigma a| >= 64``)
    with relative error at most ``2**(-sigma - e)``, so ``q_min >= max(r + 2, 7)`` gives
    ``2**-(r+2)``, which stays within ``rho / 2`` after the factor ``1 + 2**-7`` of the
    other operand's rounded entries. Returns ``max(0, threshold - q_min)`` (int64).
    """
    threshold = exact_bits if r is None else min(exact_bits, max(r + 2, NEAREST_BITS))
    return xp.maximum(threshold - q_min, 0)


def pairing_offset(r: int, lower_bound_bits: int) -> int:
    """``r + 1 + 2 g``: the pairing condition of a row of A reads

        floor_log2(G_ij) >= (r + 1 + 2 g - q_i) + (nb_j - E_j)

    for ``2**-sigma_i 2**nb_j <= 2**-(r+1) 2**(E_i + E_j - 2g) G_ij``, where
    ``q_i = sigma_i + E_i``, ``||b_j||_1 <= 2**nb_j`` and ``2**(E_i+E_j-2g) G_ij`` is the
    exact integer lower bound of ``(|A||B|)_ij`` built from ``g``-bit magnitudes.
    """
    return r + 1 + 2 * lower_bound_bits


#: odd 64-bit constants of the inner-index hash (golden ratio, splitmix64)
INDEX_HASH_MULT = 0x9E3779B97F4A7C15
INDEX_HASH_MIX = 0xBF58476D1CE4E5B9


def index_hash_weights(xp, rows: int, salt: int):
    """The odd 64-bit row weights of the inner-index hash that picks the lower-bound
    products' sample of ``k`` (``ozfft.scheme.gemm``, ``_subset``; the engines'
    ``column_hash``): ``w_r = ((v ^ (v >> 31)) MIX) | 1`` with ``v = (r + 2 salt + 1)
    MULT``, all modulo 2**64 (uint64 array of ``rows``)."""
    v = (xp.arange(rows, dtype=xp.uint64) + xp.uint64(2 * salt + 1)) * xp.uint64(INDEX_HASH_MULT)
    return (v ^ (v >> xp.uint64(31))) * xp.uint64(INDEX_HASH_MIX) | xp.uint64(1)


def lower_bound_bits(terms: int) -> int:
    """``g``: bits of the magnitudes of the lower-bound product so that a float64 GEMM
    of ``terms`` products of ``g``-bit integers is exact (``terms 2**(2g) <= 2**53``)."""
    return (_FLOAT64_BITS - ceil_log2_int(terms)) // 2
