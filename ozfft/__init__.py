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
    NonFiniteInputError,
    OzfftError,
    UnsupportedDTypeError,
)
from .linalg import matmul
from .options import GemmOptions

__all__ = [
    "DeviceMemoryError",
    "DeviceUnavailableError",
    "GemmOptions",
    "NonFiniteInputError",
    "OzfftError",
    "UnsupportedDTypeError",
    "__version__",
    "matmul",
]
