"""Error paths not covered elsewhere: each raises a specific, clearly worded error."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft import config
from ozfft.engines import NumpyEngine
from ozfft.engines.cuda import sources
from ozfft.engines.numpy.exact import exact_int_matmul
from ozfft.fourier.roots import fixed_roots
from ozfft.ozaki.residue_system import int8_system


@pytest.mark.parametrize(
    "name, reader",
    [("OZFFT_PLAN_MEMORY", config.plan_memory_limit), ("OZFFT_PLAN_CACHE", config.plan_cache_size)],
)
def test_plan_env_must_be_positive(monkeypatch, name, reader):
    monkeypatch.setenv(name, "0")
    with pytest.raises(ValueError, match=f"{name} must be a positive integer, not 0"):
        reader()


def test_root_bits_range():
    with pytest.raises(ValueError, match=r"bits must be in \[0, 61\], got 62"):
        fixed_roots(8, 62)


def test_exact_matmul_refuses_inexact_accumulation():
    x = np.ones((1, 4), np.float32)
    with pytest.raises(ValueError, match="k = 4 is too large for an exact float64"):
        exact_int_matmul(x, x.T, 2**52)


def test_fft_moduli_type():
    with pytest.raises(TypeError, match="moduli must be an int between 2 and 20 or None"):
        ozfft.fft(np.ones(4), moduli=8.0)


def test_mixed_residue_stacks_rejected():
    eng = NumpyEngine()
    mods = int8_system(4)
    real = eng.residues(np.ones((2, 3)), np.zeros(2, np.int64), mods)
    cplx = eng.residues(np.ones((2, 3), complex), np.zeros(2, np.int64), mods)
    with pytest.raises(ValueError, match="both residue stacks must be real or both complex"):
        eng.modular_products(real, cplx, mods)


def test_missing_kernel_sources(monkeypatch, tmp_path):
    sources.kernel_dir.cache_clear()
    monkeypatch.setattr(sources, "_PACKAGE", tmp_path / "ozfft")
    try:
        with pytest.raises(FileNotFoundError, match="CUDA kernel sources were not found"):
            sources.kernel_dir()
    finally:
        sources.kernel_dir.cache_clear()


def test_unknown_rounding_of_the_scaled_integers_is_refused():
    """The scaled integers' rule is "trunc" or "nearest": anything else is an error that
    names both, from the rule, from an engine's residues and from the kernel macros."""
    from ozfft.engines.cuda.constants import rounding_macros
    from ozfft.ozaki.scaling import scaled_integers

    x = np.ones((2, 3))
    shift = np.zeros((2, 1), np.int32)
    with pytest.raises(ValueError, match=r"rounding is one of \('trunc', 'nearest'\), not 'up'"):
        scaled_integers(np, x, shift, "up")
    with pytest.raises(ValueError, match=r"rounding is one of .*not 'round'"):
        NumpyEngine().residues(x, np.zeros(2, np.int64), int8_system(4), "round")
    with pytest.raises(ValueError, match=r"rounding is one of .*not 'ceil'"):
        rounding_macros("ceil")


def test_plan_allocation_failures_on_a_device_state_the_bytes():
    """An allocation failure of the accuracy plan's own work on a device array library
    becomes DeviceMemoryError with a lower estimate of the bytes; the NumPy engine's
    MemoryError and an engine's own DeviceMemoryError pass through unchanged."""
    import types

    from ozfft.scheme import gemm as scheme

    class _Device:  # an engine whose arrays are not numpy's
        xp = types.SimpleNamespace(iscomplexobj=np.iscomplexobj)

    a, bt = np.ones((3, 5), np.complex128), np.ones((4, 5), np.complex128)
    with pytest.raises(ozfft.DeviceMemoryError, match=r"3x5x4 product.*needs \d+ bytes") as info:
        with scheme._plan_memory(_Device(), a, bt.shape[-2]):
            raise MemoryError("out of device memory")
    assert info.value.needed_bytes >= 8 * 4 * scheme._BLOCK_ENTRIES + 16 * (3 + 4) * 5
    # a stack's estimate counts every item's rows (not one item's): 1000 items of 64 x 64
    stack = np.ones((1000, 64, 64), np.complex128)
    with pytest.raises(ozfft.DeviceMemoryError, match=r"stack of 1000 64x64x64 products") as many:
        with scheme._plan_memory(_Device(), stack, 64):
            raise MemoryError("out of device memory")
    assert many.value.needed_bytes >= 8 * 4 * scheme._BLOCK_ENTRIES + 16 * 1000 * (64 + 64) * 64
    own = ozfft.DeviceMemoryError("the product", 123)
    with pytest.raises(ozfft.DeviceMemoryError) as same:
        with scheme._plan_memory(_Device(), a, bt.shape[-2]):
            raise own
    assert same.value is own
    with pytest.raises(MemoryError) as plain:
        with scheme._plan_memory(NumpyEngine(), a, bt.shape[-2]):
            raise MemoryError("host")
    assert type(plain.value) is MemoryError
