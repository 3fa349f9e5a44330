"""ozfft's FFT functions follow numpy.fft / scipy.fft semantics; errors are specific;
plans are cached; the scipy.fft backend dispatches and falls back."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.fft
from scipy._lib._uarray import BackendNotImplementedError

import ozfft
from ozfft.fourier.cache import get_plan
from ozfft.fourier.plan import estimate_fixed_plan_bytes, estimate_stage_plan_bytes, factorize
from ozfft.fourier.roots import fixed_roots

C2C = ["fft", "ifft", "fftn", "ifftn", "fft2", "ifft2"]
REAL = ["rfft", "rfftn", "rfft2"]
INV_REAL = ["irfft", "irfftn", "irfft2"]


def _close(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(float(np.abs(want).max()), 1e-300)
    assert float(np.abs(got - want).max()) <= 1e-13 * scale


@pytest.mark.parametrize("name", C2C)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_c2c_matches_numpy(name, norm, rng):
    x = rng.standard_normal((6, 5, 9)) + 1j * rng.standard_normal((6, 5, 9))
    _close(getattr(ozfft, name)(x, norm=norm), getattr(np.fft, name)(x, norm=norm))


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_real_forward_matches_numpy(name, norm, rng):
    x = rng.standard_normal((6, 5, 9))
    _close(getattr(ozfft, name)(x, norm=norm), getattr(np.fft, name)(x, norm=norm))


@pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")
@pytest.mark.parametrize("name", INV_REAL)
@pytest.mark.parametrize("n_last", [8, 9])
def test_real_inverse_matches_numpy(name, n_last, rng):
    spec = rng.standard_normal((6, 5, 5)) + 1j * rng.standard_normal((6, 5, 5))
    kw = (
        {"n": n_last}
        if name == "irfft"
        else {"s": (5, n_last) if name == "irfft2" else (6, 5, n_last)}
    )
    _close(getattr(ozfft, name)(spec, **kw), getattr(np.fft, name)(spec, **kw))
    _close(getattr(ozfft, name)(spec), getattr(np.fft, name)(spec))  # default length


@pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")
@pytest.mark.parametrize(
    "kw",
    [
        {"s": (4, 7)},
        {"s": (4, 7), "axes": (0, 2)},
        {"axes": (1,)},
        {"axes": (-1, 0)},
        {"s": (12,), "axes": (1,)},
        {"axes": (0, 0)},
    ],
)
def test_s_and_axes(kw, rng):
    x = rng.standard_normal((6, 5, 9)) + 1j * rng.standard_normal((6, 5, 9))
    _close(ozfft.fftn(x, **kw), np.fft.fftn(x, **kw))
    _close(ozfft.ifftn(x, **kw), np.fft.ifftn(x, **kw))


def test_n_and_axis_crop_and_pad(rng):
    x = rng.standard_normal((4, 10))
    for n in (3, 10, 17):
        for axis in (0, 1, -1):
            _close(ozfft.fft(x, n=n, axis=axis), np.fft.fft(x, n=n, axis=axis))
            _close(ozfft.rfft(x, n=n, axis=axis), np.fft.rfft(x, n=n, axis=axis))


@pytest.mark.parametrize(
    "dtype, out",
    [
        (np.int32, np.complex128),
        (np.bool_, np.complex128),
        (np.float32, np.complex64),
        (np.float64, np.complex128),
        (np.complex64, np.complex64),
        (np.float16, np.complex64),
    ],
)
def test_dtypes_cast_like_numpy(dtype, out):
    x = (np.arange(12) % 3).astype(dtype)
    got = ozfft.fft(x)
    assert got.dtype == out
    np.testing.assert_allclose(got, np.fft.fft(x.real.astype(np.float64)), atol=1e-5)
    if np.dtype(dtype).kind != "c":
        back = ozfft.irfft(ozfft.rfft(x))
        assert back.dtype == (np.float32 if out == np.complex64 else np.float64)


def test_lists_and_scipy_keywords():
    got = ozfft.fft([1.0, 2.0, 3.0], overwrite_x=True, workers=4, plan=None)
    _close(got, np.fft.fft([1.0, 2.0, 3.0]))


def test_inverse_round_trip_is_tight(rng):
    x = rng.standard_normal((3, 1000)) + 1j * rng.standard_normal((3, 1000))
    back = ozfft.ifft(ozfft.fft(x))
    assert np.abs(back - x).max() < 1e-15 * np.abs(x).max() * 10


@pytest.mark.parametrize("bad, kind", [(np.nan, "NaN"), (np.inf, "Inf")])
def test_non_finite_input(bad, kind):
    x = np.ones(8, complex)
    x[3] = bad
    with pytest.raises(ozfft.NonFiniteInputError, match=f"operand 'x' contains 1 .*{kind}"):
        ozfft.fftn(x)


def test_errors_like_numpy():
    x = np.ones((4, 4))
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        ozfft.fftn(x, s=(4, 4), axes=(0,))
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        ozfft.fft(x, n=0)
    with pytest.raises(np.exceptions.AxisError):
        ozfft.fft(x, axis=2)
    with pytest.raises(ValueError, match=r"Invalid norm value sideways"):
        ozfft.fft(x, norm="sideways")
    with pytest.raises(TypeError, match="x must be real"):
        ozfft.rfft(np.ones(4, complex))
    with pytest.raises(ozfft.UnsupportedDTypeError, match="operand 'x' has unsupported dtype"):
        ozfft.fft(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="precision must be one of"):
        ozfft.fft(x, precision="fp16")
    with pytest.raises(ValueError, match="moduli must be between 2 and 20, got 1"):
        ozfft.fft(x, moduli=1)


@pytest.mark.parametrize("moduli", [None, 16])
def test_plan_too_large_states_bytes(moduli, monkeypatch):
    """Both schemes estimate before building: the four-step fixed-point plan of 4096
    (twiddle table and sub-plans) and the Ozaki-II stage plan (``moduli=16``)."""
    ozfft.clear_plan_cache()
    monkeypatch.setenv("OZFFT_PLAN_MEMORY", "100000")
    with pytest.raises(ozfft.PlanMemoryError, match=r"length 4096 needs \d+ bytes") as info:
        ozfft.fft(np.ones(4096), moduli=moduli)
    if moduli is None:
        assert info.value.needed_bytes == estimate_fixed_plan_bytes(4096)
    else:
        assert info.value.needed_bytes == estimate_stage_plan_bytes(4096, moduli)
    assert info.value.needed_bytes > 100000
    assert isinstance(info.value, MemoryError)
    assert ozfft.plan_cache_info()["size"] == 0


def test_plan_cache_reuse_bound_and_clear(monkeypatch):
    ozfft.clear_plan_cache()
    ozfft.fft(np.ones(48))
    ozfft.fft(np.ones((3, 48)))
    info = ozfft.plan_cache_info()
    assert info["size"] == 1 and info["hits"] >= 1 and info["misses"] == 1
    monkeypatch.setenv("OZFFT_PLAN_CACHE", "2")
    for n in (5, 6, 7):
        ozfft.fft(np.ones(n))
    assert ozfft.plan_cache_info()["size"] == 2
    ozfft.clear_plan_cache()
    assert ozfft.plan_cache_info()["size"] == 0


def test_factorization_covers_every_length():
    for n in [*list(range(1, 300)), 1024, 4096, 65536, 2 * 3 * 5 * 7 * 11 * 13]:
        radices = factorize(n)
        if radices is None:
            assert (
                max(
                    p
                    for p in range(2, n + 1)
                    if n % p == 0 and all(p % q for q in range(2, int(p**0.5) + 1))
                )
                > 64
            )
        else:
            assert np.prod(radices) == n
            assert radices == [n] if n <= 1024 else max(radices) <= 64


def test_stage_matrices_are_exactly_rounded_roots():
    import mpmath

    n, bits = 96, 40  # a split plan for the folded twiddles: n = 96 * 12 > MAX_DIRECT
    re, im = fixed_roots(n, bits)
    with mpmath.workprec(200):
        for m in range(n):
            z = mpmath.expjpi(-mpmath.mpf(2 * m) / n) * mpmath.mpf(2) ** bits
            assert abs(re[m] - z.real) <= 0.5 and abs(im[m] - z.imag) <= 0.5
    big = 96 * 12
    plan = get_plan(big, 16)
    assert len(plan.stages) == 2
    stage = plan.stages[1]  # folded twiddles: M = w_r^{jk} w_n^{(j m + j') k_prev}
    r, prev = stage.radix, stage.prev_radix
    re_s, im_s = fixed_roots(big, stage.bits)
    for k, j, kp, jp in [(1, 1, prev - 1, 0), (r - 1, 2, 3, 0), (0, r - 1, 1, 0)]:
        e = (j * k * (big // r) + (j * stage.suffix + jp) * kp) % big
        assert stage.re[kp, jp, k, j] == re_s[e] and stage.im[kp, jp, k, j] == im_s[e]


def test_scipy_backend_dispatch_and_fallback(rng):
    x = rng.standard_normal((8, 6))
    with scipy.fft.set_backend(ozfft.scipy_backend, only=True):
        for name in C2C + REAL:
            _close(getattr(scipy.fft, name)(x), getattr(np.fft, name)(x))
        _close(scipy.fft.irfft(np.fft.rfft(x)), np.fft.irfft(np.fft.rfft(x)))
        with pytest.raises(BackendNotImplementedError):
            scipy.fft.dct(x)
    assert ozfft.scipy_backend.__ua_function__(scipy.fft.dct, (x,), {}) is NotImplemented
    with scipy.fft.set_backend(ozfft.scipy_backend):
        np.testing.assert_allclose(scipy.fft.dct(x), scipy.fft.dct(x))  # falls back


def test_scipy_global_backend(rng):
    x = rng.standard_normal(20)
    calls = []
    original = ozfft.scipy_backend.__ua_function__

    def spy(method, args, kwargs):
        calls.append(method.__name__)
        return original(method, args, kwargs)

    try:
        ozfft.scipy_backend.__ua_function__ = spy
        scipy.fft.set_global_backend(ozfft.scipy_backend)
        _close(scipy.fft.fft(x), np.fft.fft(x))
    finally:
        ozfft.scipy_backend.__ua_function__ = original
        scipy.fft.set_global_backend("scipy")
    assert calls == ["fft"]
