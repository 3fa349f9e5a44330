"""A reusable FFT plan object, in the style of cupy's ``cupyx.scipy.fftpack.get_fft_plan``
and nvmath's stateful FFT: :class:`Plan` fixes the input shape, the axes, the transform
lengths, the dtype and the numerics (``precision``, ``moduli``) once, builds the
cached ozfft plans of every axis length up front (:func:`ozfft.fourier.cache.get_plan`),
and :meth:`Plan.execute` runs the transform through the public functions of
:mod:`.api` / :mod:`.hermitian` (so results are bit-identical to the direct calls, on
either engine).

Kinds and directions (pocketfft's four real transforms):

========  ====================  =======================
kind      ``inverse=False``     ``inverse=True``
========  ====================  =======================
``c2c``   :func:`~.api.fftn`    :func:`~.api.ifftn`
``r2c``   :func:`~.api.rfftn`   :func:`~.hermitian.ihfftn`
``c2r``   :func:`~.hermitian.hfftn`  :func:`~.api.irfftn`
========  ====================  =======================
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..engines.select import engine_for
from ..options import FFTOptions
from . import api, hermitian
from .cache import get_executor, get_plan
from .plan import FFTPlan

__all__ = ["KINDS", "Plan", "get_fft_plan"]

try:
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # numpy < 2
    from numpy.core.multiarray import normalize_axis_index  # type: ignore[no-redef]

#: the transform kinds a plan can hold
KINDS = ("c2c", "r2c", "c2r")

_FUNCTIONS = {
    ("c2c", False): api.fftn,
    ("c2c", True): api.ifftn,
    ("r2c", False): api.rfftn,
    ("r2c", True): hermitian.ihfftn,
    ("c2r", False): hermitian.hfftn,
    ("c2r", True): api.irfftn,
}


def _shape_of(x_or_shape) -> tuple[tuple[int, ...], np.dtype | None, Any]:
    """``(shape, dtype or None, the array or None)`` of an array, an int or a sequence."""
    if hasattr(x_or_shape, "shape") and hasattr(x_or_shape, "dtype"):
        return tuple(int(d) for d in x_or_shape.shape), np.dtype(x_or_shape.dtype), x_or_shape
    try:
        shape = (operator.index(x_or_shape),)
    except TypeError:
        try:
            shape = tuple(operator.index(d) for d in x_or_shape)
        except TypeError:
            raise TypeError(
                "x_or_shape must be an array, an int or a sequence of ints, got "
                f"{type(x_or_shape).__name__}"
            ) from None
    if any(d < 0 for d in shape):
        raise ValueError(f"shape must be non-negative, got {shape}")
    return shape, None, None


class Plan:
    """A transform fixed in advance: build with :func:`get_fft_plan`, run with
    :meth:`execute`.

    Attributes (read-only): ``kind`` (``"c2c"``, ``"r2c"``, ``"c2r"``), ``shape`` (of the
    input arrays it takes), ``axes`` (tuple of non-negative axes, in transform order as
    :func:`~ozfft.fftn` takes them), ``s`` (the transform length along each of them; for
    ``c2r`` the last one is the real output length), ``dtype`` (of the input),
    ``precision``, ``moduli``, ``phase_a`` (as given: ``None`` follows ``OZFFT_PHASE_A``
    at each call), ``out_shape``, ``nbytes``.

    The plan keeps its cached ozfft plans alive (``nbytes`` counts their host bytes);
    executing looks them up in the plan cache again, which hits while they stay in it
    (``OZFFT_PLAN_CACHE`` entries).
    """

    __slots__ = ("_axes", "_dtype", "_kind", "_options", "_plans", "_s", "_shape")

    def __init__(
        self,
        shape: tuple[int, ...],
        axes: tuple[int, ...],
        s: tuple[int, ...],
        dtype: np.dtype,
        kind: str,
        options: FFTOptions,
        plans: dict[int, FFTPlan],
    ) -> None:
        self._shape = shape
        self._axes = axes
        self._s = s
        self._dtype = dtype
        self._kind = kind
        self._options = options
        self._plans = plans

    # -- what the plan holds ---------------------------------------------------------

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def axes(self) -> tuple[int, ...]:
        return self._axes

    @property
    def s(self) -> tuple[int, ...]:
        return self._s

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def precision(self) -> str:
        return self._options.precision

    @property
    def moduli(self) -> int | None:
        return self._options.moduli

    @property
    def phase_a(self) -> str | None:
        """The arithmetic of Phase A the plan runs (``"int8"``, ``"fp8"``, ``"auto"``), or
        None: ``OZFFT_PHASE_A`` at each call. The result does not depend on it."""
        return self._options.phase_a

    @property
    def options(self) -> FFTOptions:
        return self._options

    @property
    def out_shape(self) -> tuple[int, ...]:
        """Shape of the result of :meth:`execute` (either direction)."""
        out = list(self._shape)
        for ax, n in zip(self._axes, self._s, strict=True):
            out[ax] = n
        if self._kind == "r2c":
            out[self._axes[-1]] = self._s[-1] // 2 + 1
        return tuple(out)

    @property
    def plans(self) -> dict[int, FFTPlan]:
        """``{length: cached FFTPlan}`` for every axis length ``>= 2``."""
        return dict(self._plans)

    @property
    def nbytes(self) -> int:
        """Host bytes of the underlying cached plans (arrays shared between them, e.g.
        sub-plans of four-step plans, counted once)."""
        arrays: dict[int, np.ndarray] = {}
        for plan in self._plans.values():
            arrays.update(plan.host_arrays())
        return sum(a.nbytes for a in arrays.values())

    def __repr__(self) -> str:
        schemes = ", ".join(f"{n}: {p.scheme}" for n, p in sorted(self._plans.items()))
        return (
            f"Plan(kind={self._kind!r}, shape={self._shape}, axes={self._axes}, s={self._s}, "
            f"dtype={self._dtype.name}, precision={self.precision!r}, moduli={self.moduli!r}, "
            f"phase_a={self.phase_a!r}, plans={{{schemes}}}, nbytes={self.nbytes})"
        )

    # -- use -------------------------------------------------------------------------

    def check(self, x) -> None:
        """Raise ``ValueError`` unless ``x`` has the plan's shape and dtype."""
        shape = tuple(getattr(x, "shape", ()))
        if shape != self._shape:
            raise ValueError(f"array shape {shape} does not match the plan's shape {self._shape}")
        dtype = getattr(x, "dtype", None)
        if dtype is None or np.dtype(dtype) != self._dtype:
            raise ValueError(f"array dtype {dtype} does not match the plan's dtype {self._dtype}")

    def execute(self, x, inverse: bool = False, norm: str | None = None):
        """Run the transform on ``x`` (an array of the plan's shape and dtype, numpy or
        cupy); ``inverse`` picks the direction (see the module's table), ``norm`` as in
        :func:`~ozfft.fftn`. Returns what the public function returns (a new array)."""
        self.check(x)
        fn = _FUNCTIONS[(self._kind, bool(inverse))]
        return fn(
            x,
            s=self._s,
            axes=self._axes,
            norm=norm,
            precision=self._options.precision,
            moduli=self._options.moduli,
            phase_a=self._options.phase_a,
        )

    __call__ = execute


def get_fft_plan(
    x_or_shape,
    axes=None,
    *,
    kind: str = "c2c",
    s=None,
    dtype=None,
    precision: str = "fp64",
    moduli: int | None = None,
    phase_a: str | None = None,
) -> Plan:
    """Build a :class:`Plan` for arrays like ``x_or_shape``.

    x_or_shape: an array (its shape and dtype; its engine's executors are prepared too),
        an int (1-D) or a shape tuple.
    axes: the axes to transform (int or sequence; default: all, or the last ``len(s)``).
    kind: ``"c2c"``, ``"r2c"`` (real input) or ``"c2r"`` (half-spectrum input, real output).
    s: transform length along each axis, as ``fftn``'s ``s`` (default: the input's;
        ``c2r``: ``2 (m - 1)`` along the last axis; ``-1`` means the input's length).
    dtype: input dtype (default: the array's, else complex128, float64 for ``r2c``).
    precision, moduli, phase_a: as for every ozfft transform
        (:class:`~ozfft.options.FFTOptions`); ``phase_a=None`` follows ``OZFFT_PHASE_A``
        when the plan runs.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    options = FFTOptions(precision=precision, moduli=moduli, phase_a=phase_a)
    shape, array_dtype, array = _shape_of(x_or_shape)
    if dtype is None:
        dtype = (
            array_dtype
            if array_dtype is not None
            else (np.float64 if kind == "r2c" else np.complex128)
        )
    dtype = np.dtype(dtype)
    allowed = "biuf" if kind == "r2c" else "biufc"
    if dtype.kind not in allowed:
        raise TypeError(f"dtype {dtype} is not a valid input dtype of a {kind} plan")
    if array_dtype is not None and dtype != array_dtype:
        raise ValueError(f"dtype {dtype} differs from the array's dtype {array_dtype}")

    ndim = len(shape)
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    elif isinstance(axes, int | np.integer):
        axes = (int(axes),)
    axes = tuple(normalize_axis_index(operator.index(a), ndim) for a in axes)
    if not axes:
        raise ValueError("a plan needs at least one axis to transform")
    if s is None:
        lengths = [shape[a] for a in axes]
        if kind == "c2r":
            lengths[-1] = 2 * (shape[axes[-1]] - 1)
    else:
        if isinstance(s, int | np.integer):
            s = (s,)
        lengths = [operator.index(n) for n in s]
        if len(lengths) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        lengths = [shape[a] if n == -1 else n for n, a in zip(lengths, axes, strict=True)]
    for n in lengths:
        if n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")

    plans = {n: get_plan(n, options) for n in sorted(set(lengths)) if n >= 2}
    if array is not None:
        engine = engine_for(array)
        phase = api.resolved_phase_a(options, engine)  # as a call would resolve it
        for plan in plans.values():
            get_executor(engine, plan, phase)
    return Plan(shape, axes, tuple(lengths), dtype, kind, options, plans)
