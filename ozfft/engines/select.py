"""Pick the engine that owns the operands (numpy -> NumpyEngine, cupy -> CUDA engine)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import Engine
from .numpy import NumpyEngine

__all__ = ["array_module_name", "engine_for"]

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
