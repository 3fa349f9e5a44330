"""``ozfft.fft`` ... ``ozfft.irfftn``: numpy.fft / scipy.fft semantics on the Ozaki engine.

Every 1-D transform runs a plan (:mod:`ozfft.fourier.plan`) prepared for the array's engine
(:func:`ozfft.fourier.cache.get_executor`) along one axis; n-D transforms apply it axis
by axis (last axis first, as numpy does). Inverse transforms
use ``ifft(x) = conj(fft(conj(x))) / n``; real transforms the complex route (``rfft``
keeps the first ``n//2 + 1`` outputs; ``irfft`` rebuilds the Hermitian spectrum).
``precision`` ("fp64", "fp32"), ``moduli`` and ``phase_a`` are validated once into
:class:`ozfft.options.FFTOptions` (``moduli=None`` lets the planner pick the scheme);
``phase_a`` is resolved for the array's engine (:func:`~ozfft.engines.select.resolve_phase_a`)
and picks the executors' products, never the result.

Argument handling follows numpy >= 2 (``s`` entries of -1, ``None`` entries and ``s``
without ``axes`` with numpy's DeprecationWarnings, ``out=``) and scipy (``workers``
validated, ``plan``, ``overwrite_x`` accepted). Where the two libraries differ
(repeated axes, ``None`` in ``s``, error messages), the functions follow numpy, and
follow scipy inside :func:`scipy_semantics`, which :mod:`ozfft.scipy_backend` enters
for every call it answers. Neither changes a computed value.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import operator
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import replace
from numbers import Number
from typing import Any

import numpy as np

from ..engines.select import engine_for, resolve_phase_a
from ..errors import UnsupportedDTypeError
from ..options import FFTOptions
from ..ozaki.bounds import DEFAULT_FFT_MODULI
from ..scheme.gemm import fp8_max_moduli, fp8_system_for
from .cache import get_executor, get_plan
from .input_check import InputCheck
from .runs import (
    axis_runs,
    carry_axis,
    conjugated_input,
    divisors,
    hermitian_extension,
    run_passes,
)

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


# --- numpy or scipy argument semantics ---------------------------------------------

_SCIPY_SEMANTICS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "ozfft_scipy_semantics", default=False
)


@contextlib.contextmanager
def scipy_semantics(enabled: bool = True) -> Iterator[None]:
    """Within this context (thread and task local) the FFT functions check their
    arguments as scipy.fft does and raise scipy's messages: repeated ``axes`` and
    ``None`` in ``s`` are errors, ``s`` without ``axes`` does not warn, scalar ``s`` /
    ``axes`` are accepted. :mod:`ozfft.scipy_backend` enters it for every call it
    answers. Results are the same either way."""
    token = _SCIPY_SEMANTICS.set(enabled)
    try:
        yield
    finally:
        _SCIPY_SEMANTICS.reset(token)


def _scipy() -> bool:
    return _SCIPY_SEMANTICS.get()


def _bad_length(n) -> ValueError:
    if _scipy():
        return ValueError(f"invalid number of data points ({n}) specified")
    return ValueError(f"Invalid number of FFT data points ({n}) specified.")


def _check_norm(norm: str | None) -> str:
    if norm not in _NORMS:
        if _scipy():
            raise ValueError(
                f'Invalid norm value {norm!r}, should be "backward", "ortho" or "forward"'
            )
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm or "backward"


def _check_workers(workers) -> int | None:
    """scipy's rule: ``None``, a positive count, or a negative one counted back from the
    CPU count (-1: all CPUs). The transforms themselves do not use it."""
    if workers is None:
        return None
    workers = operator.index(workers)
    cpus = os.cpu_count() or 1
    if workers < 0:
        if workers < -cpus:
            raise ValueError(
                f"workers value out of range; got {workers}, must not be less than {-cpus}"
            )
        return workers + 1 + cpus
    if workers == 0:
        raise ValueError("workers must not be zero")
    return workers


# --- plans -----------------------------------------------------------------------


def is_ozfft_plan(plan: Any) -> bool:
    """Whether ``plan`` is an :class:`ozfft.fourier.planner.Plan`. Looked up in
    ``sys.modules`` only: no instance can exist before that module is imported, so
    nothing is imported here (and a missing module is simply "no")."""
    planner = sys.modules.get(__name__.rsplit(".", 1)[0] + ".planner")
    cls = getattr(planner, "Plan", None)
    return isinstance(cls, type) and isinstance(plan, cls)


def _check_plan_type(plan: Any) -> None:
    if plan is not None and not is_ozfft_plan(plan):
        raise NotImplementedError(
            "Passing a precomputed plan is not yet supported by scipy.fft functions; "
            "ozfft accepts only ozfft.fourier.planner.Plan objects, got "
            f"{type(plan).__module__}.{type(plan).__qualname__}"
        )


def _options(plan: Any, precision: str, moduli: int | None, phase_a: str | None) -> FFTOptions:
    """The call's options; an ozfft plan's own precision and moduli take precedence, and
    its ``phase_a`` where it names one."""
    if plan is not None:
        precision = getattr(plan, "precision", precision)
        moduli = getattr(plan, "moduli", moduli)
        plan_phase = getattr(plan, "phase_a", None)
        phase_a = phase_a if plan_phase is None else plan_phase
    # 8 and 8.0 stay apart
    key = (type(precision), precision, type(moduli), moduli, type(phase_a), phase_a)
    try:
        hash(key)
    except TypeError:  # unhashable: validation says what is wrong with it
        return FFTOptions(precision=precision, moduli=moduli, phase_a=phase_a)
    return _validated_options(key)


@functools.lru_cache(maxsize=64)
def _validated_options(key: tuple) -> FFTOptions:
    """Validated once per (precision, moduli, phase_a) and their types: every call needs
    them."""
    return FFTOptions(precision=key[1], moduli=key[3], phase_a=key[5])


def resolved_phase_a(options: FFTOptions, engine) -> str:
    """``options.phase_a`` resolved for a transform on ``engine`` (``"int8"`` or ``"fp8"``),
    as every call resolves it."""
    return _on_engine(options, engine).phase_a


def _on_engine(options: FFTOptions, engine) -> FFTOptions:
    """The options with ``phase_a`` resolved for ``engine`` (``"int8"`` or ``"fp8"``)."""
    # FP8 runs the fixed-point path anywhere and the Ozaki-II stage path (moduli=) on the
    # NumPy engine, up to 18 moduli
    fp8_runs = options.moduli is None or (
        engine.name == "numpy" and options.moduli <= fp8_max_moduli()
    )
    phase_a = resolve_phase_a(options.phase_a, engine, fp8_runs=fp8_runs)
    if phase_a == "fp8" and options.moduli is not None:
        fp8_system_for(options.moduli)  # a clear ValueError past 18 moduli
    return _with_phase(options, phase_a)


@functools.lru_cache(maxsize=64)
def _with_phase(options: FFTOptions, phase_a: str) -> FFTOptions:
    return options if options.phase_a == phase_a else replace(options, phase_a=phase_a)


def _check_plan_fits(plan: Any, kind: str, x, axes: list[int], lengths: list[int]) -> None:
    """An ozfft plan must have been made for this call: its ``check(x)`` (the input's
    shape and dtype), and its ``kind`` (``"c2c"``, ``"r2c"``, ``"c2r"``), ``axes`` and
    transform lengths ``s``, where it has them."""
    if plan is None:
        return
    check = getattr(plan, "check", None)
    if callable(check):
        check(x)
    want = {
        "kind": getattr(plan, "kind", kind),
        "axes": getattr(plan, "axes", None),
        "s": getattr(plan, "s", None),
    }
    got = {"kind": kind, "axes": tuple(axes), "s": tuple(lengths)}
    for key, value in want.items():
        if value is not None and key != "kind":
            value = tuple(value)
        if value is not None and value != got[key]:
            raise ValueError(
                f"the plan does not fit this call: the plan's {key} is {value!r}, the "
                f"call's {got[key]!r} (plan: {plan!r})"
            )


# --- input, output ------------------------------------------------------------------


def _as_input(x: Any):
    """The array, its engine, the complex output dtype numpy.fft would give, and the
    check for non-finite values (:class:`~.input_check.InputCheck`), to call before
    returning.
    Byte order does not matter (big-endian float32 gives complex64)."""
    engine = engine_for(x)
    xp = engine.xp
    if not hasattr(x, "dtype"):
        x = np.asarray(x)
    kind = x.dtype.kind
    too_wide = kind in "fc" and x.dtype.itemsize > (8 if kind == "f" else 16)
    if kind not in "biufc" or too_wide:
        raise UnsupportedDTypeError("x", x.dtype, "bool, integer, float16/32/64, complex64/128")
    single = kind in "fc" and x.dtype.itemsize <= (4 if kind == "f" else 8)
    out_dtype = np.complex64 if single else np.complex128
    return x, engine, np.dtype(out_dtype), InputCheck(xp, x, engine.new_input_flag)


def _float_copy(xp, x):
    """What a transform over no axes returns: a copy of ``x`` in floating point (float16
    becomes float32, integers and bool float64; native byte order), as scipy's input
    conversion gives."""
    kind, size = x.dtype.kind, x.dtype.itemsize
    if kind == "f" and size == 2:
        dtype = np.dtype(np.float32)
    elif kind not in "fc":
        dtype = np.dtype(np.float64)
    else:
        dtype = x.dtype.newbyteorder("=")
    return xp.array(x, dtype=dtype, copy=True)


def _check_out(out, engine, shape, dtype) -> None:
    """numpy 2's ``out``: an array of the input's kind, the result's shape, and a dtype
    the result casts to under ``same_kind``. Checked before any work."""
    if out is None:
        return
    xp = engine.xp
    if not isinstance(out, xp.ndarray):
        raise TypeError(
            f"out must be of ArrayType ({xp.__name__}.ndarray, like the input), "
            f"got {type(out).__name__}"
        )
    if tuple(out.shape) != tuple(shape):
        raise ValueError(
            f"output array has wrong shape: {tuple(out.shape)}, the result's is {tuple(shape)}"
        )
    if not np.can_cast(dtype, out.dtype, casting="same_kind"):
        raise TypeError(
            f"Cannot cast the result from dtype('{np.dtype(dtype)}') to out's "
            f"dtype('{out.dtype}') with casting rule 'same_kind'"
        )


def _converted(engine, x, dtype):
    """``x`` in ``dtype`` (``x`` itself where it has it): every conversion between binary32
    (float32, complex64) and binary64 goes through :meth:`Engine.astype
    <ozfft.engines.base.Engine.astype>`, which keeps binary32 subnormals (cupy's own
    conversions are built with ``-ftz=true`` and flush them to zero); a real array bound
    for a complex dtype of another width converts its reals first, and the change of kind
    that follows is exact."""
    dtype = np.dtype(dtype)
    if x.dtype.kind == "f" and dtype.kind == "c" and 2 * x.dtype.itemsize != dtype.itemsize:
        x = engine.astype(x, np.dtype(f"f{dtype.itemsize // 2}"))
    return engine.astype(x, dtype)


def _deliver(engine, y, out):
    """``y``, or ``out`` holding it (``y`` is complete before ``out`` is written, so
    ``out`` may overlap the input; converted to ``out``'s dtype as :func:`_converted`
    does)."""
    if out is None:
        return y
    out[...] = _converted(engine, y, out.dtype)
    return out


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


def _c2c_axis(
    engine,
    x,
    n: int | None,
    axis: int,
    norm: str,
    inverse: bool,
    options: FFTOptions,
    owned: bool = False,
    check: InputCheck | None = None,
):
    """Complex transform of complex128 ``x`` along one axis; returns complex128. ``owned``:
    ``x`` is an intermediate of ours that the pass may overwrite (no extra array);
    ``check``: the call's input test, where this is its first pass."""
    xp = engine.xp
    axis = normalize_axis_index(axis, x.ndim)
    if n is None:
        n = x.shape[axis]
    n = operator.index(n)
    if n < 1:
        raise _bad_length(n)
    padded = x.shape[axis] < n  # padding makes a new array; cropping returns a view
    x = _resize(xp, x, n, axis)
    owned = owned or padded
    executor = (
        None
        if x.size == 0 or n == 1
        else get_executor(engine, get_plan(n, options), options.phase_a)
    )
    extra = {}
    if inverse:
        x, owned, extra = conjugated_input(xp, executor, x, owned)
    if executor is None:
        y = x if owned else x.astype(np.complex128, copy=True)
    else:
        flag = check.flag(executor, x.shape) if check is not None else None
        y = executor.forward(x, axis, overwrite=owned, nonfinite=flag, **extra)
    # y is ours (new, or x given up): conjugate and normalize in place (same IEEE ops)
    engine.conj_divide(y, inverse, divisors((n,), norm, inverse))
    return y


def _c2c_axes(
    engine,
    y,
    lengths,
    axes,
    norm: str,
    inverse: bool,
    options: FFTOptions,
    owned: bool,
    carry=None,
    check: InputCheck | None = None,
):
    """Complex transforms of complex128 ``y`` along ``axes`` (the last first, as
    numpy), run by run (:func:`~ozfft.fourier.runs.axis_runs`): a run of one-pass axes
    carries fixed point from pass to pass and rounds to float64 once, at its end
    (:mod:`ozfft.ozaki.fixed_point`, "Carried fixed point"); the normalization follows.
    ``carry`` (``y`` None): the carried result of a previous pass, which the first run
    continues (its caller checked :func:`~ozfft.fourier.runs.carry_axis`). ``check``: the
    call's input test, offered to the first pass."""
    shape = tuple(y.shape) if carry is None else carry.shape
    for run in axis_runs(shape, lengths, axes, options):
        run_axes = [axes[ii] for ii in run]
        if carry is not None or len(run) > 1:
            y = _carried_run(engine, y, run_axes, norm, inverse, options, owned, carry, check)
            carry = None
        else:
            n = lengths[run[0]]
            y = _c2c_axis(engine, y, n, run_axes[0], norm, inverse, options, owned, check)
        owned = True  # every later pass works on our own intermediate
        check = None
    return y


def _carried_run(
    engine,
    y,
    axes: list[int],
    norm: str,
    inverse: bool,
    options: FFTOptions,
    owned: bool,
    carry=None,
    check: InputCheck | None = None,
):
    """Passes along ``axes`` (in this order, lengths unchanged) with fixed point carried
    between them, from ``y`` or from the ``carry`` of a previous pass; one rounding at the
    end, then each axis's normalization as :func:`_c2c_axis` applies it."""
    y = run_passes(engine, y, axes, options, owned, carry, check=check, conj=inverse)
    engine.conj_divide(y, inverse, divisors([y.shape[axis] for axis in axes], norm, inverse))
    return y


# --- s and axes -------------------------------------------------------------------

_AXES_NONE_WARNING = (
    "`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0). In a "
    "future version of NumPy, this will raise an error and `s[i]` will correspond to the "
    "size along the transformed axis specified by `axes[i]`. To retain current "
    "behaviour, pass a sequence [0, ..., k-1] to `axes` for an array of dimension k."
)
_S_NONE_WARNING = (
    "Passing an array containing `None` values to `s` is deprecated in NumPy 2.0 and "
    "will raise an error in a future version of NumPy. To use the default behaviour of "
    "the corresponding 1-D transform, pass the value matching the default for its `n` "
    "parameter. To use the default behaviour for every axis, the `s` argument can be "
    "omitted."
)


_PACKAGE = __name__.rsplit(".", 1)[0] + "."


def _warn_deprecated(message: str) -> None:
    # point at the caller of the public function (frames of ozfft.fourier skipped)
    level = 2
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def _iterable_of_int(value, name: str) -> list[int]:
    if isinstance(value, Number):
        value = (value,)
    try:
        return [operator.index(v) for v in value]
    except TypeError as exc:
        raise ValueError(f"{name} must be a scalar or iterable of integers") from exc


def _cook_nd_args_scipy(x, s, axes, invreal: bool):
    """scipy's ``_init_nd_shape_and_axes`` (same checks, same messages)."""
    noshape, noaxes = s is None, axes is None
    if not noaxes:
        axes = [a + x.ndim if a < 0 else a for a in _iterable_of_int(axes, "axes")]
        if any(a >= x.ndim or a < 0 for a in axes):
            raise ValueError("axes exceeds dimensionality of input")
        if len(set(axes)) != len(axes):
            raise ValueError("all axes must be unique")
    if not noshape:
        shape = _iterable_of_int(s, "shape")
        if axes and len(axes) != len(shape):
            raise ValueError("when given, axes and shape arguments have to be of the same length")
        if noaxes:
            if len(shape) > x.ndim:
                raise ValueError("shape requires more axes than are present")
            axes = range(x.ndim - len(shape), x.ndim)
        # strict=False: scipy's quirk, an empty axes with a shape transforms nothing
        shape = [x.shape[a] if n == -1 else n for n, a in zip(shape, axes, strict=False)]
    elif noaxes:
        shape, axes = list(x.shape), range(x.ndim)
    else:
        shape = [x.shape[a] for a in axes]
    if any(n < 1 for n in shape):
        raise ValueError(f"invalid number of data points ({list(shape)}) specified")
    shape, axes = list(shape), list(axes)
    if invreal and noshape and axes:
        shape[-1] = (x.shape[axes[-1]] - 1) * 2
    return shape, axes


def _cook_nd_args(x, s, axes, invreal: bool = False):
    """Lengths and axes of an n-D transform: numpy 2's rules (``-1`` and, with a
    DeprecationWarning, ``None`` entries mean "this axis's default"; ``s`` without
    ``axes`` takes the last ``len(s)`` axes, with numpy's DeprecationWarning), or
    scipy's under :func:`scipy_semantics`. Returns ``(s, axes)`` with every length an
    int (the inverse real transform's last default is ``2 (m - 1)``)."""
    if _scipy():
        return _cook_nd_args_scipy(x, s, axes, invreal)
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
        if not shapeless:
            _warn_deprecated(_AXES_NONE_WARNING)
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless and axes:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    if any(n is None for n in s):
        _warn_deprecated(_S_NONE_WARNING)
    lengths = []
    for i, (n, a) in enumerate(zip(s, axes, strict=True)):
        if n is None and invreal and i == len(s) - 1:  # irfft's default n
            n = (x.shape[normalize_axis_index(a, x.ndim)] - 1) * 2
        elif n is None or n == -1:
            n = x.shape[normalize_axis_index(a, x.ndim)]
        lengths.append(operator.index(n))
    return lengths, axes


# --- the transforms -----------------------------------------------------------------


def _c2c(
    x,
    s,
    axes,
    norm,
    inverse,
    precision,
    moduli,
    one_d_n=None,
    one_d_axis=None,
    *,
    workers=None,
    plan=None,
    out=None,
    phase_a=None,
):
    _check_plan_type(plan)
    x, engine, out_dtype, check = _as_input(x)
    options = _on_engine(_options(plan, precision, moduli, phase_a), engine)
    norm = _check_norm(norm)
    _check_workers(workers)
    if one_d_axis is not None:
        axis = normalize_axis_index(one_d_axis, x.ndim)
        n = x.shape[axis] if one_d_n is None else operator.index(one_d_n)
        if n < 1:
            raise _bad_length(n)
        s, axes = [n], [axis]
    else:
        s, axes = _cook_nd_args(x, s, axes)
        axes = [normalize_axis_index(a, x.ndim) for a in axes]
    if not axes:  # nothing to transform (also a 0-d input): a floating-point copy
        check()
        y = _float_copy(engine.xp, x)
        _check_out(out, engine, y.shape, y.dtype)
        return _deliver(engine, y, out)
    _check_plan_fits(plan, "c2c", x, axes, s)
    shape = list(x.shape)
    for ii in reversed(range(len(axes))):
        shape[axes[ii]] = s[ii]
    _check_out(out, engine, shape, out_dtype)
    y = _converted(engine, x, np.complex128)
    owned = y is not x  # a converted copy may be overwritten by the first pass
    y = _c2c_axes(engine, y, s, axes, norm, inverse, options, owned, check=check)
    if y is x:  # never a view of the input
        y = y.copy()
    check()
    return _deliver(engine, _converted(engine, y, out_dtype), out)


def _real_input(x):
    x, engine, out_dtype, check = _as_input(x)
    if x.dtype.kind == "c":
        if _scipy():
            raise TypeError("x must be a real sequence")
        raise TypeError(
            f"x must be a real sequence for a real-input transform (got complex dtype "
            f"{x.dtype}); use fft for complex input"
        )
    return x, engine, out_dtype, check


def _r2c(
    x,
    s,
    axes,
    norm,
    workers,
    plan,
    precision,
    moduli,
    out,
    one_d_n=None,
    one_d_axis=None,
    *,
    phase_a=None,
    conj=False,
):
    """The real-input transforms; ``conj``: the result conjugated (``ihfftn``'s), in
    complex128 before the result's conversion."""
    _check_plan_type(plan)
    x, engine, out_dtype, check = _real_input(x)
    options = _on_engine(_options(plan, precision, moduli, phase_a), engine)
    norm = _check_norm(norm)
    _check_workers(workers)
    if one_d_axis is not None:
        axis = normalize_axis_index(one_d_axis, x.ndim)
        n = x.shape[axis] if one_d_n is None else operator.index(one_d_n)
        if n < 1:
            raise _bad_length(n)
        s, axes = [n], [axis]
    else:
        s, axes = _cook_nd_args(x, s, axes)
    if not axes:
        raise ValueError("at least 1 axis must be transformed")
    axes = [normalize_axis_index(a, x.ndim) for a in axes]
    if s[-1] < 1:
        raise _bad_length(s[-1])
    _check_plan_fits(plan, "r2c", x, axes, s)
    shape = list(x.shape)
    shape[axes[-1]] = s[-1] // 2 + 1
    for ii in reversed(range(len(axes) - 1)):
        shape[axes[ii]] = s[ii]
    _check_out(out, engine, shape, out_dtype)
    xp = engine.xp
    last, n = axes[-1], s[-1]
    if carry_axis(x.shape, n, last, options):
        # the real-input pass reads the reals and writes the n // 2 + 1 outputs kept; fixed
        # point carries on into the next axis where that one carries too
        half_shape = list(x.shape)
        half_shape[last] = n // 2 + 1
        keep = (
            len(axes) > 1 and axes[-2] != last and carry_axis(half_shape, s[-2], axes[-2], options)
        )
        executor = get_executor(engine, get_plan(n, options), options.phase_a)
        flag = check.flag(executor, x.shape)
        reals = _converted(engine, x, np.float64)  # the pass reads float64
        first = executor.forward_real(reals, last, keep=keep, nonfinite=flag)
        if keep:
            y = _c2c_axes(engine, None, s[:-1], axes[:-1], norm, False, options, True, first)
        else:
            y = _c2c_axes(engine, first, s[:-1], axes[:-1], norm, False, options, True)
        engine.conj_divide(y, False, divisors((n,), norm, False))
    else:
        y = _converted(engine, x, np.complex128)  # real x: a new array, ours
        y = _c2c_axis(engine, y, n, last, norm, False, options, True, check)
        index = [slice(None)] * y.ndim
        index[last] = slice(0, n // 2 + 1)
        y = xp.ascontiguousarray(y[tuple(index)])
        y = _c2c_axes(engine, y, s[:-1], axes[:-1], norm, False, options, True)
    check()
    if conj:
        xp.conj(y, out=y)
    return _deliver(engine, _converted(engine, y, out_dtype), out)


def _c2r(
    x,
    s,
    axes,
    norm,
    workers,
    plan,
    precision,
    moduli,
    out,
    one_d_n=None,
    one_d_axis=None,
    *,
    phase_a=None,
    conj=False,
):
    """The inverse real transforms; ``conj``: of the conjugate of ``x`` (``hfftn``'s),
    taken in complex128 after the input's conversion."""
    _check_plan_type(plan)
    x, engine, out_dtype, check = _as_input(x)
    out_dtype = np.dtype(np.float32 if out_dtype == np.complex64 else np.float64)
    options = _on_engine(_options(plan, precision, moduli, phase_a), engine)
    norm = _check_norm(norm)
    _check_workers(workers)
    if one_d_axis is not None:
        axis = normalize_axis_index(one_d_axis, x.ndim)
        if one_d_n is None:
            n = (x.shape[axis] - 1) * 2
            if n < 1 and _scipy():
                raise ValueError(f"Invalid number of data points ({n}) specified")
        else:
            n = operator.index(one_d_n)
        if n < 1:
            raise _bad_length(n)
        s, axes = [n], [axis]
    else:
        s, axes = _cook_nd_args(x, s, axes, invreal=True)
    if not axes:
        raise ValueError("at least 1 axis must be transformed")
    axes = [normalize_axis_index(a, x.ndim) for a in axes]
    _check_plan_fits(plan, "c2r", x, axes, s)
    shape = list(x.shape)
    for ii in range(len(axes)):
        shape[axes[ii]] = s[ii]
    _check_out(out, engine, shape, out_dtype)
    xp = engine.xp
    y = _converted(engine, x, np.complex128)
    if y is x:  # a copy: every pass may work in place
        y = x.copy(order="K")
    if conj and x.dtype.kind == "c":  # conj(x) of real x is x
        xp.conj(y, out=y)
    # the inverse passes run in axes order (numpy's irfftn): reversed for _c2c_axes
    y = _c2c_axes(engine, y, s[:-1][::-1], axes[:-1][::-1], norm, True, options, True, check=check)
    n = s[-1]
    if n < 1:
        raise _bad_length(n)
    last = axes[-1]
    full = hermitian_extension(xp, _resize(xp, y, n // 2 + 1, last), n, last)
    z = _c2c_axis(engine, full, n, last, norm, True, options, True)  # not x: no flag
    check()
    real = z.real
    y = _converted(engine, real, out_dtype)
    if y is real:  # a new array, not a view of z
        y = real.copy(order="K")
    return _deliver(engine, y, out)


# --- documentation ------------------------------------------------------------------

_DOC = {
    "x": """x : array_like
        Input array. A numpy array (or anything ``numpy.asarray`` accepts) runs on the
        exact NumPy engine; a cupy array runs on the GPU (cupy in, cupy out, on cupy's
        current stream). Accepted dtypes: bool, integers, float16/32/64 and
        complex64/128, in either byte order.""",
    "x_real": """x : array_like
        Real input array (bool, integers, float16/32/64, either byte order). A numpy
        array (or anything ``numpy.asarray`` accepts) runs on the exact NumPy engine; a
        cupy array runs on the GPU (cupy in, cupy out).""",
    "x_herm": """x : array_like
        The non-negative-frequency half of a Hermitian spectrum along the last
        transformed axis (real input is taken as complex). A numpy array (or anything
        ``numpy.asarray`` accepts) runs on the exact NumPy engine; a cupy array runs on
        the GPU. Accepted dtypes: bool, integers, float16/32/64 and complex64/128, in
        either byte order.""",
    "n": """n : int, optional
        Length of the transformed axis of the output. The input is cropped or padded
        with zeros to ``n`` along ``axis``; by default its length along ``axis``.""",
    "n_r2c": """n : int, optional
        Number of input points used along ``axis``: the input is cropped or padded
        with zeros to ``n``; by default its length. The output has ``n//2 + 1``
        entries along ``axis``.""",
    "n_c2r": """n : int, optional
        Length of the (real) output along ``axis``; the input is cropped or padded with
        zeros to ``n//2 + 1`` entries. By default ``2 (m - 1)`` for ``m`` input
        entries (pass ``n`` for an odd output length).""",
    "axis": """axis : int, optional
        Axis over which to compute the transform; the last by default.""",
    "s": """s : sequence of ints, optional
        Length of each transformed axis of the output, in the order of ``axes``; the
        input is cropped or padded with zeros to it. ``-1`` means that axis's own
        length. As in numpy 2, a ``None`` entry means the same with a
        DeprecationWarning, and ``s`` without ``axes`` applies to the last ``len(s)``
        axes with a DeprecationWarning. Under the scipy backend scipy's rules apply:
        no warning, ``None`` entries and lengths below 1 raise ``ValueError``.""",
    "s_r2c": """s : sequence of ints, optional
        Number of input points used along each transformed axis (in the order of
        ``axes``): the input is cropped or padded with zeros to it; the last axis of
        the output has ``s[-1]//2 + 1`` entries. ``-1`` means that axis's own length;
        ``None`` entries and ``s`` without ``axes`` behave (and warn) as in numpy 2;
        under the scipy backend scipy's rules apply.""",
    "s_c2r": """s : sequence of ints, optional
        Shape of the (real) output along the transformed axes, in the order of
        ``axes``. Along the last axis the input is cropped or padded to
        ``s[-1]//2 + 1`` entries; by default the output has ``2 (m - 1)`` entries there
        for ``m`` input entries. ``-1`` means that axis's input length; ``None``
        entries (the default length) and ``s`` without ``axes`` behave (and warn) as in
        numpy 2; under the scipy backend scipy's rules apply.""",
    "axes": """axes : sequence of ints, optional
        Axes over which to compute the transform: all axes by default (the last
        ``len(s)`` if ``s`` is given). Repeated axes are transformed repeatedly, as
        numpy does (under the scipy backend they raise ``ValueError``, as scipy does).
        An empty ``axes``, or a 0-d input, returns a floating-point copy of ``x``.""",
    "axes_real": """axes : sequence of ints, optional
        Axes over which to compute the transform: all axes by default (the last
        ``len(s)`` if ``s`` is given); the last of them is the halved (real) axis.
        Repeated axes are transformed repeatedly, as numpy does (under the scipy
        backend they raise ``ValueError``). At least one axis is needed.""",
    "axes2": """axes : sequence of ints, optional
        Axes over which to compute the transform; the last two by default. Repeated
        axes are transformed repeatedly, as numpy does (under the scipy backend they
        raise ``ValueError``).""",
    "norm": """norm : {"backward", "ortho", "forward"}, optional
        Normalization: ``"backward"`` (default, also ``None``) scales the inverse
        transform by ``1/n``, ``"forward"`` the forward transform by ``1/n``,
        ``"ortho"`` both by ``1/sqrt(n)`` (``n``: the product of the transformed
        lengths).""",
    "common": """overwrite_x : bool, optional
        Accepted for scipy compatibility; the input is never overwritten.
    workers : int, optional
        Checked as scipy checks it: 0 raises ``ValueError``; a negative value counts
        back from ``os.cpu_count()`` (-1: all CPUs) and raises ``ValueError`` below
        ``-os.cpu_count()``. The transform does not depend on it: the NumPy engine's
        matrix products use numpy's BLAS threads, the CUDA engine the GPU.
    plan : ozfft.fourier.planner.Plan, optional
        A plan from :func:`ozfft.get_fft_plan`: its ``precision`` and ``moduli`` are
        used (they take precedence over the keywords, as its ``phase_a`` does where it
        names one), and it must have been made for
        this call: the input's shape and dtype, the transform's kind (``"c2c"``,
        ``"r2c"``, ``"c2r"``), axes and lengths (``ValueError`` otherwise). Any other
        object raises ``NotImplementedError``, as scipy.fft does for every precomputed
        plan; the scipy backend hands such calls to scipy.
    precision : {"fp64", "fp32"}, optional
        Target accuracy of the integer scheme: the width of the fixed-point lines and
        roots of unity (fp64: 62-bit lines, 54-bit roots; fp32: 30-bit), or with
        ``moduli`` the stage path's default moduli count (16, 8). It does not change
        the result's dtype.
    moduli : int, optional
        ``None`` (default) lets the planner choose per length: fixed-point digit stages
        on INT8 products where every prime factor is at most 64, Bluestein around them
        otherwise. An int from 2 to 20 forces the Ozaki-II stage path with that many
        INT8 moduli (CRT reconstruction).
    phase_a : {"int8", "fp8", "auto"}, optional
        The arithmetic of the exact integer products: ``"int8"`` (byte digits, one INT8
        product per digit pair), ``"fp8"`` (each byte digit as two 4-bit sub-digits,
        exact e4m3 values, four FP32-accumulated products per digit pair; with
        ``moduli``, FP8 moduli holding the bits of that many INT8 moduli, at most 18) or
        ``"auto"`` (INT8 on the NumPy engine and on GPUs whose dense INT8 rate is at
        least their FP8 rate, FP8 where INT8 is cut). Default ``None``: the
        ``OZFFT_PHASE_A`` environment variable, else ``"auto"``. Every product is exact
        either way, so the result does not depend on it (bit for bit; docs/numerics.md,
        "FP8 Phase A of the FFT"). On a GPU, ``"fp8"`` runs the fused passes' products
        as e4m3 ``mma.sync`` (compute capability 8.9 or later; a
        ``DeviceUnavailableError`` before).
    out : ndarray, optional
        Where to put the result (numpy 2's ``out``): an array of the input's kind
        (numpy or cupy) with exactly the result's shape and a dtype the result casts to
        under ``same_kind`` casting. It may overlap ``x``: the result is complete
        before it is written. It is returned.""",
    "returns_c": """out : complex ndarray
        The transform, an array of ``x``'s kind: complex64 for float16, float32 and
        complex64 input, complex128 otherwise (``out`` itself if given).""",
    "returns_r": """out : ndarray
        The real transform, an array of ``x``'s kind: float32 for float16, float32 and
        complex64 input, float64 otherwise (``out`` itself if given).""",
    "raises": """NonFiniteInputError
        ``x`` holds NaN or Inf, which the integer scheme cannot represent (a
        ``ValueError``; raised by ozfft's functions, while the scipy backend hands such
        calls to scipy).
    UnsupportedDTypeError
        ``x`` has another dtype, e.g. long double or object (a ``TypeError``; the scipy
        backend hands such calls to scipy).
    ValueError
        A length below 1, axes out of range, a bad ``norm``, ``workers``,
        ``precision``, ``moduli`` or ``phase_a`` (or ``OZFFT_PHASE_A``), a plan that
        does not fit, or ``out`` of the wrong shape.
    TypeError
        ``out`` that is not an array of the input's kind or cannot take the result's
        dtype.
    NotImplementedError
        ``plan`` that is not an ozfft plan; ``phase_a="fp8"`` with ``moduli`` for a cupy
        array (the Ozaki-II stage path's FP8 products run on the NumPy engine only).
    DeviceUnavailableError
        ``phase_a="fp8"`` for a cupy array on a GPU without FP8 tensor cores (compute
        capability below 8.9).
    PlanMemoryError
        A length's plan would need more than ``OZFFT_PLAN_MEMORY`` bytes.""",
    "raises_real": """TypeError
        ``x`` is complex (use the complex transform).""",
    "accuracy": """Accuracy: every stage is an exact integer product; a line is truncated to
    fixed point once (2^-62 of its largest component for fp64), consecutive axes of
    length <= 1024 hand their result on in fixed point and round to float64 once, at
    the end (longer lengths round once per pass), so the relative L2 error against a
    long-double reference is about 5e-17 to 1e-16 for fp64 (numpy's pocketfft: 1.5e-16
    to 3.5e-16) and 3e-8 for fp32. The result is deterministic and bit-identical on
    the NumPy and CUDA engines and with either ``phase_a`` (docs/numerics.md).""",
}


def _document(doc: str) -> str:
    for key, text in _DOC.items():
        doc = doc.replace("%(" + key + ")s", text)
    return doc


def _documented(function):
    function.__doc__ = _document(function.__doc__)
    return function


# --- public functions ---------------------------------------------------------------


@_documented
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
    phase_a=None,
    out=None,
):
    """1-D discrete Fourier transform, ``y[k] = sum_j x[j] exp(-2 pi i j k / n)``.

    Parameters
    ----------
    %(x)s
    %(n)s
    %(axis)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.fft(np.array([1.0, 2.0, 3.0, 4.0]))
    array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    return _c2c(
        x,
        None,
        None,
        norm,
        False,
        precision,
        moduli,
        n,
        axis,
        workers=workers,
        plan=plan,
        out=out,
        phase_a=phase_a,
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """1-D inverse discrete Fourier transform (``1/n`` scaling with the default
    ``norm="backward"``).

    Parameters
    ----------
    %(x)s
    %(n)s
    %(axis)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.ifft(np.array([10.0, -2 + 2j, -2.0, -2 - 2j]))
    array([1.-0.j, 2.-0.j, 3.-0.j, 4.-0.j])
    """
    return _c2c(
        x,
        None,
        None,
        norm,
        True,
        precision,
        moduli,
        n,
        axis,
        workers=workers,
        plan=plan,
        out=out,
        phase_a=phase_a,
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """N-D discrete Fourier transform over ``axes`` (all axes by default).

    Parameters
    ----------
    %(x)s
    %(s)s
    %(axes)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.fftn(np.ones((2, 3)))
    array([[6.+0.j, 0.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j, 0.+0.j]])
    >>> ozfft.fftn(np.ones((2, 3)), s=(-1, 4), axes=(0, 1)).shape
    (2, 4)
    """
    return _c2c(
        x,
        s,
        axes,
        norm,
        False,
        precision,
        moduli,
        workers=workers,
        plan=plan,
        out=out,
        phase_a=phase_a,
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """N-D inverse discrete Fourier transform over ``axes`` (all axes by default).

    Parameters
    ----------
    %(x)s
    %(s)s
    %(axes)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.ifftn(np.full((2, 2), 4.0))
    array([[4.-0.j, 0.-0.j],
           [0.-0.j, 0.-0.j]])
    """
    return _c2c(
        x,
        s,
        axes,
        norm,
        True,
        precision,
        moduli,
        workers=workers,
        plan=plan,
        out=out,
        phase_a=phase_a,
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """2-D discrete Fourier transform (over the last two axes by default).

    Parameters
    ----------
    %(x)s
    %(s)s
    %(axes2)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.fft2(np.eye(2))
    array([[2.+0.j, 0.+0.j],
           [0.+0.j, 2.+0.j]])
    """
    return _c2c(
        x,
        s,
        axes,
        norm,
        False,
        precision,
        moduli,
        workers=workers,
        plan=plan,
        out=out,
        phase_a=phase_a,
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """2-D inverse discrete Fourier transform (over the last two axes by default).

    Parameters
    ----------
    %(x)s
    %(s)s
    %(axes2)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.ifft2(np.array([[2.0, 0.0], [0.0, 2.0]]))
    array([[1.-0.j, 0.-0.j],
           [0.-0.j, 1.-0.j]])
    """
    return _c2c(
        x,
        s,
        axes,
        norm,
        True,
        precision,
        moduli,
        workers=workers,
        plan=plan,
        out=out,
        phase_a=phase_a,
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """1-D discrete Fourier transform of real input: the ``n//2 + 1`` non-negative
    frequency terms.

    Parameters
    ----------
    %(x_real)s
    %(n_r2c)s
    %(axis)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises_real)s
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.rfft(np.array([1.0, 2.0, 3.0, 4.0]))
    array([10.+0.j, -2.+2.j, -2.+0.j])
    """
    return _r2c(
        x, None, None, norm, workers, plan, precision, moduli, out, n, axis, phase_a=phase_a
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """Inverse of :func:`rfft`: the real length-``n`` signal whose spectrum has the
    given non-negative frequency terms (the imaginary parts of the zero and, for even
    ``n``, Nyquist terms are ignored).

    Parameters
    ----------
    %(x_herm)s
    %(n_c2r)s
    %(axis)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_r)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.irfft(np.array([10.0, -2 + 2j, -2.0]))
    array([1., 2., 3., 4.])
    """
    return _c2r(
        x, None, None, norm, workers, plan, precision, moduli, out, n, axis, phase_a=phase_a
    )


@_documented
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
    phase_a=None,
    out=None,
):
    """N-D discrete Fourier transform of real input; the last transformed axis keeps
    its ``s[-1]//2 + 1`` non-negative frequencies.

    Parameters
    ----------
    %(x_real)s
    %(s_r2c)s
    %(axes_real)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises_real)s
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.rfftn(np.ones((2, 4)))
    array([[8.+0.j, 0.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j, 0.+0.j]])
    """
    return _r2c(x, s, axes, norm, workers, plan, precision, moduli, out, phase_a=phase_a)


@_documented
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
    phase_a=None,
    out=None,
):
    """Inverse of :func:`rfftn`; the last transformed axis has length ``s[-1]``
    (default ``2 (m - 1)``). The imaginary parts of its zero (and Nyquist) terms are
    ignored.

    Parameters
    ----------
    %(x_herm)s
    %(s_c2r)s
    %(axes_real)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_r)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.irfftn(np.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.]])
    """
    return _c2r(x, s, axes, norm, workers, plan, precision, moduli, out, phase_a=phase_a)


@_documented
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
    phase_a=None,
    out=None,
):
    """2-D discrete Fourier transform of real input (over the last two axes by default;
    the last keeps its non-negative frequencies).

    Parameters
    ----------
    %(x_real)s
    %(s_r2c)s
    %(axes2)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_c)s

    Raises
    ------
    %(raises_real)s
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.rfft2(np.ones((2, 2)))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _r2c(x, s, axes, norm, workers, plan, precision, moduli, out, phase_a=phase_a)


@_documented
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
    phase_a=None,
    out=None,
):
    """Inverse of :func:`rfft2` (over the last two axes by default).

    Parameters
    ----------
    %(x_herm)s
    %(s_c2r)s
    %(axes2)s
    %(norm)s
    %(common)s

    Returns
    -------
    %(returns_r)s

    Raises
    ------
    %(raises)s

    Notes
    -----
    %(accuracy)s

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> ozfft.irfft2(np.array([[4.0, 0.0], [0.0, 0.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    return _c2r(x, s, axes, norm, workers, plan, precision, moduli, out, phase_a=phase_a)
