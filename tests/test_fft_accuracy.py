"""FFT accuracy against pyfftw on clongdouble (random complex normal inputs):
precision="fp64" within 1.5x numpy's own float64 error, "fp32" within 2x numpy's
complex64 error (relative L2)."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

import ozfft

pyfftw_fft = pytest.importorskip("pyfftw.interfaces.numpy_fft")


def _rel_l2(got, ref) -> float:
    return float(np.linalg.norm((got - ref).ravel()) / np.linalg.norm(ref.ravel()))


def _input(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("shape", [(32, 32, 32), (12, 10, 14), (7, 11, 13), (2, 3, 5)])
def test_fftn_fp64_within_numpy(shape, rng):
    x = _input(rng, shape)
    ref = pyfftw_fft.fftn(x.astype(np.clongdouble))
    ours = _rel_l2(ozfft.fftn(x), ref)
    assert ours <= 1.5 * _rel_l2(np.fft.fftn(x), ref), ours


@pytest.mark.parametrize(
    "n",
    [1, 2, 3, 5, 16, 64, 65, 97, 100, 127, 128, 257, 1000, 1024, 1042, 2187, 4096, 4099, 10007],
)
def test_fft_1d_fp64_within_numpy(n, rng):
    x = _input(rng, (3, n))
    ref = pyfftw_fft.fft(x.astype(np.clongdouble))
    ours = _rel_l2(ozfft.fft(x), ref)
    assert ours <= 1.5 * _rel_l2(np.fft.fft(x), ref) + 1e-300, ours


@pytest.mark.slow
@pytest.mark.parametrize("n", [2**16, 65521, 3**10])
def test_fft_1d_long_fp64_within_numpy(n, rng):
    x = _input(rng, (1, n))
    ref = pyfftw_fft.fft(x.astype(np.clongdouble))
    assert _rel_l2(ozfft.fft(x), ref) <= 1.5 * _rel_l2(np.fft.fft(x), ref)


@pytest.mark.parametrize("n", [2048, 4096, 3 * 4096, 2**16, 4099, 65537])
def test_multipass_and_bluestein_fp64_not_worse_than_numpy(n, rng):
    """Four-step fixed-point plans (2048 .. 2**16) and Bluestein around them (4099,
    65537): relative L2 error at most numpy's."""
    x = _input(rng, (2, n))
    ref = pyfftw_fft.fft(x.astype(np.clongdouble))
    ours = _rel_l2(ozfft.fft(x), ref)
    assert ours <= _rel_l2(np.fft.fft(x), ref), ours


@pytest.mark.slow
@pytest.mark.parametrize("n", [2**20, 999983])
def test_long_fixed_fp64_not_worse_than_numpy(n, rng, capsys):
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    ozfft.clear_plan_cache()
    start = time.perf_counter()
    plan = get_plan(n, FFTOptions())
    built = time.perf_counter() - start
    x = _input(rng, (1, n))
    start = time.perf_counter()
    got = ozfft.fft(x)
    took = time.perf_counter() - start
    ref = pyfftw_fft.fft(x.astype(np.clongdouble))
    ours, theirs = _rel_l2(got, ref), _rel_l2(np.fft.fft(x), ref)
    with capsys.disabled():
        print(
            f"\nn={n}: plan {built:.2f} s ({plan.pass_count} passes, {plan.nbytes} bytes), "
            f"fft {took:.2f} s, relL2 {ours:.3e} (numpy {theirs:.3e})"
        )
    assert ours <= theirs


@pytest.mark.parametrize("shape", [(32, 32, 32), (12, 10, 14), (7, 11, 13)])
def test_fftn_fp32_within_numpy_complex64(shape, rng):
    x = _input(rng, shape, np.complex64)
    ref = pyfftw_fft.fftn(x.astype(np.clongdouble))
    got = ozfft.fftn(x, precision="fp32")
    assert got.dtype == np.complex64
    assert _rel_l2(got, ref) <= 2.0 * _rel_l2(np.fft.fftn(x), ref)


@pytest.mark.parametrize("n", [64, 1000, 257])
def test_fft_1d_fp32_within_numpy_complex64(n, rng):
    x = _input(rng, (4, n), np.complex64)
    ref = pyfftw_fft.fft(x.astype(np.clongdouble))
    assert _rel_l2(ozfft.fft(x, precision="fp32"), ref) <= 2.0 * _rel_l2(np.fft.fft(x), ref)


@pytest.mark.parametrize("fn", ["ifftn", "rfftn", "irfftn"])
def test_other_transforms_fp64_within_numpy(fn, rng):
    shape = (12, 10, 14)
    x = _input(rng, shape)
    if fn == "rfftn":
        x = x.real.copy()
    if fn == "irfftn":
        x = np.fft.rfftn(rng.standard_normal(shape))
    ref = getattr(pyfftw_fft, fn)(x.astype(np.clongdouble if fn != "rfftn" else np.longdouble))
    ours = _rel_l2(getattr(ozfft, fn)(x), ref)
    assert ours <= 1.5 * _rel_l2(getattr(np.fft, fn)(x), ref), ours


def test_more_moduli_more_accurate(rng):
    x = _input(rng, (256,))
    ref = pyfftw_fft.fft(x.astype(np.clongdouble))
    errors = [_rel_l2(ozfft.fft(x, moduli=m), ref) for m in (6, 8, 10, 12, 16)]
    assert all(b <= a for a, b in itertools.pairwise(errors)), errors
    assert errors[-1] < 1e-16 < 1e-8 < errors[0]
