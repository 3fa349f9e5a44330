"""The moduli table and CRT constants, checked with Python integers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ozfft.ozaki.moduli import INT8_MODULI, MAX_MODULI, int_to_limbs, limbs_to_int
from ozfft.ozaki.residue_system import int8_system
from ozfft.ozaki.scaling import ceil_log2


def test_table_is_pairwise_coprime_and_int8():
    for i, p in enumerate(INT8_MODULI):
        assert 2 <= p <= 256
        assert all(math.gcd(p, q) == 1 for q in INT8_MODULI[:i])


@pytest.mark.parametrize("count", [2, 8, 14, 16, 20])
def test_crt_weights_are_idempotents(count):
    s = int8_system(count)
    assert s.product == math.prod(INT8_MODULI[:count])
    for i, w in enumerate(s.weights):
        assert 0 < w < s.product
        for j, p in enumerate(s.moduli):
            assert w % p == (1 if i == j else 0)


def test_log2_product_matches_numerics_table():
    # from docs/numerics.md's table: N=16 -> 125.4 bits, N=8 -> 63.6; and, ~7.6 bits a
    # modulus, N=14 -> 110.2, 18 -> 140.5, 20 -> 155.4
    for count, bits in [(8, 63.6), (14, 110.2), (16, 125.4), (18, 140.5), (20, 155.4)]:
        assert round(int8_system(count).log2_product, 1) == bits


def test_limbs_hold_the_kulisch_sum():
    for count in range(2, MAX_MODULI + 1):
        s = int8_system(count)
        assert s.count * 256 * s.product < 2 ** (s.limb_bits * s.num_limbs - 1)
        assert limbs_to_int(s.weight_limbs()[:, -1], s.limb_bits) == s.weights[-1]
        assert limbs_to_int(s.product_limbs(), s.limb_bits) == s.product


def test_limb_round_trip_and_errors():
    assert int_to_limbs(2**48 + 5, 24, 3) == [5, 0, 1]
    with pytest.raises(ValueError, match="does not fit"):
        int_to_limbs(2**72, 24, 3)


@pytest.mark.parametrize("count", [1, 21, 0])
def test_moduli_count_out_of_range(count):
    with pytest.raises(ValueError, match="between 2 and 20"):
        int8_system(count)


def test_ceil_log2_exact(rng):
    values = [1, 2, 3, 4, 5, 2**52, 2**52 + 1, 2**53 - 1, 2**53, 2**53 + 1, 2**62 - 1]
    values += [int(v) for v in rng.integers(1, 2**62, 200)]
    got = ceil_log2(np, np.array(values, dtype=np.int64))
    want = [(v - 1).bit_length() for v in values]
    assert got.tolist() == want


@pytest.mark.parametrize("count", range(2, len(INT8_MODULI) + 1))
def test_int8_budget_is_floor_log2_p(count):
    """The shared budget rule (the largest L with 2**L < P) is floor(log2 P) for every INT8
    table: P is never a power of two there, so the scaling's shifts are those of before."""
    p = math.prod(INT8_MODULI[:count])
    assert int8_system(count).budget_bits == p.bit_length() - 1
    assert 2 ** int8_system(count).budget_bits < p < 2 ** (int8_system(count).budget_bits + 1)
