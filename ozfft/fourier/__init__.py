"""The Ozaki-II FFT: planning (:mod:`.plan`), exact roots (:mod:`.roots`), execution
(:mod:`.execute`), the numpy/scipy-compatible functions (:mod:`.api`, Hermitian
transforms in :mod:`.hermitian`, frequencies/shifts/fast lengths in :mod:`.helper`) and
reusable plan objects (:mod:`.planner`)."""

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
from .helper import fftfreq, fftshift, ifftshift, next_fast_len, prev_fast_len, rfftfreq
from .hermitian import hfft, hfft2, hfftn, ihfft, ihfft2, ihfftn
from .planner import Plan, get_fft_plan

__all__ = [
    "Plan",
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
    "next_fast_len",
    "plan_cache_info",
    "prev_fast_len",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
