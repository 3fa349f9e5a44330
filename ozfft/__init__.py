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
    DeviceUnavailableError,
    KernelCompileError,
    NonFiniteInputError,
    OzfftError,
    PlanMemoryError,
    UnsupportedDTypeError,
)
from .fourier import (
    Plan,
    clear_plan_cache,
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    get_fft_plan,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    next_fast_len,
    plan_cache_info,
    prev_fast_len,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)
from .linalg import matmul
from .options import GemmOptions

__all__ = [
    "DeviceMemoryError",
    "DeviceUnavailableError",
    "GemmOptions",
    "KernelCompileError",
    "NonFiniteInputError",
    "OzfftError",
    "Plan",
    "PlanMemoryError",
    "UnsupportedDTypeError",
    "__version__",
    "clear_plan_cache",
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "get_fft_plan",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "matmul",
    "next_fast_len",
    "plan_cache_info",
    "prev_fast_len",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
    "scipy_backend",
]
from . import scipy_backend
