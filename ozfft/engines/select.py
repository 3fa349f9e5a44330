"""Pick the engine that owns the operands (numpy -> NumpyEngine, cupy -> CUDA engine), and
the arithmetic of its Phase A (``phase_a``: ``"int8"``, ``"fp8"``, ``"auto"``)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .. import config
from ..errors import DeviceUnavailableError
from .base import (
    AUTO_PHASE_A,
    FP8_MIN_COMPUTE_CAPABILITY,
    Engine,
    _check_phase_a_choice,
    auto_phase_a,
    check_fp8_tensor_cores,
    compute_capability,
    parse_compute_capability,
    phase_a_for_device,
)
from .numpy import NumpyEngine

__all__ = [
    "AUTO_PHASE_A",
    "FP8_MIN_COMPUTE_CAPABILITY",
    "array_module_name",
    "auto_phase_a",
    "best_engine_name",
    "check_fp8_tensor_cores",
    "compute_capability",
    "cuda_engine",
    "describe_engines",
    "engine_for",
    "gpu_name",
    "numpy_engine",
    "parse_compute_capability",
    "phase_a_for_device",
    "resolve_phase_a",
]

_NUMPY_ENGINE = NumpyEngine()


def array_module_name(x: Any) -> str:
    """``"numpy"``, ``"cupy"`` or the top-level module of ``type(x)``."""
    if isinstance(x, np.ndarray | np.generic):
        return "numpy"
    return type(x).__module__.split(".", 1)[0]


def engine_for(*arrays: Any) -> Engine:
    """The engine for these operands; mixing numpy and cupy arrays is an error."""
    kinds = {array_module_name(x) for x in arrays}
    if "cupy" in kinds:
        if kinds != {"cupy"}:
            raise TypeError(
                "operands mix cupy and host arrays; move them to one device first "
                "(cupy.asarray / cupy.asnumpy)"
            )
        return cuda_engine()
    return _NUMPY_ENGINE


def numpy_engine() -> Engine:
    """The (stateless, shared) NumPy engine."""
    return _NUMPY_ENGINE


@cache
def cuda_engine() -> Engine:
    """The CUDA engine; raises :class:`DeviceUnavailableError` saying what is missing."""
    try:
        import cupy
    except ImportError as exc:
        raise DeviceUnavailableError(
            "the CUDA engine needs cupy; install it with `pip install 'ozfft[cuda]'`"
        ) from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise DeviceUnavailableError(f"no usable CUDA GPU: {exc}") from exc
    if count < 1:
        raise DeviceUnavailableError("no CUDA GPU is visible to cupy")
    from .cuda.compiler import _require_cuda_core

    _require_cuda_core()
    from .cuda import CudaEngine

    return CudaEngine()


def gpu_name(device_id: int = 0) -> str | None:
    """Name of CUDA device ``device_id`` as cupy reports it, or None without one."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() <= device_id:
            return None
        name = cupy.cuda.runtime.getDeviceProperties(device_id)["name"]
    except Exception:
        return None
    return name.decode() if isinstance(name, bytes) else str(name)


def best_engine_name() -> str:
    """``"cuda"`` when a GPU, cupy and cuda-python are present, else ``"numpy"``.

    ``OZFFT_ENGINE`` forces one; forcing ``cuda`` without a GPU raises
    :class:`DeviceUnavailableError` saying what is missing.
    """
    forced = config.forced_engine()
    if forced == "numpy":
        return "numpy"
    try:
        cuda_engine()
    except DeviceUnavailableError:
        if forced == "cuda":
            raise
        return "numpy"
    return "cuda"


def describe_engines() -> str:
    """One line: which engine runs and what hardware was seen."""
    gpu = gpu_name()
    seen = f"GPU: {gpu}" if gpu else "no GPU seen"
    name = best_engine_name()
    what = "INT8 tensor cores via cuBLAS + NVRTC kernels" if name == "cuda" else "exact, CPU"
    return f"engine: {name} ({what}); {seen}"


# -- Phase A: "int8", "fp8" or "auto" (the table and the device check: engines/base.py) --


def resolve_phase_a(phase_a: str | None, engine: Engine, *, fp8_runs: bool = True) -> str:
    """The one place ``phase_a`` is resolved: ``"int8"`` or ``"fp8"`` for a call on
    ``engine``. ``None`` means ``OZFFT_PHASE_A`` (default ``"auto"``); ``"auto"`` is INT8
    on the NumPy engine (the FP8 digit products are ~3-4x the work there) and follows
    :data:`AUTO_PHASE_A` on a CUDA device (cupy's current device; the table and the FP8
    check live in :mod:`.base`, where the CUDA engine reads them too). ``fp8_runs``: whether
    this call can run on FP8 at all (not with more than 18 explicit moduli, nor the CUDA
    engine's Ozaki-II FFT stage path); where it cannot, ``"auto"`` keeps INT8, while an
    explicit ``"fp8"`` is left to the call's own clear error. ``"fp8"`` is honoured on the
    NumPy engine (it computes the FP8 digit products exactly, as FP8 tensor cores do) and
    on a device with FP8 tensor cores."""
    choice = config.phase_a_default() if phase_a is None else phase_a
    _check_phase_a_choice(choice)
    if engine.name == "numpy":
        return "int8" if choice == "auto" else choice
    if choice == "int8" or (choice == "auto" and not fp8_runs):
        return "int8"
    return phase_a_for_device(choice, compute_capability())
