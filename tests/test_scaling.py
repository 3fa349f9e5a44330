"""Stage 1-2 properties checked with Python integers: the CRT uniqueness bound and
exact residues, for both modes, real and complex, across exponent spreads."""

from __future__ import annotations

import numpy as np
import pytest

from ozfft.engines import NumpyEngine
from ozfft.ozaki.moduli import moduli_set
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import compute_shifts

ENGINE = NumpyEngine()


def _scaled_ints(x: np.ndarray, shift: np.ndarray) -> list[list[int]]:
    """trunc(2**shift x) per row, as exact Python ints (from Fraction arithmetic)."""
    rows = []
    for row, s in zip(x.tolist(), shift.tolist(), strict=True):
        out = []
        for v in row:
            num, den = float(v).as_integer_ratio()
            num = num << s if s >= 0 else num
            den = den if s >= 0 else den << -s
            q = abs(num) // den
            out.append(q if num >= 0 else -q)
        rows.append(out)
    return rows


@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("phi", [0.0, 1.0, 4.0])
@pytest.mark.parametrize("count", [2, 8, 16, 20])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_uniqueness_bound_holds_exactly(mode, phi, count, dtype, rng):
    m, k, n = 5, 37, 4
    a = phi_matrix(rng, (m, k), phi, dtype)
    a[1] = 0.0  # a zero row
    a[2, 3] = 2.0**-1070  # subnormal entry
    b = phi_matrix(rng, (k, n), phi, dtype)
    bt = b.T.copy()
    sa, sb = compute_shifts(ENGINE, a, bt, count, mode)
    parts_a = [a.real, a.imag] if np.iscomplexobj(a) else [a]
    parts_b = [bt.real, bt.imag] if np.iscomplexobj(bt) else [bt]
    ia = [_scaled_ints(p, sa) for p in parts_a]
    ib = [_scaled_ints(p, sb) for p in parts_b]
    product = moduli_set(count).product
    worst = 0
    for i in range(m):
        for j in range(n):
            # |Re|,|Im| <= sum_h (|ar|+|ai|)(|br|+|bi|) which is what the bound must cover
            total = sum(
                sum(abs(x) for x in col_a) * sum(abs(y) for y in col_b)
                for col_a, col_b in zip(
                    zip(*[p[i] for p in ia], strict=False),
                    zip(*[p[j] for p in ib], strict=False),
                    strict=True,
                )
            )
            worst = max(worst, total)
    if np.iscomplexobj(a):
        # fast mode bounds each of Re, Im by the complex 2-norms (not their sum)
        worst_re_im = 0
        for i in range(m):
            for j in range(n):
                ar, ai = ia[0][i], ia[1][i]
                br, bi = ib[0][j], ib[1][j]
                re = sum(abs(x) * abs(y) for x, y in zip(ar, br, strict=False)) + sum(
                    abs(x) * abs(y) for x, y in zip(ai, bi, strict=False)
                )
                im = sum(abs(x) * abs(y) for x, y in zip(ar, bi, strict=False)) + sum(
                    abs(x) * abs(y) for x, y in zip(ai, br, strict=False)
                )
                worst_re_im = max(worst_re_im, re, im)
        worst = worst_re_im if mode == "fast" else worst
    assert 2 * worst < product
    # and the scaling is not wasteful: the largest product uses > 1/2**12 of the range
    if count >= 8:
        assert 2 * worst * 2**12 > product


@pytest.mark.parametrize("count", [2, 9, 16, 20])
def test_residues_exact_for_huge_integers(count, rng):
    """Scaled values beyond 2**53 (up to 2**78) reduce exactly, |r| <= p/2."""
    moduli = moduli_set(count)
    x = rng.standard_normal((3, 50)) * np.exp(rng.uniform(-5, 5, (3, 50)))
    shift = np.array([70, 40, 3], dtype=np.int64)
    got = ENGINE.residues(x, shift, moduli).planes
    ints = _scaled_ints(x, shift)
    assert max(abs(v) for row in ints for v in row) > 2**60
    for i, p in enumerate(moduli.moduli):
        for r in range(3):
            for c in range(50):
                res = int(got[i, r, c])
                assert abs(res) <= p // 2
                assert (res - ints[r][c]) % p == 0
