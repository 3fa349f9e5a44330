"""Pick the engine that owns the operands (numpy -> NumpyEngine, cupy -> CUDA engine)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .. import config
from ..errors import DeviceUnavailableError
from .base import Engine, compute_capability, parse_compute_capability
from .numpy import NumpyEngine

__all__ = [
    "array_module_name",
    "best_engine_name",
    "compute_capability",
    "cuda_engine",
    "describe_engines",
    "engine_for",
    "gpu_name",
    "numpy_engine",
    "parse_compute_capability",
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
