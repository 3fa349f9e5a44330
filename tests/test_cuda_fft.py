"""CUDA FFT: bit-identical to the NumPy engine (needs a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")


def _pair(rng, shape, real=False):
    x = rng.standard_normal(shape)
    if not real:
        x = x + 1j * rng.standard_normal(shape)
    return x, cp.asarray(x)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 65, 97, 128, 512, 1000, 1042, 4096])
def test_fft_1d_bitwise(n, rng):
    x, d = _pair(rng, (3, n))
    for name in ("fft", "ifft"):
        got = getattr(ozfft, name)(d)
        assert isinstance(got, cp.ndarray)
        np.testing.assert_array_equal(cp.asnumpy(got), getattr(ozfft, name)(x))


@pytest.mark.parametrize("shape", [(12, 10, 14), (7, 11, 13), (32, 32, 32), (5, 130)])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fftn_family_bitwise(shape, norm, rng):
    x, d = _pair(rng, shape)
    for name in ("fftn", "ifftn"):
        np.testing.assert_array_equal(
            cp.asnumpy(getattr(ozfft, name)(d, norm=norm)), getattr(ozfft, name)(x, norm=norm)
        )
    xr, dr = _pair(rng, shape, real=True)
    spec = ozfft.rfftn(xr, norm=norm)
    np.testing.assert_array_equal(cp.asnumpy(ozfft.rfftn(dr, norm=norm)), spec)
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.irfftn(cp.asarray(spec), s=shape, norm=norm)),
        ozfft.irfftn(spec, s=shape, norm=norm),
    )


def test_fp32_and_axes(rng):
    x, d = _pair(rng, (16, 24, 6))
    kw = {"axes": (0, 1), "s": (20, 24), "precision": "fp32"}
    got = ozfft.fftn(d.astype(cp.complex64), **kw)
    assert got.dtype == cp.complex64
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.fftn(x.astype(np.complex64), **kw))


def test_gpu_non_finite():
    d = cp.ones(16, complex)
    d[2] = cp.inf
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'x'.*Inf"):
        ozfft.fft(d)
