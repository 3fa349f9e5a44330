"""Stage 1-2 properties checked with Python integers: the CRT uniqueness bound and
exact residues, for both modes, real and complex, across exponent spreads."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from ozfft.engines import NumpyEngine
from ozfft.ozaki.residue_system import int8_system
from ozfft.ozaki.scaling import scaled_integers
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import compute_shifts

ENGINE = NumpyEngine()


def _scaled_ints(x: np.ndarray, shift: np.ndarray, rounding: str = "trunc") -> list[list[int]]:
    """trunc(2**shift x) per row, as exact Python ints (from Fraction arithmetic); for
    ``"nearest"`` the nearest integer (ties to even) where |2**shift x| >= 64."""
    rows = []
    for row, s in zip(x.tolist(), shift.tolist(), strict=True):
        out = []
        for v in row:
            y = Fraction(float(v)) * Fraction(2) ** int(s)
            out.append(round(y) if rounding == "nearest" and abs(y) >= 64 else int(y))
        rows.append(out)
    return rows


def _engine_ints(x: np.ndarray, shift: np.ndarray, rounding: str) -> list[list[int]]:
    """The engine's scaled integers (ozfft.ozaki.scaling.scaled_integers, as both engines'
    residues use them), checked against the exact rational definition."""
    got = scaled_integers(np, x, shift[:, None].astype(np.int32), rounding)
    ints = [[int(v) for v in row] for row in got.tolist()]
    assert ints == _scaled_ints(x, shift, rounding)
    return ints


def _tight_rows(rng, shape, dtype):
    """Entries a hair below the 7-bit mantissa bound ``c 2**(e-7)`` the statistics use, all
    in one binade per row: the sums of squares are tight and rounding to nearest goes up to
    the bound itself."""
    c = rng.integers(65, 129, shape)
    x = np.ldexp((c / 128.0) * (1 - 2.0**-50), rng.integers(-3, 3, shape[:-1])[..., None])
    x *= rng.choice([-1.0, 1.0], shape)
    return (x + 1j * x[..., ::-1]).astype(dtype) if np.dtype(dtype).kind == "c" else x


@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("phi", [0.0, 1.0, 4.0, "tight"])
@pytest.mark.parametrize("count", [2, 8, 16, 20])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("rounding", ["trunc", "nearest"])
def test_uniqueness_bound_holds_exactly(mode, phi, count, dtype, rounding, rng):
    m, k, n = 5, 37, 4
    if phi == "tight":
        a, b = _tight_rows(rng, (m, k), dtype), _tight_rows(rng, (n, k), dtype).T
    else:
        a = phi_matrix(rng, (m, k), phi, dtype)
        b = phi_matrix(rng, (k, n), phi, dtype)
    a[1] = 0.0  # a zero row
    a[2, 3] = 2.0**-1070  # subnormal entry
    bt = b.T.copy()
    sa, sb = compute_shifts(ENGINE, a, bt, count, mode)
    parts_a = [a.real, a.imag] if np.iscomplexobj(a) else [a]
    parts_b = [bt.real, bt.imag] if np.iscomplexobj(bt) else [bt]
    ia = [_engine_ints(p, sa, rounding) for p in parts_a]
    ib = [_engine_ints(p, sb, rounding) for p in parts_b]
    product = int8_system(count).product
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
    moduli = int8_system(count)
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


@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("count", [2, 8, 12, 16, 20])
def test_nearest_stays_within_the_statistics_bounds(mode, count, rng):
    """The lemma behind ``"nearest"`` (ozfft/ozaki/scaling.py): every rounded entry stays
    within the integer bound its row's statistics assume, ``c 2**(e + sigma - 7)``
    (fast) or ``2**alpha abar`` (accurate); on rows a hair below that bound it is
    reached (where the scaled entries keep fewer than 52 bits: 8 and 12 moduli at this
    k), so the bound is tight and the test can fail."""
    m, k = 6, 40
    a = np.concatenate([_tight_rows(rng, (3, k), np.float64), phi_matrix(rng, (3, k), 1.0)])
    sa, _ = compute_shifts(ENGINE, a, a, count, mode)
    # row 4: small entries that scale to the 64 threshold and around it (their shift
    # stays: they are tiny next to the row's maximum); 63.5 = (127/128) 2**6 has the
    # bound 63.5 itself, which rounding to nearest (64) would pass: truncated below 64
    near = np.array([63.5, 63.75, 64.5, 65.5, 127.5, 32.5, 31.75])
    sa2 = sa
    if count >= 8:  # with fewer moduli a whole row scales to ~2**7: nothing is "small"
        for _ in range(4):  # the inserted entries may move the row's shift: to a fixed point
            a[4, : near.size] = np.ldexp(near, -int(sa2[4]))
            sa2, _ = compute_shifts(ENGINE, a, a, count, mode)
            if (np.ldexp(a[4, : near.size], int(sa2[4])) == near).all():
                break
        assert (np.ldexp(a[4, : near.size], int(sa2[4])) == near).all()
    ints = _engine_ints(a, sa2, "nearest")
    reached = 0
    for i in range(m):
        e_row = max(int(np.frexp(v)[1]) for v in a[i] if v != 0)
        for h in range(k):
            v = Fraction(float(a[i, h]))
            if v == 0:
                continue
            e = int(np.frexp(float(a[i, h]))[1])
            if mode == "fast":  # c = ceil(128 |f|), |a| <= c 2**(e - 7)
                c = -((-abs(v) * Fraction(2) ** (7 - e)) // 1)
                bound = c * Fraction(2) ** (e + int(sa2[i]) - 7)
            else:  # abar = ceil(2**(g - E)|a|), sigma = alpha - E + g
                g = 6
                abar = -((-abs(v) * Fraction(2) ** (g - e_row)) // 1)
                bound = abar * Fraction(2) ** (int(sa2[i]) + e_row - g)
            assert abs(ints[i][h]) <= bound
            reached += abs(ints[i][h]) == bound and abs(ints[i][h]) > abs(v) * 2 ** int(sa2[i])
    if mode == "fast" and count in (8, 12):
        assert reached > 0  # rounding up to the bound happened
