"""``ozfft.scipy_backend``: what it answers (every scipy.fft name ozfft.fourier has, with
scipy's argument rules and messages), what it hands back to scipy (other names, long
double, non-finite input, foreign plans), and both ways of installing it."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest
import scipy.fft
from scipy._lib._uarray import BackendNotImplementedError

import ozfft
import ozfft.fourier
from ozfft import scipy_backend
from ozfft.fourier.api import scipy_semantics

# scipy.fft's multimethods (what a backend can be asked for)
MULTIMETHODS = [n for n in scipy.fft.__all__ if type(getattr(scipy.fft, n)).__name__ == "_Function"]
TRANSFORMS = [n for n in MULTIMETHODS if scipy_backend.handles(n)]


def _input(name, rng, shape=(6, 8)):
    x = rng.standard_normal(shape)
    real_in = name in ("rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn")
    return x if real_in else x + 1j * rng.standard_normal(shape)


def _raised(call):
    try:
        call()
    except Exception as exc:
        return type(exc), str(exc)
    return None


@pytest.fixture
def global_backend():
    """ozfft as the global backend, scipy registered as fallback; restored afterwards."""
    scipy.fft.set_global_backend(scipy_backend)
    scipy.fft.register_backend("scipy")
    try:
        yield
    finally:
        scipy.fft.set_global_backend("scipy")


def test_answers_every_scipy_name_ozfft_has():
    have = {n for n in ozfft.fourier.__all__ if callable(getattr(ozfft.fourier, n))}
    assert set(TRANSFORMS) == set(MULTIMETHODS) & have
    assert {"fft", "ifft", "rfftn", "irfftn"} <= set(TRANSFORMS)
    for name in ("dct", "idstn", "fht", "clear_plan_cache", "no_such_function", None):
        assert not scipy_backend.handles(name)
        assert scipy_backend.dispatch(name, (np.ones(4),), {}) is NotImplemented


@pytest.mark.parametrize("name", TRANSFORMS)
def test_dispatched_calls_are_ozfft(name, rng):
    x = _input(name, rng)
    with scipy.fft.set_backend(scipy_backend, only=True):
        got = getattr(scipy.fft, name)(x)
    want = getattr(ozfft.fourier, name)(x)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    reference = getattr(scipy.fft, name)(x)  # scipy's own
    assert got.shape == reference.shape and got.dtype == reference.dtype
    np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())


def test_functions_added_to_ozfft_fourier_are_picked_up(monkeypatch):
    calls = []

    def dct(x, *args, **kwargs):
        calls.append(x)
        return "ozfft's dct"

    monkeypatch.setattr(ozfft.fourier, "dct", dct, raising=False)
    monkeypatch.setattr(ozfft.fourier, "__all__", [*ozfft.fourier.__all__, "dct"])
    assert scipy_backend.handles("dct")
    with scipy.fft.set_backend(scipy_backend, only=True):
        assert scipy.fft.dct(np.ones(4)) == "ozfft's dct"
    assert len(calls) == 1


def test_other_names_fall_back_to_scipy(rng):
    x = rng.standard_normal((8, 6))
    with scipy.fft.set_backend(scipy_backend, only=True):
        with pytest.raises(BackendNotImplementedError):
            scipy.fft.dct(x)
    assert scipy_backend.__ua_function__(scipy.fft.dct, (x,), {}) is NotImplemented
    want = scipy.fft.dct(x)
    with scipy.fft.set_backend(scipy_backend):
        np.testing.assert_array_equal(scipy.fft.dct(x), want)


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("fft", np.longdouble),
        ("fft", np.clongdouble),
        ("ifftn", np.clongdouble),
        ("rfft", np.longdouble),
        ("irfft2", np.longdouble),
        ("irfft2", np.clongdouble),
    ],
)
def test_long_double_is_handed_to_scipy(name, dtype, rng):
    x = _input(name, rng)
    x = (x if np.dtype(dtype).kind == "c" else x.real).astype(dtype)
    assert scipy_backend.__ua_function__(getattr(scipy.fft, name), (x,), {}) is NotImplemented
    with pytest.raises(ozfft.UnsupportedDTypeError):
        getattr(ozfft, name)(x)
    want = getattr(scipy.fft, name)(x)
    with scipy.fft.set_backend(scipy_backend):
        got = getattr(scipy.fft, name)(x)
    assert got.dtype == want.dtype
    assert got.dtype in (np.dtype(np.longdouble), np.dtype(np.clongdouble))
    np.testing.assert_array_equal(got, want)
    with scipy.fft.set_backend(scipy_backend, only=True), pytest.raises(BackendNotImplementedError):
        getattr(scipy.fft, name)(x)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", ["fft", "rfftn", "irfft", "ifft2"])
def test_non_finite_input_is_handed_to_scipy(name, bad, rng):
    x = _input(name, rng)
    x[1, 2] = bad
    assert scipy_backend.__ua_function__(getattr(scipy.fft, name), (x,), {}) is NotImplemented
    with pytest.raises(ozfft.NonFiniteInputError):
        getattr(ozfft, name)(x)  # ozfft's own functions raise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(scipy.fft, name)(x)
        with scipy.fft.set_backend(scipy_backend):
            got = getattr(scipy.fft, name)(x)
    np.testing.assert_array_equal(got, want)


def test_foreign_plans_go_to_scipy_ozfft_plans_to_ozfft(rng):
    x = rng.standard_normal((12, 10)) + 0j
    for plan in ("foo", object()):
        assert scipy_backend.dispatch("fft", (x,), {"plan": plan}) is NotImplemented
        with scipy.fft.set_backend(scipy_backend):
            with pytest.raises(NotImplementedError, match="precomputed plan"):
                scipy.fft.fft(x, plan=plan)  # scipy's own answer
    plan = ozfft.get_fft_plan(x, (0, 1), precision="fp32")
    with scipy.fft.set_backend(scipy_backend, only=True):
        got = scipy.fft.fft2(x, plan=plan)
    want = ozfft.fft2(x, precision="fp32")
    assert got.tobytes() == want.tobytes()


BAD_CALLS = [
    ("fft", (np.ones(8),), {"norm": "o"}),
    ("rfftn", (np.arange(10.0),), {"norm": "sideways"}),
    ("fft", (np.ones(8),), {"n": 0}),
    ("ifft", ([],), {}),
    ("rfft", ([],), {}),
    ("rfft", ([[1.0, 1.0], [2.0, 2.0]], -5), {}),
    ("irfft", (np.ones(1),), {}),
    ("fftn", ([[]],), {}),
    ("fftn", ([[1, 1], [2, 2]], (4, -3)), {}),
    ("rfftn", ([[]],), {}),
    ("irfftn", ([[1, 1], [2, 2]], (4, -3)), {}),
    ("fftn", (np.zeros((4, 4, 2)),), {"s": (8, 8, 2, 1)}),
    ("fftn", (np.ones((3, 4)),), {"axes": (1, 1)}),
    ("fftn", (np.ones((3, 4)),), {"axes": (2,)}),
    ("ifftn", (np.ones((3, 4)),), {"s": (2, 2), "axes": (1,)}),
    ("fftn", (np.ones((3, 4)),), {"s": (None, 3), "axes": (0, 1)}),
    ("fftn", (np.ones((3, 4)),), {"s": (2.0, 3), "axes": (0, 1)}),
    ("rfftn", ([],), {"axes": []}),
    ("irfftn", ([],), {"axes": []}),
    ("rfft", (np.zeros(10, np.complex64),), {}),
    ("rfftn", (np.zeros(10, np.complex128),), {}),
    ("fft", (np.ones(8),), {"workers": 0}),
    ("ifft", (np.ones(8),), {"workers": -os.cpu_count() - 1}),
]


@pytest.mark.parametrize("name, args, kwargs", BAD_CALLS)
def test_errors_are_scipys(name, args, kwargs):
    want = _raised(lambda: getattr(scipy.fft, name)(*args, **kwargs))
    assert want is not None
    with scipy.fft.set_backend(scipy_backend, only=True):
        got = _raised(lambda: getattr(scipy.fft, name)(*args, **kwargs))
    assert got == want


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("fftn", {"s": (3, 5)}),
        ("irfftn", {"s": (3, 5)}),
        ("fftn", {"s": 5}),
        ("ifftn", {"axes": 0}),
        ("fftn", {"s": (-1, 5), "axes": (0, 1)}),
        ("fftn", {"axes": ()}),
        ("ifft2", {"axes": []}),
        ("rfftn", {"s": (4, -1)}),
    ],
)
def test_scipy_rules_without_warnings(name, kwargs, rng):
    x = _input(name, rng, (4, 6))
    want = getattr(scipy.fft, name)(x, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with scipy.fft.set_backend(scipy_backend, only=True):
            got = getattr(scipy.fft, name)(x, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1, np.abs(want).max()))


@pytest.mark.parametrize("dtype", [">f4", ">c8", ">f8", np.float16, np.int16, np.bool_])
def test_result_dtype_is_scipys(dtype):
    x = (np.arange(10) % 3).astype(dtype)
    for name in ("fft", "ifftn", "rfft" if np.dtype(dtype).kind != "c" else "irfft"):
        want = getattr(scipy.fft, name)(x)
        with scipy.fft.set_backend(scipy_backend, only=True):
            assert getattr(scipy.fft, name)(x).dtype == want.dtype


def test_semantics_are_scoped_to_the_call():
    x = np.ones((3, 4))
    with scipy.fft.set_backend(scipy_backend, only=True), pytest.raises(ValueError):
        scipy.fft.fftn(x, axes=(1, 1))  # scipy: repeated axes are an error ...
    assert ozfft.fftn(x, axes=(1, 1)).shape == (3, 4)  # ... numpy: transformed twice
    with pytest.raises(ValueError), scipy_semantics():
        raise ValueError
    assert ozfft.fftn(x, axes=(1, 1)).shape == (3, 4)
    seen = []
    with scipy_semantics():
        thread = threading.Thread(target=lambda: seen.append(ozfft.fftn(x, axes=(1, 1)).shape))
        thread.start()
        thread.join()
    assert seen == [(3, 4)]  # another thread keeps numpy's rules


def test_context_backend(rng):
    x = rng.standard_normal((8, 6))
    calls = []
    original = scipy_backend.dispatch

    def spy(name, args, kwargs, **options):
        calls.append(name)
        return original(name, args, kwargs, **options)

    scipy_backend.dispatch = spy
    try:
        with scipy.fft.set_backend(scipy_backend):
            got = scipy.fft.rfft2(x)
            scipy.fft.dct(x)
    finally:
        scipy_backend.dispatch = original
    assert calls == ["rfft2", "dct"]
    assert got.tobytes() == ozfft.rfft2(x).tobytes()


def test_global_backend_with_scipy_registered(rng, global_backend):
    x = rng.standard_normal(20)
    calls = []
    original = scipy_backend.dispatch

    def spy(name, args, kwargs, **options):
        result = original(name, args, kwargs, **options)
        calls.append((name, result is not NotImplemented))
        return result

    scipy_backend.dispatch = spy
    try:
        got = scipy.fft.fft(x)
        long = scipy.fft.fft(x.astype(np.longdouble))  # handed to scipy
        cosine = scipy.fft.dct(x)  # handed to scipy
    finally:
        scipy_backend.dispatch = original
    assert calls == [("fft", True), ("fft", False), ("dct", False)]
    assert got.tobytes() == ozfft.fft(x).tobytes()
    assert long.dtype == np.clongdouble
    with scipy.fft.set_backend("scipy", only=True):
        np.testing.assert_array_equal(cosine, scipy.fft.dct(x))
