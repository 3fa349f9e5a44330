"""ozfft's FFT functions follow numpy.fft (numpy >= 2) / scipy.fft semantics; errors are
specific; plans are cached; the public docstrings are complete and rendered in
docs/api.md. (The scipy.fft backend: tests/test_scipy_backend.py.)"""

from __future__ import annotations

import doctest
import inspect
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.fft

import ozfft
from ozfft.fourier import api
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


class _DeviceFlag(np.ndarray):
    def get(self):  # a device array's copy to the host
        return np.asarray(self)


class _FakeDevice:
    """A device namespace over numpy (not numpy itself: InputCheck defers its test)."""

    int32 = np.int32
    isfinite, isnan, isinf = np.isfinite, np.isnan, np.isinf

    @staticmethod
    def zeros(n, dtype):
        return np.zeros(n, dtype).view(_DeviceFlag)


class _Checking:
    checks_input = True


def test_input_check_defers_and_hands_the_flag_once():
    from ozfft.fourier.input_check import InputCheck

    x = np.ones((2, 8))
    check = InputCheck(_FakeDevice, x)
    assert check.flag(object(), x.shape) is None  # no checks_input: falls back to isfinite
    assert check.flag(_Checking(), x.shape) is None  # not the first pass any more
    x[1, 3] = np.nan
    with pytest.raises(ozfft.NonFiniteInputError, match=r"contains 1 .*NaN"):
        check()
    check()  # one test per call

    check = InputCheck(_FakeDevice, x)
    flag = check.flag(_Checking(), x.shape)
    assert flag is not None and flag[0] == 0
    check()  # the pass found nothing (flag 0): no isfinite of its own
    flag = InputCheck(_FakeDevice, x).flag(_Checking(), (2, 4))
    assert flag is None  # a cropped input is not all of x
    check = InputCheck(_FakeDevice, np.ones(4))
    check.flag(_Checking(), (4,))[0] = 1  # the pass saw NaN or Inf: the details from x
    with pytest.raises(ozfft.NonFiniteInputError, match=r"contains 0 non-finite"):
        check()
    assert InputCheck(_FakeDevice, np.arange(4)).flag(_Checking(), (4,)) is None  # integers


def test_input_check_parts_share_one_flag():
    """A split input (the chunks of an overlapped distributed transform): every part's
    first pass takes the same flag; a part that no flagged pass read falls back to
    isfinite of all of x."""
    from ozfft.fourier.input_check import InputCheck

    x = np.ones((4, 8))
    check = InputCheck(_FakeDevice, x)
    check.expect_part()
    first = check.flag(_Checking(), (2, 8))  # a part's shape: no whole-input requirement
    assert first is not None and check.flag(_Checking(), (2, 8)) is None  # one per part
    check.expect_part()
    assert check.flag(_Checking(), (2, 8)) is first
    first[0] = 1  # a part's pass saw NaN or Inf (x itself is finite here)
    with pytest.raises(ozfft.NonFiniteInputError, match=r"contains 0 non-finite"):
        check()

    x[3, 5] = np.inf
    check = InputCheck(_FakeDevice, x)
    check.expect_part()
    check.flag(_Checking(), (2, 8))
    check.expect_part()  # this part's first pass cannot take the flag: isfinite decides
    assert check.flag(object(), (2, 8)) is None
    with pytest.raises(ozfft.NonFiniteInputError, match=r"contains 1 .*Inf"):
        check()


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
    with pytest.raises(TypeError, match="x must be a real sequence"):  # scipy's words
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
    monkeypatch.setenv("OZFFT_PLAN_MEMORY", "50000")
    with pytest.raises(ozfft.PlanMemoryError, match=r"length 4096 needs \d+ bytes") as info:
        ozfft.fft(np.ones(4096), moduli=moduli)
    if moduli is None:
        assert info.value.needed_bytes == estimate_fixed_plan_bytes(4096)
    else:
        assert info.value.needed_bytes == estimate_stage_plan_bytes(4096, moduli)
    assert info.value.needed_bytes > 50000
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


ALL = C2C + REAL + INV_REAL


def _input_for(name, rng, shape=(6, 5, 8)):
    x = rng.standard_normal(shape)
    return x if name in REAL else x + 1j * rng.standard_normal(shape)


def _bits(a):
    return a.dtype, a.shape, a.tobytes()


# --- numpy 2: s with -1 and None, s without axes ------------------------------------


@pytest.mark.parametrize("name", ["fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn"])
def test_s_minus_one_is_the_axis_length(name, rng):
    x = _input_for(name, rng)
    got = getattr(ozfft, name)(x, s=(-1, 6), axes=(0, 2))
    _close(got, getattr(np.fft, name)(x, s=(-1, 6), axes=(0, 2)))
    same = getattr(ozfft, name)(x, s=(x.shape[0], 6), axes=(0, 2))
    assert _bits(got) == _bits(same)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn"])
def test_none_in_s_warns_and_means_the_default_as_numpy(name, rng):
    x = _input_for(name, rng)
    with pytest.warns(DeprecationWarning) as numpy_warning:
        want = getattr(np.fft, name)(x, s=(4, None), axes=(0, 2))
    with pytest.warns(DeprecationWarning) as ozfft_warning:
        got = getattr(ozfft, name)(x, s=(4, None), axes=(0, 2))
    _close(got, want)
    assert str(ozfft_warning[0].message) == str(numpy_warning[0].message)
    assert ozfft_warning[0].filename == __file__  # points at the caller, as numpy's does


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_s_without_axes_warns_as_numpy(name, rng):
    x = _input_for(name, rng)
    with pytest.warns(DeprecationWarning) as numpy_warning:
        want = getattr(np.fft, name)(x, s=(3, 6))
    with pytest.warns(DeprecationWarning) as ozfft_warning:
        got = getattr(ozfft, name)(x, s=(3, 6))
    _close(got, want)
    assert str(ozfft_warning[0].message) == str(numpy_warning[0].message)
    assert ozfft_warning[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(ozfft, name)(x, s=(3, 6), axes=(1, 2))  # no warning with axes


def test_bad_lengths_raise_numpys_error():
    x = np.ones((4, 4))
    for call in (
        lambda: ozfft.fftn(x, s=(0, 4), axes=(0, 1)),
        lambda: ozfft.fftn(x, s=(-2, 4), axes=(0, 1)),
        lambda: ozfft.irfft(np.ones(1)),
        lambda: ozfft.ifft([]),
    ):
        with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(-?\d+\)"):
            call()


# --- numpy 2: out= ------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_out_receives_the_result(name, rng):
    x = _input_for(name, rng)
    want = getattr(ozfft, name)(x)
    out = np.zeros_like(want)
    got = getattr(ozfft, name)(x, out=out)
    assert got is out
    assert _bits(got) == _bits(want)
    np.testing.assert_allclose(got, getattr(np.fft, name)(x), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
def test_out_in_place_and_overlapping_as_numpy(axis, rng):
    y = rng.standard_normal((20, 20)) + 1j * rng.standard_normal((20, 20))
    want = ozfft.fft(y, axis=axis)
    y1 = y.copy()
    assert ozfft.fft(y1, axis=axis, out=y1) is y1
    assert _bits(y1) == _bits(want)
    # the numpy test's overlapping cases: part of the input, crop/pad into it, transpose
    y2 = y.copy()
    sel = y2[5:] if axis == 0 else y2[:, 5:]
    out = y2[5:15] if axis == 0 else y2[:, 5:15]
    expected = ozfft.fft(sel.copy(), n=10, axis=axis)
    assert ozfft.fft(sel, n=10, axis=axis, out=out) is out
    assert np.array_equal(out, expected)
    rest = (y2[:5], y[:5]) if axis == 0 else (y2[:, :5], y[:, :5])
    assert np.array_equal(*rest)
    y3 = y.copy()
    assert ozfft.fft(y3, axis=axis, out=y3.T) is not None
    assert np.array_equal(y3.T, want)


def test_out_errors_as_numpy():
    x = np.arange(30.0)
    for fn in (np.fft.fft, ozfft.fft):
        with pytest.raises(TypeError, match="must be of ArrayType"):
            fn(x, out="")
        with pytest.raises(ValueError, match="has wrong shape"):
            fn(x, out=np.zeros_like(x).reshape(5, -1))
        with pytest.raises(TypeError, match="Cannot cast"):
            fn(x, out=np.zeros_like(x, dtype=float))
    y = np.ones((10, 5, 6), complex)
    with pytest.raises(ValueError, match="has wrong shape"):
        ozfft.fftn(y, out=np.zeros_like(y), s=(3, 3, 3), axes=(0, 1, 2))
    with pytest.raises(TypeError, match="Cannot cast"):
        ozfft.irfft(y, out=np.zeros((10, 5, 10), np.int64))


def test_out_casts_same_kind_as_numpy(rng):
    x = rng.standard_normal(16)
    out = np.zeros(16, np.complex64)
    assert ozfft.fft(x, out=out) is out
    assert np.array_equal(out, ozfft.fft(x).astype(np.complex64))
    assert np.fft.fft(x, out=np.zeros(16, np.complex64)).dtype == np.complex64  # numpy too


# --- scipy: workers, plan ------------------------------------------------------------


def _raised(call):
    try:
        call()
    except Exception as exc:
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("workers", [1, 2, -1, -os.cpu_count()])
def test_valid_workers_change_nothing(workers, rng):
    x = rng.standard_normal((4, 30))
    assert _bits(ozfft.rfft(x, workers=workers)) == _bits(ozfft.rfft(x))


@pytest.mark.parametrize("workers", [0, -os.cpu_count() - 1])
def test_invalid_workers_as_scipy(workers):
    x = np.ones(8)
    with scipy.fft.set_backend("scipy", only=True):
        want = _raised(lambda: scipy.fft.fft(x, workers=workers))
    assert want is not None and want[0] is ValueError
    assert _raised(lambda: ozfft.fft(x, workers=workers)) == want


@pytest.mark.parametrize("plan", ["foo", object()])
def test_foreign_plans_raise_as_scipy(plan):
    with pytest.raises(NotImplementedError, match="precomputed plan"):
        ozfft.fft(np.ones(8), plan=plan)
    with scipy.fft.set_backend("scipy", only=True):
        with pytest.raises(NotImplementedError, match="precomputed plan"):
            scipy.fft.fft(np.ones(8), plan=plan)


@pytest.mark.parametrize(
    "name, kind, inverse, axes",
    [
        ("fftn", "c2c", False, (0, 1)),
        ("ifftn", "c2c", True, (1, 0)),
        ("rfftn", "r2c", False, (0, 1)),
        ("irfftn", "c2r", True, (0, 1)),
    ],
)
def test_ozfft_plan_is_used(name, kind, inverse, axes, rng):
    x = _input_for("rfftn" if kind == "r2c" else "fftn", rng, (12, 10))
    plan = ozfft.get_fft_plan(x, axes, kind=kind, precision="fp32")
    got = getattr(ozfft, name)(x, axes=axes, plan=plan)
    assert _bits(got) == _bits(getattr(ozfft, name)(x, axes=axes, precision="fp32"))
    assert _bits(got) == _bits(plan.execute(x, inverse=inverse))
    assert _bits(got) != _bits(getattr(ozfft, name)(x, axes=axes))  # fp32 lines, not fp64


def test_ozfft_plan_must_fit_the_call(rng):
    x = rng.standard_normal((12, 10)) + 0j
    plan = ozfft.get_fft_plan(x, (0, 1))
    assert _bits(ozfft.fft2(x, plan=plan)) == _bits(ozfft.fft2(x))
    with pytest.raises(ValueError, match="shape"):
        ozfft.fft2(x[:6], plan=plan)
    with pytest.raises(ValueError, match="dtype"):
        ozfft.fft2(x.real, plan=plan)
    with pytest.raises(ValueError, match="axes"):
        ozfft.fft2(x, axes=(1, 0), plan=plan)
    with pytest.raises(ValueError, match="the plan's s"):
        ozfft.fft2(x, s=(12, 8), plan=plan)
    with pytest.raises(ValueError, match="the plan's kind"):
        ozfft.irfft2(x, s=(12, 10), plan=plan)
    row = ozfft.get_fft_plan(x, -1)
    assert _bits(ozfft.fft(x, plan=row)) == _bits(ozfft.fft(x))


# --- empty axes, 0-d input, byte order -----------------------------------------------


@pytest.mark.parametrize("name", ["fftn", "ifftn", "fft2", "ifft2"])
@pytest.mark.parametrize(
    "dtype, float_dtype",
    [
        (np.int64, np.float64),
        (np.bool_, np.float64),
        (np.float16, np.float32),
        (np.float32, np.float32),
        (">f8", np.float64),
        (np.complex64, np.complex64),
    ],
)
def test_no_axes_gives_a_float_copy(name, dtype, float_dtype):
    x = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    got = getattr(ozfft, name)(x, axes=())
    want = scipy.fft.fftn(x, axes=())  # scipy (and numpy) return x itself
    assert got.dtype == float_dtype and got.dtype.isnative
    assert np.array_equal(got, want) and not np.shares_memory(got, x)
    zero_d = getattr(ozfft, name)(x[0, 0], axes=()) if name.endswith("2") else None
    if zero_d is not None:
        assert zero_d.shape == () and zero_d.dtype == float_dtype


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
def test_zero_d_input(dtype):
    x = np.array(3, dtype)
    got = ozfft.fftn(x)
    assert got.shape == () and got == 3 and got.dtype.kind in "fc"
    assert np.array_equal(got, scipy.fft.fftn(x)) and np.array_equal(got, np.fft.fftn(x))
    with pytest.raises(IndexError):  # numpy and scipy raise IndexError too (AxisError is both)
        ozfft.fft(x)
    if dtype is not np.complex128:
        for name in ("rfftn", "irfftn"):
            with pytest.raises(ValueError, match="at least 1 axis must be transformed"):
                getattr(ozfft, name)(x)
            with pytest.raises(ValueError, match="at least 1 axis must be transformed"):
                getattr(scipy.fft, name)(x)


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("fft", ">f4"),
        ("fft", ">c8"),
        ("fft", ">f8"),
        ("fft", ">c16"),
        ("rfft", ">f4"),
        ("irfft", ">f4"),
        ("irfft", ">c8"),
        ("fftn", ">i4"),
    ],
)
def test_byte_order_never_changes_the_result(name, dtype, rng):
    x = (rng.standard_normal(12) * 8).astype(np.dtype(dtype).newbyteorder("="))
    swapped = x.astype(dtype)
    got = getattr(ozfft, name)(swapped)
    assert _bits(got) == _bits(getattr(ozfft, name)(x))
    assert got.dtype == getattr(np.fft, name)(swapped).dtype
    assert got.dtype == getattr(scipy.fft, name)(swapped).dtype


# --- docstrings and docs/api.md -------------------------------------------------------

PUBLIC = [name for name in api.__all__ if callable(getattr(api, name))]
SECTIONS = ("Parameters", "Returns", "Raises", "Notes", "Examples")


@pytest.mark.parametrize("name", PUBLIC)
def test_docstrings_are_complete(name):
    fn = getattr(api, name)
    doc = inspect.getdoc(fn)
    assert "%(" not in doc
    for section in SECTIONS:
        assert f"\n{section}\n{'-' * len(section)}\n" in doc, (name, section)
    documented = re.findall(r"^(\w+) : ", doc.split("Returns\n")[0], flags=re.M)
    assert documented == list(inspect.signature(fn).parameters), name
    for needle in ("NonFiniteInputError", "Accuracy", ">>> "):
        assert needle in doc


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for name in PUBLIC for t in finder.find(getattr(api, name), name) if t.examples]
    assert len(tests) == len(PUBLIC)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"
BEGIN = "<!-- fft-api: begin (generated by `python tests/test_fft_api.py`) -->"
END = "<!-- fft-api: end -->"


def _markdown(doc: str) -> str:
    """A numpy-style docstring as markdown: sections as bold headings, parameters as a
    list, examples as a code block."""
    lines = doc.splitlines()
    out, section, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and set(lines[i + 1]) == {"-"} and line.strip() in SECTIONS:
            section = line.strip()
            while out and not out[-1].strip():
                out.pop()
            out += ["", f"**{section}**", ""]
            if section == "Examples":
                out.append("```python")
            i += 2
            continue
        if section in ("Parameters", "Returns", "Raises") and line and not line[0].isspace():
            name, _, kind = line.partition(" : ")
            body = []
            while i + 1 < len(lines) and lines[i + 1].startswith("    "):
                i += 1
                body.append(lines[i].strip())
            head = f"- `{name}`" + (f" (*{kind}*)" if kind else "")
            out.append(f"{head}: {' '.join(body)}")
        elif section == "Examples":
            out.append(line)
        else:
            out.append(line)
        i += 1
    if section == "Examples":
        while out and not out[-1].strip():
            out.pop()
        out.append("```")
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", "\n".join(out))


def render_fft_api() -> str:
    parts = [BEGIN, ""]
    for name in PUBLIC:
        fn = getattr(api, name)
        signature = str(inspect.signature(fn))
        parts += [f"### `ozfft.{name}`", "", "```python", f"ozfft.{name}{signature}", "```", ""]
        parts += [_markdown(inspect.getdoc(fn)), ""]
    parts.append(END)
    return "\n".join(parts)


def _fft_section(text: str) -> str:
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    return text[start:stop]


def test_docs_api_md_matches_the_docstrings():
    assert _fft_section(DOCS.read_text()) == render_fft_api(), (
        "docs/api.md is out of date: run `python tests/test_fft_api.py`"
    )


if __name__ == "__main__":  # rewrite the generated FFT section of docs/api.md
    text = DOCS.read_text()
    DOCS.write_text(text.replace(_fft_section(text), render_fft_api()))
    print(f"wrote {DOCS}", file=sys.stderr)
