"""Error bounds of the emulated product and the choice of the moduli count.

With shifts ``sigma_i`` (rows of A) and ``tau_j`` (columns of B) the truncated
operands satisfy ``|a - a'/2**sigma| < 2**-sigma`` and ``|a'| <= |2**sigma a|``, so the
exact integer product ``A'B'`` (recovered exactly by the CRT) differs from ``AB`` by

    |C_ij - 2**-(sigma_i+tau_j) (A'B')_ij| < 2**-sigma_i ||b_j||_1 + 2**-tau_j ||a_i||_1

(complex: the same with ``|re| + |im|`` in the 1-norms, for each of Re and Im); the
single final rounding adds at most ``u |result|`` (``u = 2**-53`` or ``2**-24``).
:func:`truncation_bound` evaluates the first term; docs/numerics.md derives it.

In fast mode ``||2**sigma a||_2 ~ 2**((L-1)/2)``, so the relative truncation error per
row is about ``sqrt(k) 2**-((L-1)/2)`` against ``||a||_2 ||b||_2`` — the same sqrt(k)
growth as a float dot product's typical ``sqrt(k) u``.  Matching FP64 therefore needs
``(L-1)/2 >= 53 + 2`` bits of headroom (``L >= 111``, N >= 15), plus about one bit per
unit of the exponent spread ``phi``; the defaults below were chosen on the papers'
test matrices (phi <= 1, k = 1 .. 2**17+1) so that the max relative error is never
worse than numpy's float64 (resp. float32) matmul; tests/test_accuracy.py checks it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_FFT_MODULI",
    "DEFAULT_MODULI",
    "PRECISIONS",
    "default_fft_moduli",
    "default_moduli",
    "truncation_bound",
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
    """Elementwise bound ``2**-sigma_i ||b_j||_1 + 2**-tau_j ||a_i||_1`` (float64).

    ``abs_a_rowsum``: ``(..., m)`` 1-norms of the rows of A; ``abs_b_colsum``:
    ``(..., n)`` 1-norms of the columns of B; shifts as returned by the scaling.
    Evaluated in float64 and rounded up by a relative 2**-50 for safety.
    """
    term_b = xp.ldexp(abs_b_colsum[..., None, :], -shift_a[..., :, None])
    term_a = xp.ldexp(abs_a_rowsum[..., :, None], -shift_b[..., None, :])
    return (term_a + term_b) * (1 + 2.0**-50)
