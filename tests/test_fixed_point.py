"""The fixed-point digit-stage FFT scheme against exact Python-integer arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import ozfft
from ozfft.fourier.cache import get_plan
from ozfft.fourier.fixed import FixedPointExecutor
from ozfft.fourier.plan import MAX_FIXED, fixed_point_radices
from ozfft.options import FFTOptions
from ozfft.ozaki.fixed_point import (
    FORMATS,
    align_carried,
    carried_line_exponent,
    combine_diagonals,
    data_digits,
    from_fixed,
    line_exponent,
    matrix_digits,
    renormalize_shift,
    to_fixed,
)


def test_to_fixed_is_exact_floor_half_up(rng):
    v = rng.standard_normal(3000) * np.exp2(rng.integers(-70, 70, 3000))
    v[:8] = [0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e308, -1e308, 1.0, -0.5]
    for precision, fmt in FORMATS.items():
        e = line_exponent(v, np.zeros_like(v))
        x = to_fixed(v, e, fmt.data_bits)
        scale = Fraction(2) ** (fmt.data_bits - int(e))
        ref = [math.floor(Fraction(float(a)) * scale + Fraction(1, 2)) for a in v]
        assert [int(a) for a in x] == ref, precision
        assert np.abs(x).max() <= 2**fmt.data_bits


def test_from_fixed_rounds_once_to_nearest_even(rng):
    z = np.concatenate(
        [
            rng.integers(-(2**62), 2**62, 2000),
            rng.integers(-(2**20), 2**20, 500),
            np.array([0, 1, -1, 2**53 + 1, 2**53 + 3, 3 * 2**52 + 1, 2**62, -(2**62)]),
        ]
    )
    e = rng.integers(-1200, 1000, z.size)
    e[:600] = rng.integers(-1140, -1070, 600)  # subnormal results, double-rounding traps
    got = from_fixed(z, e)
    for zi, ei, g in zip(z.tolist(), e.tolist(), got.tolist(), strict=True):
        try:
            ref = float(Fraction(zi) * Fraction(2) ** ei)  # correctly rounded
        except OverflowError:
            ref = math.copysign(math.inf, zi)
        assert g == ref, (zi, ei)


def test_digits_round_trip(rng):
    w = rng.integers(-(2**54) - 1, 2**54 + 2, 500)
    d = matrix_digits(w, 7)
    assert d.min() >= -128 and d.max() <= 127
    assert all(sum(int(d[c, i]) * 256**c for c in range(7)) == int(w[i]) for i in range(500))
    with pytest.raises(ValueError, match="more than 7"):
        matrix_digits(np.array([2**56]), 7)
    x = rng.integers(-(2**62), 2**62, 500)
    b = data_digits(x, 8)
    assert b[:7].min() >= 0 and b[:7].max() <= 255 and abs(b[7]).max() <= 64
    assert all(sum(int(b[a, i]) * 256**a for a in range(8)) == int(x[i]) for i in range(500))


@pytest.mark.parametrize("radix", [2, 3, 8, 16, 32, 64])
def test_combine_is_exact(radix, rng):
    fmt = FORMATS["fp64"]
    count = fmt.last_diagonal - fmt.first_diagonal + 1
    acc = [rng.integers(-(2**30), 2**30, 300) for _ in range(count)]
    acc[-1] = rng.integers(-(2**4), 2**4, 300)  # keep |z| < 2**62 like real stages
    acc[-2] = rng.integers(-(2**12), 2**12, 300)
    z = combine_diagonals(acc, fmt, radix)
    h = fmt.stage_shift(radix)
    for i in range(300):
        y = sum(int(a[i]) * 256 ** (fmt.first_diagonal + d) for d, a in enumerate(acc))
        assert int(z[i]) == (y + 2 ** (h - 1)) >> h


def _frexp_exponent(v: Fraction) -> int:
    """The smallest ``E`` with ``|v| < 2**E`` (``v != 0``), exactly."""
    e = abs(v.numerator).bit_length() - v.denominator.bit_length() + 1
    while abs(v) < Fraction(2) ** (e - 1):
        e -= 1
    while abs(v) >= Fraction(2) ** e:
        e += 1
    return e


def _exact_line(x: np.ndarray, plan) -> list[complex]:
    """The fixed-point scheme on one line in Python integers and Fractions (independent
    of the vectorized code: direct sums over the plan's stage matrices)."""
    re, im, exponent = _exact_line_fixed(
        [Fraction(float(c.real)) for c in x], [Fraction(float(c.imag)) for c in x], plan
    )
    scale = Fraction(2) ** exponent
    return [complex(float(a * scale), float(b * scale)) for a, b in zip(re, im, strict=True)]


def _exact_line_fixed(vre: list[Fraction], vim: list[Fraction], plan):
    """The integers of one line from exact input values: entry (the largest frexp
    exponent, floor(v 2**(T - E) + 1/2)), the stages, natural order. Returns the parts
    and the exponent (value = part * 2**exponent)."""
    fmt = plan.digit_format
    n = plan.n
    nonzero = [v for v in vre + vim if v]
    big = max((_frexp_exponent(v) for v in nonzero), default=0)
    fix = lambda v: math.floor(v * Fraction(2) ** (fmt.data_bits - big) + Fraction(1, 2))  # noqa: E731
    re = [fix(v) for v in vre]
    im = [fix(v) for v in vim]
    exponent = big - fmt.data_bits
    m = n  # layout (K, m): position K * m + j * suffix + j'
    kb = 1
    for idx, stage in enumerate(plan.stages):
        r = stage.radix
        if idx > 0:
            top = max(max(abs(v) for v in re), max(abs(v) for v in im))
            s = fmt.data_bits - top.bit_length() if top else 0
            re = [v << s for v in re]
            im = [v << s for v in im]
            exponent -= s
        suffix = m // r
        h = fmt.stage_shift(r)
        lo = 256**fmt.first_diagonal
        new_re, new_im = list(re), list(im)
        for kidx in range(kb):
            for jp in range(suffix):
                kp = kidx % stage.prev_radix
                emb = stage.real_embedding()[kp, jp if idx > 0 else 0]
                dw = matrix_digits(emb, fmt.matrix_digits).astype(object)
                xin = []
                for j in range(r):
                    pos = kidx * m + j * suffix + jp
                    xin += [re[pos], im[pos]]
                xd = [
                    [
                        ((v >> (8 * a)) & 255) if a < fmt.data_digits - 1 else v >> (8 * a)
                        for v in xin
                    ]
                    for a in range(fmt.data_digits)
                ]
                for row in range(2 * r):
                    y = 0
                    for c in range(fmt.matrix_digits):
                        for a in range(fmt.data_digits):
                            if c + a >= fmt.first_diagonal:
                                y += 256 ** (c + a) * sum(
                                    int(dw[c][row][k]) * xd[a][k] for k in range(2 * r)
                                )
                    z = (y + 2 ** (h - 1)) >> h
                    assert y % lo == 0
                    pos = kidx * m + (row // 2) * suffix + jp
                    (new_re if row % 2 == 0 else new_im)[pos] = z
        re, im = new_re, new_im
        exponent += fmt.exponent_gain(r)
        kb *= r
        m = suffix
    out_re, out_im = [], []
    for k in range(n):
        digits, rest = [], k
        for r in plan.radices:
            digits.append(rest % r)
            rest //= r
        pos = 0
        for d, r in zip(digits, plan.radices, strict=True):
            pos = pos * r + d
        out_re.append(re[pos])
        out_im.append(im[pos])
    return out_re, out_im, exponent


@pytest.mark.parametrize("n", [6, 12, 30, 64])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_executor_equals_python_integers(n, precision, rng):
    plan = get_plan(n, FFTOptions(precision=precision))
    assert plan.scheme == "fixed"
    x = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    x[:, 1] *= 2.0**-30
    got = FixedPointExecutor(plan).transform(x)
    for col in range(2):
        assert list(got[:, col]) == _exact_line(x[:, col], plan)


def test_renormalize_shift():
    line_max = np.array([0, 1, 2**40 + 5, 2**62])
    assert list(renormalize_shift(line_max, 62)) == [0, 61, 21, 0]


def test_fixed_radices_cover_lengths():
    for n in range(2, MAX_FIXED + 1):
        radices = fixed_point_radices(n)
        largest = max(p for p in range(2, n + 1) if n % p == 0 and all(p % q for q in range(2, p)))
        if radices is None:
            assert largest > 64
        else:
            assert math.prod(radices) == n and max(radices) <= 64 and len(radices) <= 3
    assert fixed_point_radices(MAX_FIXED + 1) is None


def test_explicit_moduli_select_the_ozaki_path(rng):
    x = rng.standard_normal(64) + 0j
    assert get_plan(64, FFTOptions()).scheme == "fixed"
    assert get_plan(64, FFTOptions(moduli=16)).scheme == "ozaki"
    a, b = ozfft.fft(x), ozfft.fft(x, moduli=16)
    assert np.abs(a - b).max() < 1e-13 * np.abs(b).max()


def test_zero_and_tiny_lines():
    x = np.zeros((16, 3), complex)
    x[:, 1] = 5e-324
    x[3, 2] = -1e308
    y = ozfft.fft(x, axis=0)
    np.testing.assert_array_equal(y[:, 0], 0)
    # a constant line of the smallest subnormal: 16 * 2**-1074 exactly, the rest exactly 0
    assert y[0, 1] == 2.0**-1070 and not y[1:, 1].any()
    # a spike at the top of the range: -1e308 w**(3k), no overflow, fp64-accurate
    ref = -1e308 * np.exp(-2j * np.pi * (3 * np.arange(16) % 16).astype(np.longdouble) / 16)
    assert np.isfinite(y[:, 2]).all()
    assert np.abs(y[:, 2] - ref).max() <= 4e-16 * 1e308


@pytest.mark.parametrize("shape", [(6, 12), (8, 5)])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_carried_fixed_point_equals_python_integers(shape, precision, rng):
    """fftn over two one-pass axes hands fixed point on (ozaki/fixed_point.py, "Carried
    fixed point"): the rows' integers and exponents enter the column pass exactly, and
    only the end rounds to float64 — checked against Python integers and Fractions."""
    n0, n1 = shape
    opts = FFTOptions(precision=precision)
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    x[1] *= 2.0**-40  # rows of very different scales: the column entry aligns them
    x[2, 1:] = 0
    rows = [
        _exact_line_fixed(
            [Fraction(float(v.real)) for v in x[i]],
            [Fraction(float(v.imag)) for v in x[i]],
            get_plan(n1, opts),
        )
        for i in range(n0)
    ]
    got = ozfft.fftn(x, precision=precision)
    for k in range(n1):
        vre = [Fraction(re[k]) * Fraction(2) ** e for re, _, e in rows]
        vim = [Fraction(im[k]) * Fraction(2) ** e for _, im, e in rows]
        re, im, e = _exact_line_fixed(vre, vim, get_plan(n0, opts))
        scale = Fraction(2) ** e
        want = [complex(float(a * scale), float(b * scale)) for a, b in zip(re, im, strict=True)]
        assert list(got[:, k]) == want


def test_carried_rules_are_exact(rng):
    z = rng.integers(-(2**62), 2**62, 4000) >> rng.integers(0, 63, 4000)
    e = rng.integers(-1100, 1000, 4000)
    z[:5] = [0, 1, -1, 2**62 - 1, -(2**62)]
    big = carried_line_exponent(z, np.zeros_like(z), e)
    want = max(int(a).bit_length() + int(b) for a, b in zip(np.abs(z), e, strict=True) if a)
    assert big == want
    for bits in (62, 30):
        for exponent in (want, want + 3, want + 70):
            got = align_carried(z, e, exponent, bits)
            ref = [
                math.floor(
                    Fraction(int(a)) * Fraction(2) ** (int(b) + bits - exponent) + Fraction(1, 2)
                )
                for a, b in zip(z, e, strict=True)
            ]
            assert [int(v) for v in got] == ref
    assert carried_line_exponent(np.zeros(3, np.int64), np.zeros(3, np.int64), e[:3]) == 0


@pytest.mark.parametrize("axes", [None, (0, 2), (2, 0, 1)])
def test_rfftn_is_the_cropped_complex_transform(axes, rng):
    """The real-input first pass (read as reals, written cropped) and the fixed point it
    carries on give the bits of the complex transform of x + 0j, cropped: every line is
    computed alone, so dropping lines changes nothing."""
    x = rng.standard_normal((6, 10, 8))
    x[2] *= 2.0**-200
    last = 2 if axes is None else axes[-1]
    full = ozfft.fftn(x.astype(complex), axes=axes)
    index = [slice(None)] * 3
    index[last] = slice(0, x.shape[last] // 2 + 1)
    np.testing.assert_array_equal(ozfft.rfftn(x, axes=axes), full[tuple(index)])
