"""The Hermitian transforms, frequency/shift helpers and Plan objects on cupy arrays:
cupy in, cupy out, bit-identical to the NumPy engine (needs a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

NORMS = [None, "ortho", "forward"]


def _pair(rng, shape, real=False):
    x = rng.standard_normal(shape)
    if not real:
        x = x + 1j * rng.standard_normal(shape)
    return x, cp.asarray(x)


def _same(got, want):
    assert isinstance(got, cp.ndarray)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(cp.asnumpy(got), want)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("m, n", [(9, None), (9, 17), (33, 64), (513, None), (65, 2000)])
def test_hfft_ihfft_bitwise(m, n, norm, rng):
    x, d = _pair(rng, (5, m))
    _same(ozfft.hfft(d, n, norm=norm), ozfft.hfft(x, n, norm=norm))
    xr, dr = _pair(rng, (5, m), real=True)
    _same(ozfft.ihfft(dr, n, norm=norm), ozfft.ihfft(xr, n, norm=norm))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "shape, s, axes",
    [((12, 10, 14), None, None), ((7, 11, 13), (8, 20), (0, 2)), ((16, 30), None, (1, 0))],
)
def test_hfftn_ihfftn_bitwise(shape, s, axes, norm, rng):
    x, d = _pair(rng, shape)
    _same(ozfft.hfftn(d, s, axes, norm=norm), ozfft.hfftn(x, s, axes, norm=norm))
    xr, dr = _pair(rng, shape, real=True)
    _same(ozfft.ihfftn(dr, s, axes, norm=norm), ozfft.ihfftn(xr, s, axes, norm=norm))
    _same(ozfft.hfft2(d, norm=norm), ozfft.hfft2(x, norm=norm))
    _same(ozfft.ihfft2(dr, norm=norm), ozfft.ihfft2(xr, norm=norm))


def test_hermitian_fp32_and_moduli_bitwise(rng):
    x, d = _pair(rng, (6, 40))
    kw = {"precision": "fp32"}
    _same(ozfft.hfft(d.astype(cp.complex64), **kw), ozfft.hfft(x.astype(np.complex64), **kw))
    xr, dr = _pair(rng, (6, 40), real=True)
    _same(ozfft.ihfft(dr, moduli=8), ozfft.ihfft(xr, moduli=8))


@pytest.mark.parametrize("n", [1, 8, 9, 1000])
def test_freq_helpers_on_cupy(n):
    for ours, theirs in ((ozfft.fftfreq, np.fft.fftfreq), (ozfft.rfftfreq, np.fft.rfftfreq)):
        _same(ours(n, 0.1, xp=cp), theirs(n, 0.1))
        got = ours(n, 0.1, xp=cp, device=cp.cuda.Device(0))
        assert got.device.id == 0
        _same(got, theirs(n, 0.1))


def test_shifts_on_cupy(rng):
    x, d = _pair(rng, (5, 6, 7))
    for axes in (None, 0, (0, 2), -1):
        _same(ozfft.fftshift(d, axes), np.fft.fftshift(x, axes))
        _same(ozfft.ifftshift(d, axes), np.fft.ifftshift(x, axes))


@pytest.mark.parametrize(
    "kind, shape, axes",
    [("c2c", (12, 10, 14), None), ("r2c", (16, 130), (1,)), ("c2r", (9, 33), (0, 1))],
)
def test_plan_execute_bitwise(kind, shape, axes, rng):
    x, d = _pair(rng, shape, real=kind == "r2c")
    plan = ozfft.get_fft_plan(d, axes, kind=kind)  # also prepares the CUDA executors
    host_plan = ozfft.get_fft_plan(x, axes, kind=kind)
    for inverse in (False, True):
        for norm in NORMS:
            _same(
                plan.execute(d, inverse=inverse, norm=norm),
                host_plan.execute(x, inverse=inverse, norm=norm),
            )
