"""A ``scipy.fft`` backend: ``scipy.fft.set_backend(ozfft.scipy_backend)``.

Handles fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn
on numpy and cupy arrays (uarray protocol); everything else returns ``NotImplemented``
so scipy falls back to its own implementation.
"""

from __future__ import annotations

from typing import Any

from . import fourier as _fft

__all__ = ["__ua_domain__", "__ua_function__"]

__ua_domain__ = "numpy.scipy.fft"

_IMPLEMENTED = {
    name: getattr(_fft, name)
    for name in (
        "fft",
        "ifft",
        "fft2",
        "ifft2",
        "fftn",
        "ifftn",
        "rfft",
        "irfft",
        "rfft2",
        "irfft2",
        "rfftn",
        "irfftn",
    )
}


def __ua_function__(method: Any, args: tuple, kwargs: dict) -> Any:
    fn = _IMPLEMENTED.get(getattr(method, "__name__", None))
    if fn is None:
        return NotImplemented
    return fn(*args, **kwargs)
