"""The rest of the scipy.fft FFT namespace: the Hermitian transforms (accuracy against a
long-double reference built from the definition, semantics against scipy.fft), the
frequency and shift helpers (equal to numpy), ozfft's fast lengths and the Plan object."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import scipy.fft as sfft

import ozfft
from ozfft.fourier.plan import MAX_MULTIPASS, factorize, fixed_layout

pyfftw_fft = pytest.importorskip("pyfftw.interfaces.numpy_fft")

NORMS = [None, "backward", "ortho", "forward"]


def _rel_l2(got, ref) -> float:
    return float(np.linalg.norm((got - ref).ravel()) / np.linalg.norm(ref.ravel()))


def _complex(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _fit(x, s, axes):
    """Crop or zero-pad ``x`` to ``s`` along ``axes`` (numpy.fft semantics)."""
    for n, ax in zip(s, axes, strict=True):
        size = x.shape[ax]
        if size >= n:
            x = np.take(x, np.arange(n), axis=ax)
        else:
            pad = [(0, 0)] * x.ndim
            pad[ax] = (0, n - size)
            x = np.pad(x, pad)
    return x


def _scale(norm, total, forward):
    """Factor of a transform over ``total`` points in the given direction."""
    if norm == "ortho":
        return 1 / np.sqrt(np.longdouble(total))
    if (norm == "forward") == forward:
        return 1 / np.longdouble(total)
    return np.longdouble(1)


def _hfftn_reference(x, s, axes, norm):
    """scipy/pocketfft's hfftn from its definition, in long double: forward DFTs over
    ``axes[:-1]``, then the 1-D Hermitian extension along ``axes[-1]`` (``n`` points from
    ``n//2 + 1``) and a forward DFT of it, real part."""
    x = np.asarray(x, np.clongdouble)
    last = axes[-1] % x.ndim
    n = s[-1]
    x = _fit(x, [*s[:-1], n // 2 + 1], axes)
    if len(axes) > 1:
        x = pyfftw_fft.fftn(x, axes=axes[:-1])
    full = np.zeros((*x.shape[:last], n, *x.shape[last + 1 :]), np.clongdouble)
    moved = np.moveaxis(full, last, -1)
    half = np.moveaxis(x, last, -1)
    moved[..., : n // 2 + 1] = half
    tail = (n - 1) // 2
    if tail:
        moved[..., n - tail :] = np.conj(half[..., 1 : tail + 1][..., ::-1])
    y = pyfftw_fft.fft(full, axis=last).real
    return y * _scale(norm, np.prod(s), forward=True)


def _ihfftn_reference(x, s, axes, norm):
    """Inverse DFT (no scaling) of real ``x`` over ``axes``, the last axis cut to
    ``n//2 + 1`` terms, scaled per ``norm`` (the inverse direction)."""
    x = _fit(np.asarray(x, np.longdouble).astype(np.clongdouble), s, axes)
    total = np.prod(s)
    y = pyfftw_fft.ifftn(x, axes=axes) * total  # unnormalized inverse
    y = np.take(y, np.arange(s[-1] // 2 + 1), axis=axes[-1])
    return y * _scale(norm, total, forward=False)


def _check_accuracy(ours, theirs, ref):
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    err, err_scipy = _rel_l2(ours, ref), _rel_l2(theirs, ref)
    # 1.5x scipy's error, plus one rounding (2**-53) for the lengths of a few points
    # where pocketfft is exact and the "ortho" division by sqrt(n) alone is not
    assert err <= 1.5 * err_scipy + 2.0**-53, (err, err_scipy)


# -- Hermitian transforms ----------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m, n", [(9, None), (9, 17), (9, 16), (33, 40), (5, 3), (2, None)])
def test_hfft_ihfft_1d(m, n, norm, rng):
    x = _complex(rng, (8, m))
    out_n = n if n is not None else 2 * (m - 1)
    ref = _hfftn_reference(x, [out_n], [-1], norm)
    _check_accuracy(ozfft.hfft(x, n, norm=norm), sfft.hfft(x, n, norm=norm), ref)

    xr = rng.standard_normal((8, m))
    in_n = n if n is not None else m
    ref = _ihfftn_reference(xr, [in_n], [-1], norm)
    _check_accuracy(ozfft.ihfft(xr, n, norm=norm), sfft.ihfft(xr, n, norm=norm), ref)


@pytest.mark.parametrize("norm", NORMS)
def test_hfft_axis_and_round_trip(norm, rng):
    x = _complex(rng, (7, 4, 5))
    for axis, n in ((0, 13), (1, 6), (-3, None)):
        got = ozfft.hfft(x, n, axis=axis, norm=norm)
        out_n = n if n is not None else 2 * (x.shape[axis] - 1)
        ref = _hfftn_reference(x, [out_n], [axis], norm)
        _check_accuracy(got, sfft.hfft(x, n, axis=axis, norm=norm), ref)
    # ihfft inverts hfft on the real line it produces (odd and even lengths)
    for n in (11, 12):
        y = ozfft.hfft(x, n, axis=0, norm=norm)
        back = ozfft.hfft(ozfft.ihfft(y, axis=0, norm=norm), n, axis=0, norm=norm)
        assert _rel_l2(back, y) < 1e-14


def _deprecated_s_without_axes(s, axes):
    """numpy >= 2's DeprecationWarning for ``s`` without ``axes``, which ozfft follows
    (docs/api.md); no warning otherwise."""
    if s is not None and axes is None:
        return pytest.warns(DeprecationWarning, match="`axes` should not be `None` if `s` is")
    return contextlib.nullcontext()


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "shape, s, axes",
    [
        ((6, 5, 9), None, None),
        ((6, 5, 9), (7, 5, 10), None),
        ((6, 5, 9), (8, 11), (0, 2)),
        ((6, 5, 9), None, (2, 0)),
        ((4, 12), None, (-1,)),
    ],
)
def test_hfftn_ihfftn(shape, s, axes, norm, rng):
    x = _complex(rng, shape)
    ref_axes = list(axes) if axes is not None else list(range(-(len(s) if s else len(shape)), 0))
    if s is None:
        ref_s = [shape[a] for a in ref_axes]
        ref_s[-1] = 2 * (shape[ref_axes[-1]] - 1)
    else:
        ref_s = list(s)
    ref = _hfftn_reference(x, ref_s, ref_axes, norm)
    with _deprecated_s_without_axes(s, axes):
        got = ozfft.hfftn(x, s, axes, norm=norm)
    _check_accuracy(got, sfft.hfftn(x, s, axes, norm=norm), ref)

    xr = rng.standard_normal(shape)
    in_s = list(s) if s is not None else [shape[a] for a in ref_axes]
    ref = _ihfftn_reference(xr, in_s, ref_axes, norm)
    with _deprecated_s_without_axes(s, axes):
        got = ozfft.ihfftn(xr, s, axes, norm=norm)
    _check_accuracy(got, sfft.ihfftn(xr, s, axes, norm=norm), ref)


@pytest.mark.parametrize("norm", ["backward", "ortho"])
def test_hfft2_ihfft2(norm, rng):
    x = _complex(rng, (3, 8, 6))
    ref = _hfftn_reference(x, [8, 10], [-2, -1], norm)
    _check_accuracy(ozfft.hfft2(x, norm=norm), sfft.hfft2(x, norm=norm), ref)
    _check_accuracy(
        ozfft.hfft2(x, s=(5, 7), axes=(0, 1), norm=norm),
        sfft.hfft2(x, s=(5, 7), axes=(0, 1), norm=norm),
        _hfftn_reference(x, [5, 7], [0, 1], norm),
    )
    xr = rng.standard_normal((3, 8, 6))
    ref = _ihfftn_reference(xr, [8, 6], [-2, -1], norm)
    _check_accuracy(ozfft.ihfft2(xr, norm=norm), sfft.ihfft2(xr, norm=norm), ref)


def test_hermitian_dtypes_lists_options_and_errors(rng):
    x = _complex(rng, (4, 9))
    got = ozfft.hfft(x.astype(np.complex64), precision="fp32")
    assert got.dtype == np.float32
    assert _rel_l2(got, sfft.hfft(x)) < 1e-6
    assert ozfft.ihfft(x.real.astype(np.float32)).dtype == np.complex64
    # lists and real input to hfft (imaginary part zero), integer input to ihfft
    np.testing.assert_allclose(ozfft.hfft([1.0, 2.0, 3.0]), sfft.hfft([1.0, 2.0, 3.0]), atol=1e-14)
    np.testing.assert_allclose(ozfft.ihfft([1, 2, 3, 4]), sfft.ihfft([1, 2, 3, 4]), atol=1e-15)
    # the Ozaki-II stage path: more moduli, at least as accurate
    ref = _hfftn_reference(x, [16], [-1], None)
    errors = [_rel_l2(ozfft.hfft(x, moduli=m), ref) for m in (6, 10, 16)]
    assert errors[0] > 1e-12 and errors[2] < 1e-14, errors
    with pytest.raises(ValueError, match="norm"):
        ozfft.hfft(x, norm="bogus")
    with pytest.raises(ValueError, match="norm"):
        ozfft.ihfftn(x.real, norm="bogus")
    with pytest.raises(TypeError):
        ozfft.ihfft(x)  # complex input: x must be real
    with pytest.raises(ValueError):
        ozfft.hfft(x, 0)
    with pytest.raises(ValueError):
        ozfft.hfft(x, precision="fp16")


# -- frequencies and shifts --------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 8, 1000, 1023])
@pytest.mark.parametrize("d", [1.0, 0.1, 3, 1e-300])
def test_fftfreq_rfftfreq_equal_numpy(n, d):
    for ours, theirs in ((ozfft.fftfreq, np.fft.fftfreq), (ozfft.rfftfreq, np.fft.rfftfreq)):
        got, want = ours(n, d), theirs(n, d)
        assert type(got) is np.ndarray and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(ours(n, d, xp=np, device="cpu"), want)
    with pytest.raises(ValueError, match="device"):
        ozfft.fftfreq(n, d, device="cuda:0")


def test_shifts_equal_numpy(rng):
    x = rng.standard_normal((5, 6, 7))
    for axes in (None, 0, -1, (0, 2), (1,), [2, 0], ()):
        for ours, theirs in (
            (ozfft.fftshift, np.fft.fftshift),
            (ozfft.ifftshift, np.fft.ifftshift),
        ):
            got = ours(x, axes=axes)
            np.testing.assert_array_equal(got, theirs(x, axes=axes))
            assert got is not x
        np.testing.assert_array_equal(ozfft.ifftshift(ozfft.fftshift(x, axes), axes), x)
    np.testing.assert_array_equal(ozfft.fftshift([0, 1, 2, -2, -1]), [-2, -1, 0, 1, 2])
    np.testing.assert_array_equal(
        ozfft.ifftshift(ozfft.fftfreq(9)), np.fft.ifftshift(np.fft.fftfreq(9))
    )


# -- fast lengths ------------------------------------------------------------------------


def _largest_prime_factor(m: int) -> int:
    p, largest = 2, 1
    while p * p <= m:
        while m % p == 0:
            largest, m = p, m // p
        p += 1
    return max(largest, m) if m > 1 else largest


def _fast_by_definition(m: int) -> bool:
    if m == 1:
        return True
    if m <= 1024:
        return _largest_prime_factor(m) <= 64
    return fixed_layout(m) == "four-step"


def test_next_and_prev_fast_len_minimal_by_brute_force():
    top = 5000
    fast = [m for m in range(1, top + 200) if _fast_by_definition(m)]
    nxt, prv, i = {}, {}, 0
    for t in range(1, top + 1):
        while fast[i] < t:
            i += 1
        nxt[t] = fast[i]
        prv[t] = fast[i] if fast[i] == t else fast[i - 1]
    assert [ozfft.next_fast_len(t) for t in range(1, top + 1)] == [nxt[t] for t in nxt]
    assert [ozfft.prev_fast_len(t) for t in range(1, top + 1)] == [prv[t] for t in prv]
    # ozfft's lengths are not pocketfft's
    assert ozfft.next_fast_len(1031) == 1032 != sfft.next_fast_len(1031)
    assert ozfft.next_fast_len(67) == 68 and ozfft.next_fast_len(61) == 61


@pytest.mark.parametrize("target", [67, 127, 1021, 1031, 4099, 10007, 65537])
def test_next_fast_len_is_planned_without_bluestein(target):
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    m = ozfft.next_fast_len(target, real=True)
    assert m >= target
    assert get_plan(target, FFTOptions()).bluestein is not None  # a slow length ...
    plan = get_plan(m, FFTOptions())  # ... padded to a fast one
    assert plan.scheme == "fixed" and plan.bluestein is None
    assert (plan.four_step is None) == (m <= 1024)


def test_fast_len_beyond_the_fixed_point_range():
    m = ozfft.next_fast_len(MAX_MULTIPASS + 1)
    assert m > MAX_MULTIPASS and _largest_prime_factor(m) <= 64
    assert factorize(m) is not None and fixed_layout(m) is None
    assert all(_largest_prime_factor(k) > 64 for k in range(MAX_MULTIPASS + 1, m))
    assert ozfft.next_fast_len(MAX_MULTIPASS) == MAX_MULTIPASS
    assert ozfft.prev_fast_len(m - 1) == MAX_MULTIPASS
    assert ozfft.next_fast_len(2**40) == 2**40


def test_fast_len_validation():
    assert ozfft.next_fast_len(np.int64(1000)) == 1000
    assert ozfft.next_fast_len(1, True) == 1 and ozfft.prev_fast_len(1) == 1
    for bad in (0, -5, 2**40 + 1):
        with pytest.raises(ValueError):
            ozfft.next_fast_len(bad)
        with pytest.raises(ValueError):
            ozfft.prev_fast_len(bad)
    for bad in (10.0, "10", None, 1.5):
        with pytest.raises(TypeError):
            ozfft.next_fast_len(bad)
    for bad in ("yes", 1.0, None, [True]):
        with pytest.raises(TypeError):
            ozfft.next_fast_len(10, real=bad)


# -- the Plan object ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, shape, axes, s",
    [
        ("c2c", (6, 10, 9), None, None),
        ("c2c", (6, 10, 9), (0, 2), (8, 7)),
        ("r2c", (5, 12), None, None),
        ("r2c", (5, 12, 4), (1,), (15,)),
        ("c2r", (6, 7), None, None),
        ("c2r", (6, 7), (1, 0), (7, 11)),
    ],
)
def test_plan_execute_bitwise_equal_to_direct_calls(kind, shape, axes, s, rng):
    x = rng.standard_normal(shape) if kind == "r2c" else _complex(rng, shape)
    plan = ozfft.get_fft_plan(x, axes, kind=kind, s=s)
    direct = {
        "c2c": (ozfft.fftn, ozfft.ifftn),
        "r2c": (ozfft.rfftn, ozfft.ihfftn),
        "c2r": (ozfft.hfftn, ozfft.irfftn),
    }[kind]
    for inverse, fn in enumerate(direct):
        for norm in (None, "ortho", "forward"):
            got = plan.execute(x, inverse=bool(inverse), norm=norm)
            want = fn(x, s, axes, norm=norm)
            assert got.shape == plan.out_shape
            np.testing.assert_array_equal(got, want)
    assert plan.shape == shape and plan.dtype == x.dtype and plan.kind == kind
    assert all(0 <= a < len(shape) for a in plan.axes)


def test_plan_warms_the_cache_and_reuse_hits_it(rng):
    ozfft.clear_plan_cache()
    x = _complex(rng, (12, 1000, 4))
    plan = ozfft.get_fft_plan(x.shape, axes=(1, 0), precision="fp64")
    info = ozfft.plan_cache_info()
    assert info["misses"] >= 2 and info["hits"] == 0
    assert sorted(plan.plans) == [12, 1000] and plan.axes == (1, 0) and plan.s == (1000, 12)
    assert plan.nbytes > 0 and plan.nbytes <= info["bytes"]
    first = plan.execute(x)
    for _ in range(2):
        np.testing.assert_array_equal(plan.execute(x), first)
    after = ozfft.plan_cache_info()
    assert after["misses"] == info["misses"]  # every lookup of the executions hit
    assert after["hits"] >= 6
    np.testing.assert_array_equal(first, ozfft.fftn(x, axes=(1, 0)))
    # an array argument also prepares the NumPy engine's executors
    before = ozfft.plan_cache_info()["executors"]
    ozfft.get_fft_plan(_complex(rng, (3, 50)), axes=-1)
    assert ozfft.plan_cache_info()["executors"] == before + 1


def test_plan_options_repr_and_validation(rng):
    plan = ozfft.get_fft_plan(64, kind="r2c", precision="fp32")
    assert plan.shape == (64,) and plan.axes == (0,) and plan.dtype == np.float64
    assert plan.precision == "fp32" and plan.moduli is None and plan.out_shape == (33,)
    text = repr(plan)
    assert "kind='r2c'" in text and "shape=(64,)" in text and "precision='fp32'" in text
    x = rng.standard_normal(64)
    np.testing.assert_array_equal(plan(x), ozfft.rfft(x, precision="fp32"))
    ozaki = ozfft.get_fft_plan((4, 30), moduli=8)
    assert ozaki.moduli == 8 and {p.scheme for p in ozaki.plans.values()} == {"ozaki"}
    xc = _complex(rng, (4, 30))
    np.testing.assert_array_equal(ozaki.execute(xc), ozfft.fftn(xc, moduli=8))
    assert ozfft.get_fft_plan((3, 8), kind="c2r").s == (3, 14)
    assert ozfft.get_fft_plan((3, 8), kind="c2r", s=(-1, 9)).s == (3, 9)
    assert isinstance(plan, ozfft.Plan)

    with pytest.raises(ValueError, match="shape"):
        plan.execute(rng.standard_normal(65))
    with pytest.raises(ValueError, match="dtype"):
        plan.execute(rng.standard_normal(64).astype(np.float32))
    with pytest.raises(ValueError, match="kind"):
        ozfft.get_fft_plan(8, kind="r2r")
    with pytest.raises(TypeError, match="dtype"):
        ozfft.get_fft_plan(8, kind="r2c", dtype=np.complex128)
    with pytest.raises(ValueError, match="precision"):
        ozfft.get_fft_plan(8, precision="fp16")
    with pytest.raises(ValueError, match="moduli"):
        ozfft.get_fft_plan(8, moduli=99)
    with pytest.raises(ValueError, match="different lengths"):
        ozfft.get_fft_plan((4, 4), axes=(0, 1), s=(4,))
    with pytest.raises(ValueError, match="data points"):
        ozfft.get_fft_plan((4, 1), kind="c2r")
    with pytest.raises(np.exceptions.AxisError):
        ozfft.get_fft_plan((4, 4), axes=(2,))
    with pytest.raises(TypeError):
        ozfft.get_fft_plan("abc")


def test_hfft_ihfft_out_as_numpy(rng):
    """numpy 2's ``out=`` on hfft/ihfft: the result is written into ``out`` and returned."""
    a = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    out = np.zeros(10)
    got = ozfft.hfft(a, n=10, out=out)
    assert got is out
    np.testing.assert_allclose(out, np.fft.hfft(a, n=10), rtol=1e-13, atol=1e-13)
    x = rng.standard_normal(9)
    out_c = np.zeros(5, complex)
    got = ozfft.ihfft(x, out=out_c)
    assert got is out_c
    np.testing.assert_allclose(out_c, np.fft.ihfft(x), rtol=1e-13, atol=1e-15)


def test_plan_phase_a_runs_the_products_it_names(rng, monkeypatch):
    """``get_fft_plan(phase_a=...)`` prepares and runs its executors in that Phase A (the
    executors the API asks for say so), with the same bits as INT8 and as a direct call;
    a plan's ``phase_a`` wins over the call's, ``None`` follows the call."""
    from ozfft.fourier import api, cache, planner, runs

    seen = []
    real = cache.get_executor

    def spy(engine, plan, phase_a=None):
        seen.append(phase_a)
        return real(engine, plan, phase_a)

    for module in (api, runs):  # where transforms look their executors up
        monkeypatch.setattr(module, "get_executor", spy)
    x = _complex(rng, (8, 48))
    plan = ozfft.get_fft_plan(x, phase_a="fp8")
    assert plan.phase_a == "fp8" and "phase_a='fp8'" in repr(plan)
    got = plan.execute(x)
    assert seen and set(seen) == {"fp8"}
    np.testing.assert_array_equal(got, ozfft.fftn(x, phase_a="int8"))
    np.testing.assert_array_equal(got, ozfft.fftn(x, phase_a="fp8"))
    seen.clear()
    ozfft.fftn(x, plan=plan, phase_a="int8")  # the plan's own choice wins
    assert set(seen) == {"fp8"}
    seen.clear()
    default = ozfft.get_fft_plan(x)
    assert default.phase_a is None
    default.execute(x)
    assert set(seen) == {"int8"}  # OZFFT_PHASE_A unset: "auto" is INT8 on the NumPy engine
    monkeypatch.setattr(planner, "get_executor", spy)
    seen.clear()
    ozfft.get_fft_plan(x, phase_a="fp8")  # an array: the executors are prepared in FP8
    assert set(seen) == {"fp8"}
    with pytest.raises(ValueError, match="phase_a"):
        ozfft.get_fft_plan(8, phase_a="fp16")
