"""Pick the engine that owns the operands (numpy -> NumpyEngine, cupy -> CUDA engine)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import config
from ..errors import DeviceUnavailableError
from .base import Engine
from .numpy import NumpyEngine

__all__ = ["array_module_name", "best_engine_name", "describe_engines", "engine_for"]

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
        raise TypeError(
            "cupy arrays need ozfft's CUDA engine, which this version does not include; "
            "pass numpy arrays (cupy.asnumpy) to use the exact NumPy engine"
        )
    return _NUMPY_ENGINE


def _gpu_summary() -> str | None:
    """Name of GPU 0 if cupy sees one, else None."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        props = cupy.cuda.runtime.getDeviceProperties(0)
        return props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    except Exception:
        return None


def best_engine_name() -> str:
    """The best engine this version can run here (honours ``OZFFT_ENGINE``)."""
    forced = config.forced_engine()
    if forced == "cuda":
        raise DeviceUnavailableError(
            "OZFFT_ENGINE=cuda, but this version of ozfft has no CUDA engine yet"
        )
    return "numpy"


def describe_engines() -> str:
    """One line: which engine runs and what hardware was seen."""
    gpu = _gpu_summary()
    seen = f"GPU seen: {gpu}" if gpu else "no GPU seen"
    return f"engine: {best_engine_name()} (exact reference engine); {seen}"
