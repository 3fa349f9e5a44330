"""``ozfft.fft`` ... ``ozfft.irfftn``: numpy.fft / scipy.fft semantics on the Ozaki engine.

Every 1-D transform runs a plan (:mod:`ozfft.fourier.plan`) prepared for the array's engine
(:func:`ozfft.fourier.cache.get_executor`) along one axis; n-D transforms apply it axis
by axis (last axis first, as numpy does). Inverse transforms
use ``ifft(x) = conj(fft(conj(x))) / n``; real transforms the complex route (``rfft``
keeps the first ``n//2 + 1`` outputs; ``irfft`` rebuilds the Hermitian spectrum).
``overwrite_x``, ``workers`` and ``plan`` are accepted for scipy compatibility and
ignored; ``precision`` ("fp64", "fp32") and ``moduli`` are validated once into
:class:`ozfft.options.FFTOptions` (``moduli=None`` lets the planner pick the scheme).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engines.select import engine_for
from ..errors import NonFiniteInputError, UnsupportedDTypeError
from ..options import FFTOptions
from ..ozaki.bounds import DEFAULT_FFT_MODULI
from .cache import get_executor, get_plan

__all__ = [
    "DEFAULT_FFT_MODULI",
    "fft",
    "fft2",
    "fftn",
    "ifft",
    "ifft2",
    "ifftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftn",
]

_NORMS = (None, "backward", "ortho", "forward")

try:
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # numpy < 2
    from numpy.core.multiarray import normalize_axis_index  # type: ignore[no-redef]


def _check_norm(norm: str | None) -> str:
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm or "backward"


def _finite_check(xp, x):
    """A callable raising :class:`NonFiniteInputError` if ``x`` holds NaN or Inf.

    numpy arrays are checked now; on a GPU the test is queued now and read when the
    callable runs (after the transform is queued too), so the check costs one device
    round trip at the end instead of a host wait before the first kernel."""
    if x.dtype.kind not in "fc":
        return lambda: None
    all_finite = xp.isfinite(x).all()

    def check() -> None:
        if not bool(all_finite):
            bad = int((~xp.isfinite(x)).sum())
            kinds = " and ".join(
                k
                for k, present in (
                    ("NaN", bool(xp.isnan(x).any())),
                    ("Inf", bool(xp.isinf(x).any())),
                )
                if present
            )
            raise NonFiniteInputError("x", bad, kinds)

    if xp is np:
        check()
        return lambda: None
    return check


def _as_input(x: Any):
    """The array, its engine, the complex output dtype numpy.fft would give, and the
    check for non-finite values (:func:`_finite_check`), to call before returning."""
    engine = engine_for(x)
    xp = engine.xp
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
    kind = x.dtype.kind
    too_wide = kind in "fc" and x.dtype.itemsize > (8 if kind == "f" else 16)
    if kind not in "biufc" or too_wide:
        raise UnsupportedDTypeError("x", x.dtype, "bool, integer, float16/32/64, complex64/128")
    single = x.dtype in (np.float16, np.float32, np.complex64)
    out_dtype = np.complex64 if single else np.complex128
    return x, engine, np.dtype(out_dtype), _finite_check(xp, x)


def _resize(xp, x, n: int, axis: int):
    """Crop or zero-pad ``x`` to length ``n`` along ``axis`` (numpy.fft semantics)."""
    size = x.shape[axis]
    if size == n:
        return x
    if size > n:
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, n)
        return x[tuple(index)]
    shape = list(x.shape)
    shape[axis] = n
    out = xp.zeros(shape, x.dtype)
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, size)
    out[tuple(index)] = x
    return out


def _c2c_axis(engine, x, n: int | None, axis: int, norm: str, inverse: bool, options: FFTOptions):
    """Complex transform of complex128 ``x`` along one axis; returns complex128."""
    xp = engine.xp
    axis = normalize_axis_index(axis, x.ndim)
    if n is None:
        n = x.shape[axis]
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    x = _resize(xp, x, n, axis)
    if inverse:
        x = xp.conj(x)
    if x.size == 0 or n == 1:
        y = x.astype(np.complex128, copy=True)
    else:
        y = get_executor(engine, get_plan(n, options)).forward(x, axis)
    # y is a new array: conjugate and normalize in place (the same IEEE operations)
    if inverse:
        xp.conj(y, out=y)
    # "ortho" divides both directions by sqrt(n); otherwise the 1/n sits on the inverse
    # ("backward") or on the forward transform ("forward")
    if norm == "ortho":
        y /= math.sqrt(n)
    elif (norm == "forward") != inverse and n > 1:
        y /= float(n)
    return y


def _cook_nd_args(x, s, axes, invreal: bool = False):
    if s is None:
        shapeless = True
        if axes is None:
            s = list(x.shape)
        else:
            s = [x.shape[normalize_axis_index(a, x.ndim)] for a in axes]
    else:
        shapeless = False
        s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    return s, axes


def _c2c(x, s, axes, norm, inverse, precision, moduli, one_d_n=None, one_d_axis=None):
    x, engine, out_dtype, check = _as_input(x)
    options = FFTOptions(precision=precision, moduli=moduli)
    norm = _check_norm(norm)
    y = x.astype(np.complex128, copy=False)  # every axis pass returns a new array
    if one_d_axis is not None:
        y = _c2c_axis(engine, y, one_d_n, one_d_axis, norm, inverse, options)
    else:
        s, axes = _cook_nd_args(x, s, axes)
        for ii in reversed(range(len(axes))):
            y = _c2c_axis(engine, y, s[ii], axes[ii], norm, inverse, options)
    if y is x:  # no axis transformed: still a new array, as numpy.fft returns
        y = y.copy()
    check()
    return y.astype(out_dtype, copy=False)


def fft(
    x,
    n=None,
    axis=-1,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """1-D discrete Fourier transform, ``y_k = sum_j x_j exp(-2 pi i jk/n)``."""
    return _c2c(x, None, None, norm, False, precision, moduli, n, axis)


def ifft(
    x,
    n=None,
    axis=-1,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """1-D inverse DFT (``1/n`` scaling with the default ``norm="backward"``)."""
    return _c2c(x, None, None, norm, True, precision, moduli, n, axis)


def fftn(
    x,
    s=None,
    axes=None,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """N-D DFT over ``axes`` (default: all, or the last ``len(s)``)."""
    return _c2c(x, s, axes, norm, False, precision, moduli)


def ifftn(
    x,
    s=None,
    axes=None,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """N-D inverse DFT."""
    return _c2c(x, s, axes, norm, True, precision, moduli)


def fft2(
    x,
    s=None,
    axes=(-2, -1),
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """2-D DFT over the last two axes."""
    return _c2c(x, s, axes, norm, False, precision, moduli)


def ifft2(
    x,
    s=None,
    axes=(-2, -1),
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """2-D inverse DFT over the last two axes."""
    return _c2c(x, s, axes, norm, True, precision, moduli)


def _real_input(x):
    x, engine, out_dtype, check = _as_input(x)
    if x.dtype.kind == "c":
        raise TypeError(
            "x must be real for a real-input transform (got complex dtype "
            f"{x.dtype}); use fft instead"
        )
    return x, engine, out_dtype, check


def rfftn(
    x,
    s=None,
    axes=None,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """N-D DFT of real input; the last axis keeps ``n//2 + 1`` (non-negative) frequencies."""
    x, engine, out_dtype, check = _real_input(x)
    options = FFTOptions(precision=precision, moduli=moduli)
    norm = _check_norm(norm)
    s, axes = _cook_nd_args(x, s, axes)
    xp = engine.xp
    last = normalize_axis_index(axes[-1], x.ndim)
    y = _c2c_axis(engine, x.astype(np.complex128), s[-1], last, norm, False, options)
    index = [slice(None)] * y.ndim
    index[last] = slice(0, s[-1] // 2 + 1)
    y = xp.ascontiguousarray(y[tuple(index)])
    for ii in reversed(range(len(axes) - 1)):
        y = _c2c_axis(engine, y, s[ii], axes[ii], norm, False, options)
    check()
    return y.astype(out_dtype, copy=False)


def irfftn(
    x,
    s=None,
    axes=None,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """Inverse of :func:`rfftn`; the last axis has length ``s[-1]`` (default
    ``2 (m - 1)``). The imaginary parts of the zero (and Nyquist) terms are ignored."""
    x, engine, out_dtype, check = _as_input(x)
    out_dtype = np.dtype(np.float32 if out_dtype == np.complex64 else np.float64)
    options = FFTOptions(precision=precision, moduli=moduli)
    norm = _check_norm(norm)
    s, axes = _cook_nd_args(x, s, axes, invreal=True)
    xp = engine.xp
    y = x.astype(np.complex128)
    for ii in range(len(axes) - 1):
        y = _c2c_axis(engine, y, s[ii], axes[ii], norm, True, options)
    n = s[-1]
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    last = normalize_axis_index(axes[-1], y.ndim)
    half = _resize(xp, y, n // 2 + 1, last)
    moved = xp.moveaxis(half, last, -1)
    full = xp.zeros((*moved.shape[:-1], n), np.complex128)
    full[..., : n // 2 + 1] = moved
    tail = (n - 1) // 2  # mirrored entries n-1 .. n//2+1 from 1 .. (n-1)//2
    if tail:
        full[..., n - tail :] = xp.conj(moved[..., 1 : tail + 1][..., ::-1])
    full = xp.moveaxis(full, -1, last)
    z = _c2c_axis(engine, full, n, last, norm, True, options)
    check()
    return z.real.astype(out_dtype)


def rfft(
    x,
    n=None,
    axis=-1,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """1-D DFT of real input (``n//2 + 1`` outputs)."""
    return rfftn(x, None if n is None else [n], [axis], norm, precision=precision, moduli=moduli)


def irfft(
    x,
    n=None,
    axis=-1,
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """Inverse of :func:`rfft` (output length ``n``, default ``2 (m - 1)``)."""
    return irfftn(x, None if n is None else [n], [axis], norm, precision=precision, moduli=moduli)


def rfft2(
    x,
    s=None,
    axes=(-2, -1),
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """2-D DFT of real input."""
    return rfftn(x, s, axes, norm, precision=precision, moduli=moduli)


def irfft2(
    x,
    s=None,
    axes=(-2, -1),
    norm=None,
    overwrite_x=False,
    workers=None,
    *,
    plan=None,
    precision="fp64",
    moduli=None,
):
    """Inverse of :func:`rfft2`."""
    return irfftn(x, s, axes, norm, precision=precision, moduli=moduli)
