"""Residue systems of Phase A (ozfft/ozaki/residue_system.py) against Python integers:
the INT8 system is today's moduli table; FP8 residues split into e4m3-exact digits and
their digit products give the product's residue back."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ozfft.ozaki.moduli import INT8_MODULI, MAX_MODULI, MIN_MODULI, crt_constants
from ozfft.ozaki.residue_system import (
    FP8_BASES,
    FP8_DIGIT_MAX,
    ResidueSystem,
    fp8_system,
    int8_system,
)


def _symmetric(x: int, m: int) -> int:
    r = x % m
    return r - m if r > m // 2 else r


@pytest.mark.parametrize("count", range(MIN_MODULI, MAX_MODULI + 1))
def test_int8_system_is_the_moduli_table(count):
    system = int8_system(count)
    assert system.moduli == INT8_MODULI[:count] and system.bases == INT8_MODULI[:count]
    assert (system.product, system.weights) == crt_constants(INT8_MODULI[:count])
    assert system.phase_a == "int8" and not system.gaussian and system.limb_bits == 24
    assert system.count * 256 * system.product < 2 ** (24 * system.num_limbs - 1)
    assert system.total_products == count and system.max_k() == 131071  # 2**31 / 128**2


def test_fp8_bases_are_pairwise_coprime_and_digits_fit_e4m3():
    assert all(math.gcd(a, b) == 1 for i, a in enumerate(FP8_BASES) for b in FP8_BASES[:i])
    system = fp8_system(140)  # every base a cube
    assert set(system.digits) == {3}
    for i, m in enumerate(system.moduli):
        s, d = system.bases[i], system.digits[i]
        for r in range(-(m // 2), (m - 1) // 2 + 1):  # every symmetric residue
            digits = system.split(i, r)
            assert len(digits) == d and max(map(abs, digits)) <= FP8_DIGIT_MAX
            assert sum(c * s**j for j, c in enumerate(digits)) == r


def test_digit_products_give_the_products_residue():
    """Residues of A @ B modulo each FP8 modulus from the digit-plane products P_t (the
    sums a tensor core would form), against the exact integer product; every P_t within
    the accumulator's exact range."""
    rng = np.random.default_rng(11)
    system = fp8_system(120)  # squares and cubes
    assert {2, 3} <= set(system.digits)
    a = [[int(v) for v in row] for row in rng.integers(-(2**40), 2**40, (3, 40))]
    b = [[int(v) for v in row] for row in rng.integers(-(2**40), 2**40, (40, 2))]
    exact = [[sum(a[i][k] * b[k][j] for k in range(40)) for j in range(2)] for i in range(3)]
    for i, m in enumerate(system.moduli):
        d = system.digits[i]
        da = [[system.split(i, _symmetric(v, m)) for v in row] for row in a]
        db = [[system.split(i, _symmetric(v, m)) for v in row] for row in b]
        for r in range(3):
            for c in range(2):
                partial = [
                    sum(
                        da[r][k][x] * db[k][c][y]
                        for x, y in ResidueSystem.pairs(d, t)
                        for k in range(40)
                    )
                    for t in range(d)
                ]
                assert all(abs(p) <= 256 * (t + 1) * 40 for t, p in enumerate(partial))
                assert system.combine(i, partial) == exact[r][c] % m
    # the CRT: residues of x give x back for |x| < P / 2
    for x in (exact[0][0] % system.product - system.product // 2, -12345, 10**30):
        residues = [x % m for m in system.moduli]
        back = sum(w * u for w, u in zip(system.weights, residues, strict=True)) % system.product
        assert (back - system.product if back > system.product // 2 else back) == x


def test_fp8_system_choice_by_bits():
    """Fewest digit products for a CRT range: squares first, then cubes (the numbers of
    docs/numerics.md)."""
    small = fp8_system(60)
    assert set(small.digits) == {2} and small.log2_product >= 60
    assert math.log2(math.prod(b * b for b in small.bases[:-1])) < 60  # one fewer falls short
    squares = fp8_system(94)
    assert squares.total_products == 33 and round(squares.log2_product, 1) == 94.1
    mixed = fp8_system(110)
    assert mixed.total_products == 45 and round(mixed.log2_product, 1) == 113.6
    assert mixed.digits[:4] == (3, 3, 3, 3) and set(mixed.digits[4:]) == {2}
    assert fp8_system(120).total_products == 51
    assert fp8_system(110).max_k() == (2**24 - 1) // (256 * 3)
    with pytest.raises(ValueError, match=r"reach at most 141\.1 bits"):
        fp8_system(150)


def test_bad_systems_are_refused():
    with pytest.raises(ValueError, match="shares a factor"):
        ResidueSystem("fp8", (32, 16), (2, 2), FP8_DIGIT_MAX, 24)
    with pytest.raises(ValueError, match="does not fit 2 digits"):
        ResidueSystem("fp8", (40,), (2,), FP8_DIGIT_MAX, 24).split(0, 799)
    with pytest.raises(ValueError, match="moduli must be between"):
        int8_system(1)
