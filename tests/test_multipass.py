"""Multi-pass (four-step) fixed-point plans and Bluestein around fixed-point plans.

The bitwise checks run an independent implementation of the multi-pass rules in Python
integers and Fractions (module doc of ozfft.ozaki.fixed_point, "Multi-pass lines"): its
stage products are the full exact product minus the dropped low digit diagonals (neither
the executor's grouped GEMMs nor its per-diagonal sums), its twiddle the exact complex
product of Python ints.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest

import ozfft
from ozfft.engines.select import numpy_engine
from ozfft.fourier import fixed as fixed_module
from ozfft.fourier import plan as plan_module
from ozfft.fourier.cache import get_executor, get_plan
from ozfft.fourier.plan import (
    MAX_MULTIPASS,
    estimate_fixed_plan_bytes,
    fixed_layout,
    four_step_split,
)
from ozfft.fourier.roots import fixed_roots
from ozfft.options import FFTOptions
from ozfft.ozaki.fixed_point import FORMATS, twiddle_product

# -- an independent reference in Python integers ---------------------------------------


def _balanced_digits(w: int, count: int) -> list[int]:
    out = []
    for _ in range(count):
        d = (w + 128) % 256 - 128
        out.append(d)
        w = (w - d) // 256
    assert w == 0
    return out


def _entry(values: list[complex], fmt) -> tuple[list[int], list[int], int]:
    parts = [v.real for v in values] + [v.imag for v in values]
    big = max((math.frexp(p)[1] for p in parts if p), default=0)
    scale = Fraction(2) ** (fmt.data_bits - big)
    fix = lambda p: math.floor(Fraction(p) * scale + Fraction(1, 2))  # noqa: E731
    return [fix(v.real) for v in values], [fix(v.imag) for v in values], big - fmt.data_bits


def _exit(re: list[int], im: list[int], exponent: int) -> list[complex]:
    scale = Fraction(2) ** exponent
    return [complex(float(a * scale), float(b * scale)) for a, b in zip(re, im, strict=True)]


def _renormalize(re, im, exponent, fmt):
    top = max(max(abs(v) for v in re), max(abs(v) for v in im))
    s = fmt.data_bits - top.bit_length() if top else 0
    return [v << s for v in re], [v << s for v in im], exponent - s


def _stages(re: list[int], im: list[int], exponent: int, plan):
    """A one-pass plan's stages on one fixed-point line; natural-order output."""
    fmt = plan.digit_format
    n, dx, dw, first = plan.n, fmt.data_digits, fmt.matrix_digits, fmt.first_diagonal
    m, kb = n, 1
    for idx, stage in enumerate(plan.stages):
        r = stage.radix
        if idx > 0:
            re, im, exponent = _renormalize(re, im, exponent, fmt)
        suffix = m // r
        h = fmt.stage_shift(r)
        emb = stage.real_embedding()
        new_re, new_im = list(re), list(im)
        for kidx in range(kb):
            for jp in range(suffix):
                w = emb[kidx % stage.prev_radix, jp if idx > 0 else 0].astype(object)
                xin = []
                for j in range(r):
                    pos = kidx * m + j * suffix + jp
                    xin += [re[pos], im[pos]]
                x = np.array(xin, dtype=object)
                y = w.dot(x)  # the full exact product ...
                wd = np.array(
                    [[_balanced_digits(int(v), dw) for v in row] for row in w], dtype=object
                )  # (2r, 2r, dw)
                xd = [(x >> (8 * a)) & 255 for a in range(dx - 1)] + [x >> (8 * (dx - 1))]
                for c in range(dw):  # ... less the dropped diagonals c + a < D
                    for a in range(dx):
                        if c + a < first:
                            y = y - 256 ** (c + a) * wd[:, :, c].dot(xd[a])
                for row in range(2 * r):
                    assert y[row] % 256**first == 0
                    z = (y[row] + 2 ** (h - 1)) >> h
                    pos = kidx * m + (row // 2) * suffix + jp
                    (new_re if row % 2 == 0 else new_im)[pos] = z
        re, im = new_re, new_im
        exponent += fmt.exponent_gain(r)
        kb *= r
        m = suffix
    order = []
    for k in range(n):  # output digit k_1 least significant, stored most significant
        rest, pos = k, 0
        for r in plan.radices:
            pos = pos * r + rest % r
            rest //= r
        order.append(pos)
    return [re[p] for p in order], [im[p] for p in order], exponent


def _reference(values: list[complex], plan) -> list[complex]:
    """The fixed-point transform of one line, one-pass or four-step, from the spec."""
    fmt = plan.digit_format
    if plan.four_step is None:
        re, im, e = _entry(values, fmt)
        return _exit(*_stages(re, im, e, plan))
    steps = plan.four_step
    n, n_a, n_b, bits = plan.n, steps.n_a, steps.n_b, fmt.matrix_bits
    tw_re, tw_im = fixed_roots(n, bits)
    columns = [_reference(values[j_b::n_b], steps.inner_a) for j_b in range(n_b)]
    out = [0j] * n
    for k_a in range(n_a):
        re, im, e = _entry([columns[j_b][k_a] for j_b in range(n_b)], fmt)
        for j_b in range(n_b):
            tr, ti = int(tw_re[k_a * j_b % n]), int(tw_im[k_a * j_b % n])
            xr, xi = re[j_b], im[j_b]
            re[j_b] = (xr * tr - xi * ti + 2**bits) >> (bits + 1)
            im[j_b] = (xr * ti + xi * tr + 2**bits) >> (bits + 1)
        re, im, e = _renormalize(re, im, e + 1, fmt)
        row = _exit(*_stages(re, im, e, steps.inner_b))
        for k_b in range(n_b):
            out[k_a + n_a * k_b] = row[k_b]
    return out


@pytest.fixture
def fresh_plans():
    ozfft.clear_plan_cache()
    yield
    ozfft.clear_plan_cache()


def _lines(rng, n: int) -> np.ndarray:
    x = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    x[:, 1] *= np.exp2(rng.integers(-40, 40, n))  # a wide dynamic range
    return x


# -- the twiddle rule --------------------------------------------------------------------


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_twiddle_product_is_exact(precision, rng):
    fmt = FORMATS[precision]
    t_bits, s_bits = fmt.data_bits, fmt.matrix_bits
    size = 4000
    x = rng.integers(-(2**t_bits), 2**t_bits, (2, size), endpoint=True)
    t = rng.integers(-(2**s_bits), 2**s_bits, (2, size), endpoint=True)
    edges = [2**t_bits, -(2**t_bits), 2**t_bits - 1, -1, 0, 1]
    x[:, : len(edges) ** 2] = np.array([(a, b) for a in edges for b in edges]).T
    t[:, :4] = [[2**s_bits, -(2**s_bits), 0, 2**s_bits], [0, 0, 2**s_bits, -(2**s_bits)]]
    roots_re, roots_im = fixed_roots(4096, s_bits)  # real twiddles, too
    pick = rng.integers(0, 4096, 1000)
    t[0, -1000:], t[1, -1000:] = roots_re[pick], roots_im[pick]
    zr, zi = twiddle_product(x[0], x[1], t[0], t[1], s_bits)
    for i in range(size):
        xr, xi, tr, ti = (int(v) for v in (x[0, i], x[1, i], t[0, i], t[1, i]))
        half, shift = 1 << s_bits, s_bits + 1
        assert int(zr[i]) == (xr * tr - xi * ti + half) >> shift, i
        assert int(zi[i]) == (xr * ti + xi * tr + half) >> shift, i
        assert Fraction(xr * tr - xi * ti, 2**shift) - Fraction(1, 2) < int(zr[i])


# -- plan structure ----------------------------------------------------------------------


def test_split_choice():
    # the fewest passes, then the shortest longest pass, then the largest row pass
    assert four_step_split(2**20) == (1024, 1024)
    assert four_step_split(2**24) == (65536, 256)
    assert four_step_split(65536) == (256, 256)
    assert four_step_split(2**18) == (512, 512)
    assert four_step_split(16384) == (128, 128)
    assert four_step_split(2048) == (32, 64)
    assert four_step_split(12 * 1024) == (96, 128)
    assert four_step_split(10**6) == (1000, 1000)
    assert four_step_split(2**26) == (131072, 512)  # three passes of at most 512
    assert four_step_split(1024) is None  # one pass
    assert four_step_split(2 * 67) is None  # Bluestein
    assert four_step_split(2 * MAX_MULTIPASS) is None
    assert fixed_layout(1000) == "one-pass"
    assert fixed_layout(3 * 1024) == "four-step"
    assert fixed_layout(67) == fixed_layout(999983) == "bluestein"
    assert fixed_layout(2 * MAX_MULTIPASS) is None
    assert fixed_layout(MAX_MULTIPASS // 2 + 1) is None  # a Bluestein too long (m = 2**27)


@functools.cache
def _chains(n: int, max_pass: int) -> frozenset[tuple[int, ...]]:
    """Brute force: every chain of one-pass lengths (each in 2..max_pass) whose product is
    ``n``, as sorted tuples."""
    found = {(n,)} if 2 <= n <= max_pass else set()
    for d in range(2, max_pass + 1):
        if n % d == 0 and n > d:
            found |= {tuple(sorted((*c, d))) for c in _chains(n // d, max_pass)}
    return frozenset(found)


def _best_chain(n: int, max_pass: int) -> tuple[int, int]:
    """(passes, longest pass) of the best chain: the fewest passes, then the shortest
    longest pass."""
    return min((len(c), max(c)) for c in _chains(n, max_pass))


@pytest.mark.parametrize("max_pass", [16, 1024])
def test_split_has_fewest_passes_then_balanced_then_largest_row(max_pass, monkeypatch):
    monkeypatch.setattr(plan_module, "MAX_PASS", max_pass)
    lengths = [17 * 2, 100, 210, 256, 1000, 1024, 4096, 3 * 5 * 7 * 11 * 13, 2**12 * 3**3]
    lengths += [1023 * 1025, 64 * 63 * 62, 2**20, 2**21 * 3]
    for n in lengths:
        if n <= max_pass:
            continue
        largest_prime = max(
            p for p in range(2, 65) if n % p == 0 and all(p % q for q in range(2, p))
        )
        if largest_prime > max_pass:
            assert four_step_split(n) is None or max_pass >= 64
            continue
        n_a, n_b = four_step_split(n)
        assert n_a * n_b == n and 2 <= n_b <= max_pass
        best = _best_chain(n, max_pass)

        def with_row(d, n=n):  # the best chain that ends in a row pass of d
            passes, longest = _best_chain(n // d, max_pass)
            return (passes + 1, max(longest, d))

        assert with_row(n_b) == best, n
        better = [d for d in range(n_b + 1, max_pass + 1) if n % d == 0 and with_row(d) == best]
        assert not better, (n, n_b, better)


def test_four_step_plan_fields(fresh_plans):
    plan = get_plan(4096, FFTOptions())
    steps = plan.four_step
    assert plan.scheme == "fixed" and plan.stages == () and plan.bluestein is None
    assert (steps.n, steps.n_a, steps.n_b) == (4096, 64, 64)
    assert steps.inner_b is get_plan(64, FFTOptions())  # shared with the cache
    assert steps.inner_a is steps.inner_b and steps.inner_b.four_step is None
    assert steps.twiddle_bits == FORMATS["fp64"].matrix_bits
    assert steps.twiddle_re is fixed_roots(4096, steps.twiddle_bits)[0]
    assert plan.pass_count == 2
    blue = get_plan(4099, FFTOptions())
    assert blue.scheme == "fixed" and blue.bluestein.inner.four_step is not None
    assert blue.bluestein.m == 16384 and blue.pass_count == 4


def test_moduli_still_force_ozaki(fresh_plans):
    for n in (4096, 4099):
        plan = get_plan(n, FFTOptions(moduli=16))
        assert plan.scheme == "ozaki" and plan.four_step is None
    assert get_plan(4099, FFTOptions(moduli=16)).bluestein.inner.scheme == "ozaki"


# -- bitwise against the reference ----------------------------------------------------------


def _check_bitwise(n: int, precision: str, rng) -> None:
    plan = get_plan(n, FFTOptions(precision=precision))
    x = _lines(rng, n)
    got = get_executor(numpy_engine(), plan).forward(x, 0)
    if precision == "fp64":
        np.testing.assert_array_equal(ozfft.fft(x, axis=0), got)
    for col in range(x.shape[1]):
        want = _reference(list(x[:, col]), plan)
        assert got[:, col].tolist() == want, (n, col)


@pytest.mark.parametrize(
    "max_pass, n, precision",
    [
        (16, 128, "fp64"),  # 8 x 16
        (16, 210, "fp64"),  # 14 x 15
        (16, 1024, "fp64"),  # (4 x 16) x 16: three passes
        (16, 192, "fp32"),  # 12 x 16
        (64, 3 * 64, "fp64"),  # 3 x 64
    ],
)
def test_forced_split_equals_reference(max_pass, n, precision, monkeypatch, fresh_plans, rng):
    monkeypatch.setattr(plan_module, "MAX_PASS", max_pass)
    plan = get_plan(n, FFTOptions(precision=precision))
    assert plan.four_step is not None and plan.four_step.n_b <= max_pass
    _check_bitwise(n, precision, rng)


@pytest.mark.parametrize("n, n_b", [(2048, 64), (3 * 1024, 64), (5 * 1024, 80)])
def test_two_pass_equals_reference(n, n_b, fresh_plans, rng):
    assert get_plan(n, FFTOptions()).four_step.n_b == n_b
    _check_bitwise(n, "fp64", rng)


def test_bluestein_inner_is_bitwise_fixed(fresh_plans, rng):
    """A Bluestein plan's inner transforms are the fixed-point plan of length m."""
    plan = get_plan(97, FFTOptions())
    inner = plan.bluestein.inner
    assert inner.n == 256 and inner.scheme == "fixed"
    x = rng.standard_normal((256, 1)) + 1j * rng.standard_normal((256, 1))
    got = get_executor(numpy_engine(), inner).forward(x, 0)
    assert got[:, 0].tolist() == _reference(list(x[:, 0]), inner)
    kernel = np.zeros(256, complex)
    kernel[:97] = plan.bluestein.chirp.conj()
    kernel[256 - 96 :] = plan.bluestein.chirp[1:][::-1].conj()
    assert plan.bluestein.kernel_hat.tolist() == _reference(list(kernel), inner)


def test_columns_are_independent_of_batch_and_chunks(monkeypatch, fresh_plans, rng):
    """A column's bits do not depend on its neighbours or on how columns are chunked."""
    n = 3 * 1024
    x = rng.standard_normal((n, 5)) + 1j * rng.standard_normal((n, 5))
    x[:, 2] *= 1e-200
    whole = ozfft.fft(x, axis=0)
    monkeypatch.setattr(fixed_module, "_ELEMENTS", 1500)  # one or two columns per block
    monkeypatch.setattr(fixed_module, "_CHUNK", 7)
    ozfft.clear_plan_cache()
    for col in range(5):
        single = ozfft.fft(x[:, col])
        np.testing.assert_array_equal(single, whole[:, col])
    np.testing.assert_array_equal(ozfft.fft(x.T, axis=1), whole.T)


def test_zero_and_extreme_lines_four_step():
    n = 2048
    x = np.zeros((n, 3), complex)
    x[5, 1] = 5e-324
    x[:, 2] = 1e300 * (1 + 1j)
    y = ozfft.fft(x, axis=0)
    assert not y[:, 0].any()
    # 2**-1074 w**(5k): every component within one subnormal step of the exact value
    theta = 2 * np.pi * (5 * np.arange(n) % n) / n
    assert np.abs(np.ldexp(y[:, 1].real, 1074) - np.cos(theta)).max() <= 1
    assert np.abs(np.ldexp(y[:, 1].imag, 1074) + np.sin(theta)).max() <= 1
    # a constant line at the top of the range: exactly n c at k = 0, exactly 0 elsewhere
    assert y[0, 2] == n * 1e300 * (1 + 1j) and not y[1:, 2].any()


# -- memory -------------------------------------------------------------------------------


def test_plan_bytes_are_linear_and_estimated(fresh_plans):
    one_pass = get_plan(1024, FFTOptions()).nbytes
    lengths = (2048, 4096, 3 * 4096, 2**16, 2**18, 4099, 65537)
    total = 0
    for n in lengths:
        plan = get_plan(n, FFTOptions())
        assert plan.nbytes == estimate_fixed_plan_bytes(n), n
        if plan.four_step is not None:  # the twiddle table of n plus small sub-plans
            bound = 16 * n * 1.01 + 2 * one_pass
        else:  # chirp, kernel spectrum, the inner four-step plan of length m
            bound = 16 * n + 32 * plan.bluestein.m * 1.01 + 2 * one_pass
        assert plan.nbytes <= bound, n
        total += bound
    info = ozfft.plan_cache_info()
    assert info["size"] > len(lengths)  # the sub-plans are cached too ...
    assert info["bytes"] < sum(get_plan(n, FFTOptions()).nbytes for n in lengths)  # ... once
    assert info["bytes"] <= total


def test_fixed_plan_too_large(monkeypatch, fresh_plans):
    monkeypatch.setenv("OZFFT_PLAN_MEMORY", str(2**20))
    needed = estimate_fixed_plan_bytes(2**17)
    assert needed > 2**20
    with pytest.raises(ozfft.PlanMemoryError, match=rf"length {2**17} needs {needed} bytes"):
        ozfft.fft(np.ones(2**17))
    with pytest.raises(ozfft.PlanMemoryError, match=r"length 65537 needs"):
        ozfft.fft(np.ones(65537))
    ozfft.fft(np.ones(2**14))  # small enough
