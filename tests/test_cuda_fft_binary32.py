"""float32/complex64 FFTs on cupy arrays whose inputs or results are binary32 subnormals:
the NumPy engine's bits (cupy's own conversions, built with ``-ftz=true``, flushed them to
zero; the entry points convert through ``Engine.astype``). Needs a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

F32 = np.finfo(np.float32)
TINY = F32.smallest_subnormal  # 2**-149


def _reals(rng, n):
    """Four lines of binary32 values: subnormals (multiples of 2**-149), values about
    the smallest normal (transforms scaled by 1/n fall below it), an impulse of 5 * 2**-149
    (a spectrum of subnormals of every phase) and a constant subnormal line (one subnormal
    bin with ``norm="forward"``)."""
    x = np.zeros((4, n))
    x[0] = TINY * rng.integers(-50, 51, n)
    x[1] = F32.tiny * rng.uniform(-4, 4, n)
    x[2, 3 % n] = 5 * TINY
    x[3] = 2.0**-140
    return x.astype(np.float32)


def _input(rng, n, dtype):
    x = _reals(rng, n)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _reals(rng, n)[::-1]
    return x.astype(dtype)


def _subnormals(a) -> int:
    """How many binary32 parts of ``a`` are subnormal."""
    parts = np.ascontiguousarray(a).view(np.float32)
    return int(np.count_nonzero((parts != 0) & (np.abs(parts) < F32.tiny)))


def _same_bits(got, want):
    """``got`` (cupy) is ``want`` (numpy) bit for bit, its nonzeros nonzero."""
    assert isinstance(got, cp.ndarray)
    assert got.dtype == want.dtype and got.shape == want.shape
    got = cp.asnumpy(got)
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(got) == np.count_nonzero(want)
    np.testing.assert_array_equal(
        np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8)
    )


@pytest.mark.parametrize("n", [16, 97])  # a one-pass fixed-point plan; Bluestein
@pytest.mark.parametrize("kw", [{}, {"moduli": 9}, {"norm": "forward"}, {"norm": "ortho"}])
@pytest.mark.parametrize("dtype", [np.complex64, np.float32])
def test_fft_ifft_binary32_subnormals(n, kw, dtype, rng):
    """fft and ifft of float32/complex64 lines of subnormals and of values whose transforms
    are subnormal: complex64 results equal to the NumPy engine's, bit for bit."""
    x = _input(rng, n, dtype)
    assert _subnormals(x) > 0
    for name in ("fft", "ifft"):
        want = getattr(ozfft, name)(x, **kw)
        assert want.dtype == np.complex64 and _subnormals(want) > 0
        _same_bits(getattr(ozfft, name)(cp.asarray(x), **kw), want)


@pytest.mark.parametrize("n", [16, 97])  # the carried real-input pass; the complex route
@pytest.mark.parametrize("kw", [{}, {"moduli": 9}, {"norm": "forward"}])
def test_rfft_irfft_binary32_subnormals(n, kw, rng):
    """rfft of float32 subnormal lines (the carried pass reads them as float64) and irfft
    of complex64 and float32 half spectra of subnormals: the NumPy engine's bits."""
    x = _input(rng, n, np.float32)
    want = ozfft.rfft(x, **kw)
    assert want.dtype == np.complex64 and _subnormals(want) > 0
    _same_bits(ozfft.rfft(cp.asarray(x), **kw), want)
    for spec in (_input(rng, n // 2 + 1, np.complex64), x[:, : n // 2 + 1]):
        assert _subnormals(spec) > 0
        want = ozfft.irfft(spec, n, **kw)
        assert want.dtype == np.float32 and _subnormals(want) > 0
        _same_bits(ozfft.irfft(cp.asarray(spec), n, **kw), want)


@pytest.mark.parametrize("shape", [(4, 6, 16), (4, 5, 97)])
@pytest.mark.parametrize("norm", [None, "forward"])
def test_nd_transforms_binary32_subnormals(shape, norm, rng):
    """fftn, ifftn, rfftn (its first pass carried into the next) and irfftn over the last
    two axes of float32/complex64 subnormal data: the NumPy engine's bits."""
    axes = (-2, -1)
    x = np.stack([_input(rng, shape[-1], np.complex64) for _ in range(shape[1])], axis=1)
    for name in ("fftn", "ifftn"):
        want = getattr(ozfft, name)(x, axes=axes, norm=norm)
        assert _subnormals(want) > 0
        _same_bits(getattr(ozfft, name)(cp.asarray(x), axes=axes, norm=norm), want)
    xr = np.ascontiguousarray(x.real)
    want = ozfft.rfftn(xr, axes=axes, norm=norm)
    assert want.dtype == np.complex64 and _subnormals(want) > 0
    _same_bits(ozfft.rfftn(cp.asarray(xr), axes=axes, norm=norm), want)
    s = shape[-2:]
    spec = x[..., : shape[-1] // 2 + 1]
    want = ozfft.irfftn(spec, s=s, axes=axes, norm=norm)
    assert want.dtype == np.float32 and _subnormals(want) > 0
    _same_bits(ozfft.irfftn(cp.asarray(spec), s=s, axes=axes, norm=norm), want)


@pytest.mark.parametrize("n", [16, 97])
@pytest.mark.parametrize("norm", [None, "forward"])
def test_hermitian_binary32_subnormals(n, norm, rng):
    """hfft of complex64 subnormal half spectra (conjugated after widening) and ihfft of
    float32 subnormal lines (conjugated before narrowing), 1-D and n-D: the NumPy
    engine's bits."""
    spec = _input(rng, n // 2 + 1, np.complex64)
    want = ozfft.hfft(spec, n, norm=norm)
    assert want.dtype == np.float32 and _subnormals(want) > 0
    _same_bits(ozfft.hfft(cp.asarray(spec), n, norm=norm), want)
    want = ozfft.hfftn(spec, (4, n), (0, 1), norm=norm)
    assert _subnormals(want) > 0
    _same_bits(ozfft.hfftn(cp.asarray(spec), (4, n), (0, 1), norm=norm), want)
    x = _input(rng, n, np.float32)
    want = ozfft.ihfft(x, norm=norm)
    assert want.dtype == np.complex64 and _subnormals(want) > 0
    _same_bits(ozfft.ihfft(cp.asarray(x), norm=norm), want)
    want = ozfft.ihfftn(x, norm=norm)
    assert _subnormals(want) > 0
    _same_bits(ozfft.ihfftn(cp.asarray(x), norm=norm), want)


def test_out_of_another_width_binary32_subnormals(rng):
    """``out=`` of another width than the result: complex128 results narrowed into a
    complex64 ``out``, float32/complex64 results widened into a float64/complex128 one,
    and a float32 result into a complex64 one: the NumPy engine's bits."""
    x = _input(rng, 16, np.complex64)
    x128 = x.astype(np.complex128) * 2.0**-3  # results below binary32's normals
    want = ozfft.fft(x128, out=np.empty(x.shape, np.complex64))
    assert _subnormals(want) > 0
    _same_bits(ozfft.fft(cp.asarray(x128), out=cp.empty(x.shape, cp.complex64)), want)
    want = ozfft.ifft(x, out=np.empty(x.shape, np.complex128))
    assert _subnormals(want.astype(np.complex64)) > 0
    _same_bits(ozfft.ifft(cp.asarray(x), out=cp.empty(x.shape, cp.complex128)), want)
    spec = x[:, :9]
    for dtype in (np.float64, np.complex64):
        want = ozfft.irfft(spec, 16, out=np.empty((4, 16), dtype))
        assert np.count_nonzero(want) > 0
        _same_bits(ozfft.irfft(cp.asarray(spec), 16, out=cp.empty((4, 16), dtype)), want)


def test_strided_and_zero_axis_inputs_binary32_subnormals(rng):
    """A strided complex64 view and a transform over no axes (a float copy) keep binary32
    subnormals too."""
    x = _input(rng, 32, np.complex64)
    want = ozfft.fft(x[:, ::2])
    _same_bits(ozfft.fft(cp.asarray(x)[:, ::2]), want)
    want = ozfft.fftn(x, axes=())
    assert _subnormals(want) > 0
    _same_bits(ozfft.fftn(cp.asarray(x), axes=()), want)
