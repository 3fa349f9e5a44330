"""Phase B: exact Kulisch reconstruction and a single correct rounding.

The reference is the integer itself (Python big ints) rounded by an independent
IEEE-754 implementation (tests/helpers.py).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from ozfft.engines.numpy.phase_b import FLOAT32, FLOAT64, kulisch_reconstruct
from ozfft.ozaki.residue_system import int8_system

from .helpers import round_f32, round_f64


def _residues(values, moduli):
    return np.array([[v % p for v in values] for p in moduli.moduli], dtype=np.uint8)


def _edge_values(half: int, rng) -> list[int]:
    """Integers in (-P/2, P/2): extremes, near-ties of the quotient, rounding ties."""
    vals = [0, 1, -1, half - 1, -(half - 1), half - 2, -(half - 2), 2**53, 2**53 + 1]
    vals += [2**54 + 2, 2**54 + 6, -(2**54 + 2), (2**53 - 1) * 2**20 + 2**19]  # exact ties
    vals += [(2**53 + 1) * 2**30 + 2**29, 2**24 + 1, 2**25 + 3]
    for bits in (20, 50, 53, 54, 60, 64, 100):
        if bits < half.bit_length() - 1:
            vals += [
                int(v) * s for v, s in zip(rng.integers(1, 2**62, 6), (1, -1) * 3, strict=False)
            ]
            vals += [(1 << bits) - 1, -(1 << bits) + 1, (1 << bits) + 1]
    big = [int.from_bytes(rng.bytes(24), "little") % half for _ in range(300)]
    vals += [v if i % 2 else -v for i, v in enumerate(big)]
    return [v for v in vals if abs(v) < half]


@pytest.mark.parametrize("count", [2, 5, 8, 14, 16, 20])
def test_reconstruct_matches_big_integers(count, rng):
    moduli = int8_system(count)
    half = moduli.product // 2 + 1  # |x| < P/2 (P is even)
    values = _edge_values(moduli.product // 2, rng)
    shifts = rng.integers(-200, 60, len(values))
    u = _residues(values, moduli)
    got = kulisch_reconstruct(u, shifts.astype(np.int64), moduli, FLOAT64)
    want = [
        round_f64(Fraction(v) * Fraction(2) ** int(s)) for v, s in zip(values, shifts, strict=False)
    ]
    assert half > max(abs(v) for v in values)
    np.testing.assert_array_equal(got, np.array(want))


@pytest.mark.parametrize(
    "fmt, rounder, lo, hi",
    [
        (FLOAT64, round_f64, -1250, 1100),
        (FLOAT32, round_f32, -330, 200),
    ],
)
def test_subnormal_and_overflow_rounding(fmt, rounder, lo, hi, rng):
    moduli = int8_system(16)
    values = _edge_values(moduli.product // 2, rng)[:120]
    shifts = rng.integers(lo, hi, len(values))
    u = _residues(values, moduli)
    with np.errstate(over="ignore"):
        got = kulisch_reconstruct(u, shifts.astype(np.int64), moduli, fmt)
    want = [
        rounder(Fraction(v) * Fraction(2) ** int(s)) for v, s in zip(values, shifts, strict=False)
    ]
    np.testing.assert_array_equal(got, np.array(want))
    assert np.isinf(got).any() and (np.abs(got[got != 0]) < 2.0**fmt.emin).any()


def test_quotient_near_ties_are_corrected():
    """x near +-P/2 makes round(X/P) ambiguous in floating point; the limbs decide."""
    moduli = int8_system(20)
    half = moduli.product // 2
    values = [half - d for d in range(1, 40)] + [-(half - d) for d in range(1, 40)]
    u = _residues(values, moduli)
    got = kulisch_reconstruct(u, np.zeros(len(values), np.int64), moduli, FLOAT64)
    np.testing.assert_array_equal(got, [round_f64(Fraction(v)) for v in values])
