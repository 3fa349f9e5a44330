"""The Ozaki-II FFT: planning (:mod:`.plan`), exact roots (:mod:`.roots`), execution
(:mod:`.execute`) and the numpy/scipy-compatible functions (:mod:`.api`)."""

from .api import (
    fft,
    fft2,
    fftn,
    ifft,
    ifft2,
    ifftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftn,
)
from .cache import clear_plan_cache, plan_cache_info

__all__ = [
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
    "plan_cache_info",
    "rfft",
    "rfft2",
    "rfftn",
]
