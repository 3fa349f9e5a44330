"""Slab-decomposed n-D FFTs over MPI ranks, bit for bit the single-process transform.

A :class:`Plan` for a global shape splits the first transformed axis ``axes[0]`` over the
ranks of a communicator (``input_slices``); ``forward`` runs the axes as
:func:`ozfft.fftn` does — last first, in the same runs of fixed-point passes
(:func:`ozfft.fourier.runs.axis_runs`) — transforming each axis where it is whole on
every rank and redistributing (one ``Alltoallv``) before a pass whose axis is split. The
forward result is split along ``axes[1]`` (``output_slices``: the layout a transpose-free
slab FFT ends in, as in mpi4py-fft and cuFFTMp); ``backward`` takes that layout and
returns the input's. A redistribution inside a run of fixed-point passes moves the
int64 parts and gathers the line exponents, so every element goes through the same
integers as in the single-process transform of the gathered array: the results are
bitwise equal for any rank count (docs/distributed.md).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..engines.select import numpy_engine
from ..errors import NonFiniteInputError
from ..fourier.cache import get_executor, get_plan
from ..fourier.runs import axis_runs, normalize, run_passes
from ..options import FFTOptions
from ..ozaki.fixed_point import Carried
from .exchange import agree, allgather_along, redistribute
from .layout import block_range, box, local_shape

__all__ = ["Plan", "fftn", "ifftn"]

_NORMS = ("backward", "ortho", "forward")


def _default_comm() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as exc:  # pragma: no cover - mpi4py is in the test extra
        raise ImportError(
            "ozfft.distributed needs mpi4py (pip install mpi4py mpich, or an MPI of your own)"
        ) from exc
    return MPI.COMM_WORLD


class Plan:
    """A distributed n-D complex FFT of ``global_shape`` over the ranks of ``comm``
    (default ``MPI.COMM_WORLD``), slab-decomposed.

    ``axes`` (default all, at least two, distinct): the transformed axes; ``axes[0]`` is
    split in the input, ``axes[1]`` in the output. ``norm``, ``precision`` and ``moduli``
    as in :func:`ozfft.fftn`. Every rank must build the plan with the same arguments (a
    mismatch raises ``ValueError`` on every rank). Local arrays are numpy arrays of the
    rank's box: ``local_input_shape`` (``input_slices`` of the global array) for
    :meth:`forward`, ``local_output_shape`` (``output_slices``) for :meth:`backward`.
    """

    def __init__(
        self,
        global_shape,
        comm: Any = None,
        *,
        decomposition: str = "slab",
        axes=None,
        norm: str | None = None,
        precision: str = "fp64",
        moduli: int | None = None,
    ) -> None:
        self.comm = _default_comm() if comm is None else comm
        size, rank = self.comm.Get_size(), self.comm.Get_rank()
        spec = (tuple(global_shape), decomposition, axes, norm, precision, moduli)
        problem = None
        try:
            shape, axes, norm, options = _validate(global_shape, decomposition, axes, norm,
                                                   precision, moduli)  # fmt: skip
        except (TypeError, ValueError) as exc:
            problem, shape, axes, norm, options = str(exc), (), (), "backward", None
        agree(self.comm, problem)
        specs = self.comm.allgather(repr(spec))
        if len(set(specs)) > 1:
            raise ValueError(
                "the ranks built the plan with different arguments: "
                + "; ".join(f"rank {r}: {s}" for r, s in enumerate(specs))
            )
        for a in axes[:2]:
            if size > shape[a]:
                raise ValueError(
                    f"{size} ranks cannot split axis {a} of length {shape[a]}: a slab "
                    f"decomposition needs at most {min(shape[b] for b in axes[:2])} ranks"
                )
        self.global_shape: tuple[int, ...] = shape
        self.axes: tuple[int, ...] = axes
        self.norm = norm
        self.decomposition = "slab"
        self._options = options
        self._size, self._rank = size, rank
        self._runs = axis_runs(shape, [shape[a] for a in axes], axes, options)
        #: this rank's box of the global input / output array
        self.input_slices = box(shape, axes[0], size, rank)
        self.output_slices = box(shape, axes[1], size, rank)
        self.local_input_shape = local_shape(shape, axes[0], size, rank)
        self.local_output_shape = local_shape(shape, axes[1], size, rank)

    def forward(self, x_local) -> np.ndarray:
        """The forward transform: this rank's ``input_slices`` block in, its
        ``output_slices`` block of ``ozfft.fftn(global)`` out (same bits)."""
        return self._execute(x_local, False, self.axes[0], self.axes[1], self.local_input_shape)

    def backward(self, y_local) -> np.ndarray:
        """The inverse transform: this rank's ``output_slices`` block in, its
        ``input_slices`` block of ``ozfft.ifftn(global)`` out (same bits)."""
        return self._execute(y_local, True, self.axes[1], self.axes[0], self.local_output_shape)

    # -- the passes ------------------------------------------------------------------
    def _execute(self, x, inverse: bool, split: int, end_split: int, expected) -> np.ndarray:
        problem = _check_local(x, expected)
        agree(self.comm, problem)
        bad = 0 if np.isfinite(x).all() else int((~np.isfinite(x)).sum())
        counts = self.comm.allgather(bad)
        if any(counts):
            raise NonFiniteInputError("x", sum(counts), "NaN or Inf")
        out_dtype = np.result_type(x.dtype, np.complex64)
        engine, shape, options = numpy_engine(), self.global_shape, self._options
        y = np.array(x, dtype=np.complex128, order="C")  # ours: every pass may overwrite it
        for run in self._runs:
            run_axes = [self.axes[i] for i in run]
            if inverse:
                np.conj(y, out=y)
            carry = None
            for k, axis in enumerate(run_axes):
                if axis == split:  # the pass needs its axis whole on every rank
                    to = self.axes[0] if axis != self.axes[0] else self.axes[1]
                    if carry is None:
                        y = redistribute(self.comm, y, shape, split, to)
                    else:
                        carry = self._move_carry(carry, split, to)
                    split = to
                if len(run_axes) == 1:
                    if shape[axis] > 1 and y.size:
                        y = get_executor(engine, get_plan(shape[axis], options)).forward(
                            y, axis, overwrite=True
                        )
                    continue
                last = k == len(run_axes) - 1
                result = run_passes(engine, y, [axis], options, True, carry, keep=not last)
                carry, y = (None, result) if last else (result, None)
            if inverse:
                np.conj(y, out=y)
            for axis in run_axes:
                normalize(y, shape[axis], self.norm, inverse)
        if split != end_split:
            y = redistribute(self.comm, y, shape, split, end_split)
        return y.astype(out_dtype, copy=False)

    def _move_carry(self, carry: Carried, split_from: int, split_to: int) -> Carried:
        """A carried block redistributed: the int64 parts move like values; every rank
        gathers the line exponents of the pass that made them and keeps its box's."""
        shape, axis = self.global_shape, carry.axis
        parts = redistribute(self.comm, carry.parts, shape, split_from, split_to)
        pos_from = split_from - (split_from > axis)
        exps = allgather_along(self.comm, carry.exponents, pos_from, shape[split_from])
        if split_to != axis:
            index = [slice(None)] * exps.ndim
            index[split_to - (split_to > axis)] = slice(
                *block_range(shape[split_to], self._size, self._rank)
            )
            exps = exps[tuple(index)]
        new_shape = local_shape(shape, split_to, self._size, self._rank)
        return Carried(parts, np.ascontiguousarray(exps), axis, new_shape)


def _validate(global_shape, decomposition, axes, norm, precision, moduli):
    if decomposition != "slab":
        raise ValueError(f"decomposition must be 'slab', got {decomposition!r}")
    try:
        shape = tuple(operator.index(n) for n in global_shape)
    except TypeError as exc:
        raise TypeError(f"global_shape must be a sequence of ints, got {global_shape!r}") from exc
    if len(shape) < 2 or min(shape) < 1:
        raise ValueError(f"global_shape must have at least 2 axes of length >= 1, got {shape}")
    if axes is None:
        axes = tuple(range(len(shape)))
    axes = tuple(operator.index(a) % len(shape) if -len(shape) <= a < len(shape) else a
                 for a in axes)  # fmt: skip
    if any(not 0 <= a < len(shape) for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"axes must be distinct axes of a {len(shape)}-d array, got {axes}")
    if len(axes) < 2:
        raise ValueError("a slab decomposition transforms at least 2 axes")
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or "forward"')
    options = FFTOptions(precision=precision, moduli=moduli)
    return shape, axes, norm, options


def _check_local(x, expected) -> str | None:
    if not isinstance(x, np.ndarray):
        return (
            f"local arrays must be numpy arrays (got {type(x).__module__}.{type(x).__name__}); "
            "GPU arrays are not supported by ozfft.distributed yet"
        )
    if x.dtype.kind not in "fc" or x.dtype == np.longdouble or x.dtype == np.clongdouble:
        return f"local array of dtype {x.dtype}: expected float32/64 or complex64/128"
    if tuple(x.shape) != tuple(expected):
        return f"local array of shape {tuple(x.shape)}, expected {tuple(expected)}"
    return None


def fftn(x_local, global_shape, comm: Any = None, **kwargs) -> np.ndarray:
    """``Plan(global_shape, comm, **kwargs).forward(x_local)``."""
    return Plan(global_shape, comm, **kwargs).forward(x_local)


def ifftn(y_local, global_shape, comm: Any = None, **kwargs) -> np.ndarray:
    """``Plan(global_shape, comm, **kwargs).backward(y_local)``."""
    return Plan(global_shape, comm, **kwargs).backward(y_local)
