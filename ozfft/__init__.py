"""ozfft: FP64-accurate FFTs and GEMMs on INT8 tensor cores (Ozaki scheme II).

>>> import numpy as np, ozfft
>>> a = np.arange(6.0).reshape(2, 3); b = np.ones((3, 2))
>>> ozfft.matmul(a, b)
array([[ 3.,  3.],
       [12., 12.]])
"""

from ._version import __version__
from .errors import (
    DeviceMemoryError,
    KernelCompileError,
    DeviceUnavailableError,
    NonFiniteInputError,
    OzfftError,
    PlanMemoryError,
    UnsupportedDTypeError,
)
from .fourier import (
    clear_plan_cache,
    fft,
    fft2,
    fftn,
    ifft,
    ifft2,
    ifftn,
    irfft,
    irfft2,
    irfftn,
    plan_cache_info,
    rfft,
    rfft2,
    rfftn,
)
from .linalg import matmul
from .options import GemmOptions

__all__ = [
    "DeviceMemoryError",
    "KernelCompileError",
    "DeviceUnavailableError",
    "GemmOptions",
    "NonFiniteInputError",
    "OzfftError",
    "PlanMemoryError",
    "UnsupportedDTypeError",
    "__version__",
    "clear_plan_cache",
    "fft",
    "fft2",
    "fftn",
    "ifft",
    "ifft2",
    "ifftn",
    "irfft",
    "irfft2",
    "irfftn",
    "matmul",
    "plan_cache_info",
    "rfft",
    "rfft2",
    "rfftn",
    "scipy_backend",
]
from . import scipy_backend
