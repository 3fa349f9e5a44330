"""Roots of unity against independent references.

Two references, neither sharing code with :mod:`ozfft.fourier.roots`:

* an exact big-integer recurrence ``z_m = z_{m-1} w`` (``w = exp(2 pi i/n)`` from mpmath at 320
  bits, 256 fractional bits kept, error < 2**-230 for m < 2**17), used for whole ranges;
* ``mpmath.cos/sin(2 pi m/n)`` at 200 bits, used for sampled m of large n.

Rounding in the references is ``mpmath.nint`` (an exact tie, possible only for bits = 0 and
a value of +-1/2, goes to ``mpmath.nint`` of the exact half-integer).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from ozfft.fourier import roots
from ozfft.fourier.roots import MAX_ROOT_BITS, fixed_roots, float_roots

P = 256  # fractional bits of the recurrence reference
TOL = 1 << (P - 200)  # its error is far below 2**-200 (in units of 2**-P)
BITS = (0, 1, 30, 53, 54, 61)


def _recurrence(n: int) -> list[tuple[int, int]]:
    """``(round(2**P cos(2 pi m/n)), round(2**P sin(2 pi m/n)))`` +- 2**-230, m < n."""
    with mpmath.workprec(320):
        theta = 2 * mpmath.pi / n
        wc = int(mpmath.nint(mpmath.cos(theta) * mpmath.mpf(2) ** P))
        ws = int(mpmath.nint(mpmath.sin(theta) * mpmath.mpf(2) ** P))
    out = [(1 << P, 0)]
    c, s = 1 << P, 0
    for _ in range(n - 1):
        c, s = (c * wc - s * ws) >> P, (c * ws + s * wc) >> P
        out.append((c, s))
    return out


def _nint_scaled(x: int, bits: int, m: int, n: int) -> int:
    """``nint(2**bits x / 2**P)`` for a reference value x (ties resolved exactly)."""
    d = 1 << (P - bits)
    q, r = divmod(x, d)
    if abs(r - d // 2) <= TOL:  # within the reference error of a tie: must be exact
        assert bits == 0 and Fraction(12 * m, n).denominator == 1, (m, n, bits)
        return int(mpmath.nint(mpmath.mpf(2 * q + 1) / 2))
    return q + (r > d // 2)


def _float_of(x: int) -> float:
    """Correctly rounded float of ``x / 2**P`` (exact zero when within the error of 0)."""
    if abs(x) <= TOL:
        return 0.0
    lo, hi = float(Fraction(x - TOL, 1 << P)), float(Fraction(x + TOL, 1 << P))
    assert lo == hi, "reference too close to a float64 midpoint"
    return lo


def _direct(m: int, n: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``cos, sin (2 pi m/n)`` at the working precision (200 bits), exact zeros snapped."""
    theta = 2 * mpmath.pi * m / n
    tiny = mpmath.mpf(2) ** -150
    return tuple(
        mpmath.mpf(0) if abs(v) < tiny else v for v in (mpmath.cos(theta), mpmath.sin(theta))
    )


def _check_fixed_range(n: int, ref: list[tuple[int, int]], stride: int = 1) -> None:
    for bits in BITS:
        re, im = fixed_roots(n, bits)
        assert re.dtype == np.int64 and im.dtype == np.int64 and re.shape == (n,)
        want_re = [_nint_scaled(ref[m * stride][0], bits, m, n) for m in range(n)]
        want_im = [-_nint_scaled(ref[m * stride][1], bits, m, n) for m in range(n)]
        assert re.tolist() == want_re, (n, bits)
        assert im.tolist() == want_im, (n, bits)


def _check_float_range(n: int, ref: list[tuple[int, int]], stride: int = 1) -> None:
    got = float_roots(n)
    assert got.dtype == np.complex128 and got.shape == (n,)
    want = [
        complex(_float_of(ref[m * stride][0]), -_float_of(ref[m * stride][1])) for m in range(n)
    ]
    assert got.tolist() == want, n


@pytest.mark.parametrize("lo", [1, 33, 65, 97])
def test_fixed_and_float_roots_small_n_every_m(lo):
    for n in range(lo, lo + 32 if lo < 97 else 131):
        ref = _recurrence(n)
        _check_fixed_range(n, ref)
        _check_float_range(n, ref)


def test_powers_of_two_to_2_16_every_m():
    top = 1 << 16
    ref = _recurrence(top)
    for k in range(17):
        n = 1 << k
        _check_fixed_range(n, ref, top // n)
        _check_float_range(n, ref, top // n)


@pytest.mark.parametrize("n", [97, 257, 65537, 4 * 4099, 2 * 32771, 3 * 2**14, 999983])
def test_large_n_sampled_against_direct_mpmath(n, rng):
    ms = np.concatenate([rng.integers(0, n, 150), [0, 1, n // 8, n // 4, n // 2, n - 1]])
    fixed = {bits: fixed_roots(n, bits) for bits in (1, 30, 54, 61)}
    flt = float_roots(n)
    with mpmath.workprec(200):
        for m in map(int, ms):
            c, s = _direct(m, n)
            assert flt[m] == complex(float(c), -float(s)), (n, m)
            for bits, (re, im) in fixed.items():
                scale = mpmath.mpf(2) ** bits
                assert re[m] == int(mpmath.nint(c * scale)), (n, m, bits)
                assert im[m] == -int(mpmath.nint(s * scale)), (n, m, bits)


def test_exact_ties_follow_mpmath_nint():
    half = int(mpmath.nint(mpmath.mpf(0.5)))  # mpmath: ties to even, 0
    re, im = fixed_roots(12, 0)
    # m = 1: sin 30 = 1/2; m = 2: cos 60 = 1/2; m = 4: cos 120 = -1/2, sin 120 irrational
    assert (re[1], im[1]) == (1, -half)
    assert (re[2], im[2]) == (half, -1)
    assert (re[4], im[4]) == (-half, -1)
    assert (re[8], im[8]) == (-half, 1)
    assert fixed_roots(12, 1)[1][1] == -1  # 2 * 1/2 is an integer: no tie at bits >= 1


def test_results_are_cached_read_only_and_bits_checked():
    re, im = fixed_roots(40, 20)
    assert fixed_roots(40, 20)[0] is re
    assert not re.flags.writeable and not im.flags.writeable
    assert not float_roots(40).flags.writeable
    with pytest.raises(ValueError):
        fixed_roots(8, MAX_ROOT_BITS + 1)
    with pytest.raises(ValueError):
        fixed_roots(8, -1)
    with pytest.raises(ValueError):
        float_roots(0)


@pytest.fixture
def fresh_caches():
    fixed_roots.cache_clear()
    float_roots.cache_clear()
    yield
    fixed_roots.cache_clear()
    float_roots.cache_clear()


@pytest.mark.parametrize("n", [1, 2, 6, 12, 60, 97, 128, 250])
def test_forced_mpmath_fallback_gives_identical_results(n, monkeypatch, fresh_caches):
    normal_fixed = {bits: fixed_roots(n, bits) for bits in BITS}
    normal_float = float_roots(n)
    fixed_roots.cache_clear()
    float_roots.cache_clear()
    monkeypatch.setattr(roots, "_DD_ERROR", 1.0)  # no candidate is ever certified
    core = n // 8 if n % 4 == 0 else n // 4 if n % 2 == 0 else n // 2
    for bits in BITS:
        before = roots._STATS["fixed"]
        re, im = fixed_roots(n, bits)
        assert roots._STATS["fixed"] - before == 2 * (core + 1)  # every core value
        assert np.array_equal(re, normal_fixed[bits][0])
        assert np.array_equal(im, normal_fixed[bits][1])
    before = roots._STATS["float"]
    got = float_roots(n)
    assert roots._STATS["float"] - before == 2 * core  # all but the exact w_0 = 1
    assert np.array_equal(got.view(np.int64), normal_float.view(np.int64))
    ref = _recurrence(n)
    _check_fixed_range(n, ref)
    _check_float_range(n, ref)


@pytest.mark.slow
def test_n_2_20_sampled_against_direct_mpmath(rng):
    n = 1 << 20
    ms = rng.integers(0, n, 2000)
    fixed = {bits: fixed_roots(n, bits) for bits in (54, 61)}
    flt = float_roots(n)
    with mpmath.workprec(200):
        for m in map(int, ms):
            c, s = _direct(m, n)
            assert flt[m] == complex(float(c), -float(s)), m
            for bits, (re, im) in fixed.items():
                scale = mpmath.mpf(2) ** bits
                assert re[m] == int(mpmath.nint(c * scale)), (m, bits)
                assert im[m] == -int(mpmath.nint(s * scale)), (m, bits)
