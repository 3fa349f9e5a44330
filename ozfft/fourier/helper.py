"""Helper functions of the ``scipy.fft`` namespace: ``fftfreq``, ``rfftfreq``, ``fftshift``,
``ifftshift`` (numpy semantics, cupy arrays in -> cupy arrays out) and ``next_fast_len`` /
``prev_fast_len`` with ozfft's own fast lengths.

Fast lengths
------------
A length is *fast* for ozfft when the planner runs it without Bluestein's chirp-z
convolution (:func:`ozfft.fourier.plan.fixed_layout`):

* ``m <= 1024`` with every prime factor ``<= 64``: one fixed-point pass;
* ``1024 < m <= 2**26`` with every prime factor ``<= 64``: a four-step fixed-point plan
  (the planner's ``fixed_layout(m) == "four-step"``);
* ``m > 2**26`` with every prime factor ``<= 64``: the Ozaki-II stage path
  (:func:`ozfft.fourier.plan.factorize`), no Bluestein.

These are the 64-smooth numbers, far denser than pocketfft's 11-smooth (``real=True``:
5-smooth) ones: ``scipy.fft.next_fast_len(1031) == 1050`` but
``ozfft.next_fast_len(1031) == 1032`` (``2**3 * 3 * 43``). The ``real`` flag is accepted
for compatibility and changes nothing (ozfft's real transforms run the complex route
of the same length).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..engines.select import array_module_name
from .plan import MAX_MULTIPASS, fixed_layout

__all__ = [
    "MAX_FAST_LEN",
    "fftfreq",
    "fftshift",
    "ifftshift",
    "next_fast_len",
    "prev_fast_len",
    "rfftfreq",
]

#: the primes a fast length may have (every radix of a fixed-point stage is <= 64)
_PRIMES = tuple(p for p in range(2, 65) if all(p % q for q in range(2, math.isqrt(p) + 1)))
#: high powers of all of them: ``m`` is 64-smooth iff dividing out ``gcd(m, _SMOOTH)``
#: repeatedly leaves 1
_SMOOTH = math.prod(p**64 for p in _PRIMES)
#: largest target :func:`next_fast_len` searches from (2**40 complex128 points are 16 TiB;
#: the linear search stays below ~2 s up to here)
MAX_FAST_LEN = 1 << 40


def _xp_of(x: Any):
    """``(array module, array)``: cupy arrays stay cupy, other array-API arrays keep their
    namespace, everything else becomes a numpy array."""
    name = array_module_name(x)
    if name == "numpy":
        return np, x
    if name == "cupy":
        import cupy

        return cupy, x
    namespace = getattr(x, "__array_namespace__", None)
    if namespace is not None:
        return namespace(), x
    return np, np.asarray(x)


def _to_namespace(values: np.ndarray, xp: Any, device: Any) -> Any:
    """``values`` (computed by numpy) as an array of ``xp`` on ``device``."""
    if xp is None or xp is np:
        if device is not None and device != "cpu":
            raise ValueError("device parameter is not supported for input array type")
        return values
    module = getattr(xp, "__name__", "")
    if module.split(".", 1)[0] == "cupy":
        if device is None:
            return xp.asarray(values)
        import cupy

        with cupy.cuda.Device(getattr(device, "id", device)):
            return xp.asarray(values)
    if module.endswith("numpy") and device in (None, "cpu"):  # e.g. array_api_compat.numpy
        return xp.asarray(values)
    if device is None:
        return xp.asarray(values)
    return xp.asarray(values, device=device)


def fftfreq(n, d=1.0, *, xp=None, device=None):
    """Sample frequencies of a length-``n`` DFT: ``[0, 1, ..., n//2 - 1 (or (n-1)//2),
    -(n//2), ..., -1] / (d n)``, exactly ``numpy.fft.fftfreq(n, d)``.

    ``xp`` picks the array namespace of the result (``None``: numpy; ``cupy`` gives a
    cupy array on ``device``, the current device by default).
    """
    return _to_namespace(np.fft.fftfreq(n, d), xp, device)


def rfftfreq(n, d=1.0, *, xp=None, device=None):
    """Sample frequencies of :func:`~ozfft.rfft`'s ``n//2 + 1`` outputs:
    ``[0, 1, ..., n//2] / (d n)``, exactly ``numpy.fft.rfftfreq(n, d)``."""
    return _to_namespace(np.fft.rfftfreq(n, d), xp, device)


def _shift(x, axes, sign: int):
    xp, x = _xp_of(x)
    if not hasattr(x, "shape"):
        x = xp.asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = tuple(sign * (dim // 2) for dim in x.shape)
    elif isinstance(axes, int | np.integer):
        shift = sign * (x.shape[axes] // 2)
    else:
        axes = tuple(axes)
        shift = tuple(sign * (x.shape[ax] // 2) for ax in axes)
    return xp.roll(x, shift, axis=axes)


def fftshift(x, axes=None):
    """Shift the zero-frequency term to the centre (``numpy.fft.fftshift``): a roll by
    ``n//2`` along each of ``axes`` (default: all). cupy arrays in, cupy arrays out."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of :func:`fftshift` (a roll by ``-(n//2)``; equal to it for even ``n``)."""
    return _shift(x, axes, -1)


def _is_smooth(m: int) -> bool:
    while True:
        g = math.gcd(m, _SMOOTH)
        if g == 1:
            return m == 1
        m //= g


def _is_fast(m: int) -> bool:
    """``m`` runs without Bluestein: a one-pass or four-step fixed-point length (the
    planner's :func:`~ozfft.fourier.plan.fixed_layout`), 1, or a 64-smooth length above
    ``2**26`` (Ozaki-II stages)."""
    if m == 1:
        return True
    if not _is_smooth(m):
        return False
    return m > MAX_MULTIPASS or fixed_layout(m) in ("one-pass", "four-step")


def _check_target(target, real) -> int:
    if not isinstance(real, bool | np.bool_ | int | np.integer):
        raise TypeError(f"real must be a bool, got {type(real).__name__}")
    target = operator.index(target)  # TypeError for floats, strings, ...
    if target < 1:
        raise ValueError("Target length must be positive")
    if target > MAX_FAST_LEN:
        raise ValueError(f"Target length {target} exceeds the largest one searched (2**40)")
    return target


def next_fast_len(target, real=False):
    """The smallest fast length ``>= target`` for ozfft (see the module notes): zero-pad
    to it so that the transform runs without Bluestein's convolution.

    ``target`` must be a positive integer (``ValueError`` below 1 or above ``2**40``,
    ``TypeError`` for non-integers); ``real`` (a bool, ``TypeError`` otherwise) is
    accepted for ``scipy.fft`` compatibility and changes nothing.

    ozfft's fast lengths are the 64-smooth numbers (prime factors <= 64), not
    pocketfft's 11-smooth ones, so the result can differ from ``scipy.fft.next_fast_len``.
    """
    m = _check_target(target, real)
    while not _is_fast(m):
        m += 1
    return m


def prev_fast_len(target, real=False):
    """The largest fast length ``<= target`` (see :func:`next_fast_len`): crop to it.

    Same validation as :func:`next_fast_len`; ``prev_fast_len(1) == 1``.
    """
    m = _check_target(target, real)
    while not _is_fast(m):
        m -= 1
    return m
