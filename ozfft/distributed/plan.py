"""Slab- and pencil-decomposed n-D FFTs over MPI ranks, bit for bit the single-process
transform.

A :class:`Plan` for a global shape lays the ranks out on a grid of one dimension (slab)
or two (pencil: ``MPI.Compute_dims``); grid dimension ``d`` splits one axis of the array.
The input splits ``axes[0]`` (slab) or ``axes[0]`` and ``axes[1]`` (pencil).
``forward`` runs the axes as :func:`ozfft.fftn` does — last first, in the same runs of
fixed-point passes (:func:`ozfft.fourier.runs.axis_runs`) — transforming each axis where
it is whole; before a pass whose axis is split, the ranks of that grid dimension
redistribute (one ``Alltoallv``) so that it splits another axis (one transformed
already, else one not transformed). The forward result keeps the layout the passes end
in (``output_slices``: the transposed layout of mpi4py-fft and cuFFTMp); ``backward``
takes it and returns the input's. A redistribution inside a run of fixed-point passes
moves the int64 parts and gathers the line exponents, so every element goes through the
same integers as in the single-process transform of the gathered array: the results are
bitwise equal for any rank count and grid (docs/distributed.md).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..engines.select import array_module_name, cuda_engine, numpy_engine
from ..errors import NonFiniteInputError
from ..fourier.cache import get_executor, get_plan
from ..fourier.input_check import InputCheck
from ..fourier.runs import (
    axis_runs,
    carry_axis,
    conjugated_input,
    divisors,
    hermitian_extension,
    run_passes,
)
from ..options import FFTOptions
from ..ozaki.fixed_point import Carried
from .exchange import (
    MpiTransport,
    NcclTransport,
    allgather_along,
    raise_problems,
    redistribute,
    send_rows,
)
from .layout import block_range

__all__ = ["Plan", "fftn", "ifftn", "irfftn", "rfftn"]

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
    (default ``MPI.COMM_WORLD``).

    ``decomposition``: ``"slab"`` (the input split along ``axes[0]``) or ``"pencil"``
    (along ``axes[0]`` and ``axes[1]`` over a 2-D grid of ranks, ``grid`` or
    ``MPI.Compute_dims(size, 2)``; at least 3 axes). ``axes`` (default all, at least
    two, distinct): the transformed axes. ``real``: real input, the forward transform is
    :func:`ozfft.rfftn` (``axes[-1]`` kept to ``n // 2 + 1``) and the backward
    :func:`ozfft.irfftn` back to the plan's shape. ``norm``, ``precision`` and ``moduli``
    as in :func:`ozfft.fftn`. Every rank must build the plan with the same arguments (a
    mismatch raises ``ValueError`` on every rank). Local arrays are numpy arrays of the
    rank's box: ``local_input_shape`` (``input_slices`` of the global array) for
    :meth:`forward`, ``local_output_shape`` (``output_slices``) for :meth:`backward`.

    ``chunks``: the slab forward transform of complex data splits the block into this
    many chunks of planes along the split axis and sends each chunk while the next one
    is transformed (cupy arrays: the NCCL transfers on a second stream); None: 8 with
    cupy arrays (fewer where a rank's block has fewer planes), 1 with numpy arrays. The
    result is the same bits for any number.
    """

    def __init__(
        self,
        global_shape,
        comm: Any = None,
        *,
        decomposition: str = "slab",
        grid=None,
        axes=None,
        real: bool = False,
        norm: str | None = None,
        precision: str = "fp64",
        moduli: int | None = None,
        chunks: int | None = None,
    ) -> None:
        self.comm = _default_comm() if comm is None else comm
        size, rank = self.comm.Get_size(), self.comm.Get_rank()
        spec = (global_shape, decomposition, grid, axes, real, norm, precision, moduli, chunks)
        spec = (tuple(spec[0]), *spec[1:])
        problem, kind = None, ValueError
        try:
            shape, axes, norm, options, dims = _validate(
                global_shape, decomposition, grid, axes, norm, precision, moduli, size
            )
            if chunks is not None and (operator.index(chunks) < 1):
                raise ValueError(f"chunks must be a positive int, got {chunks!r}")
        except (TypeError, ValueError) as exc:
            problem, kind = str(exc), type(exc)
        # one exchange: every rank's problem (a TypeError where any rank has one) and spec
        found = self.comm.allgather((problem, kind is TypeError, repr(spec)))
        typed = any(t for _, t, _ in found)
        raise_problems([p for p, _, _ in found], TypeError if typed else ValueError)
        specs = [sp for _, _, sp in found]
        if len(set(specs)) > 1:
            raise ValueError(
                "the ranks built the plan with different arguments: "
                + "; ".join(f"rank {r}: {s}" for r, s in enumerate(specs))
            )
        self.global_shape: tuple[int, ...] = shape
        self.axes: tuple[int, ...] = axes
        self.norm = norm
        self.decomposition = decomposition
        self.grid: tuple[int, ...] = dims
        self._options = options
        self.real = bool(real)
        self._input_split = tuple(axes[: len(dims)])
        if self.real:
            # as ozfft.rfftn / irfftn: the real axis last-transformed-first, then the rest
            last, n = axes[-1], shape[axes[-1]]
            half = tuple(n // 2 + 1 if a == last else m for a, m in enumerate(shape))
            inner = axes[:-1][::-1]
            self._half_shape = half
            self._fused_first = carry_axis(shape, n, last, options)
            self._keep_first = (
                self._fused_first
                and len(axes) > 1
                and axes[-2] != last
                and carry_axis(half, half[axes[-2]], axes[-2], options)
            )
            self._runs = axis_runs(half, [half[a] for a in axes[:-1]], axes[:-1], options)
            self._back_runs = axis_runs(half, [half[a] for a in inner], inner, options)
            order = [last] + [axes[:-1][i] for run in self._runs for i in run]
            back = [inner[i] for run in self._back_runs for i in run] + [last]
            out_shape = half
        else:
            self._runs = axis_runs(shape, [shape[a] for a in axes], axes, options)
            order = [axes[i] for run in self._runs for i in run]
            back = order
            out_shape = shape
        self._forward = _schedule(order, self._input_split, None, out_shape, axes, dims)
        self._output_split = self._forward[-1]
        self._backward = _schedule(
            back, self._output_split, self._input_split, out_shape, axes, dims
        )
        self._chunks = None if chunks is None else operator.index(chunks)
        self._overlap = None if self.real else _overlap_split(self._forward, order, self._runs)
        # the grid: rank = row-major index of its coordinates; one communicator per
        # grid dimension of the ranks that differ only in that coordinate
        self._coords = tuple(int(c) for c in np.unravel_index(rank, dims))
        self._sub = []
        for d in range(len(dims)):
            others = [c for e, c in enumerate(self._coords) if e != d]
            sizes = [n for e, n in enumerate(dims) if e != d]
            color = int(np.ravel_multi_index(others, sizes)) if others else 0
            self._sub.append(self.comm.Split(color, self._coords[d]))
        # per array kind: (array module, engine, one transport per grid dimension); the
        # NCCL communicators are built on the first call with device arrays
        self._contexts: dict[str, tuple[Any, Any, list]] = {}
        #: this rank's box of the global input / output array
        self.input_slices = self._box(self._input_split)
        self.output_slices = self._box(self._output_split, out_shape)
        self.local_input_shape = self._local_shape(self._input_split)
        self.local_output_shape = self._local_shape(self._output_split, out_shape)

    def _box(self, split, shape=None) -> tuple[slice, ...]:
        shape = self.global_shape if shape is None else shape
        index = [slice(0, n) for n in shape]
        for d, axis in enumerate(split):
            index[axis] = slice(*block_range(shape[axis], self.grid[d], self._coords[d]))
        return tuple(index)

    def _local_shape(self, split, shape=None) -> tuple[int, ...]:
        return tuple(s.stop - s.start for s in self._box(split, shape))

    def forward(self, x_local) -> np.ndarray:
        """The forward transform: this rank's ``input_slices`` block in, its
        ``output_slices`` block of ``ozfft.fftn(global)`` (``rfftn`` for a real plan)
        out, the same bits."""
        if self.real:
            return self._real_forward(x_local)
        return self._execute(x_local, False, self._forward, self.local_input_shape)

    def backward(self, y_local) -> np.ndarray:
        """The inverse transform: this rank's ``output_slices`` block in, its
        ``input_slices`` block of ``ozfft.ifftn(global)`` (``irfftn`` with the plan's
        shape for a real plan) out, the same bits."""
        if self.real:
            return self._real_backward(y_local)
        return self._execute(y_local, True, self._backward, self.local_output_shape)

    # -- the passes ------------------------------------------------------------------
    def _checked(self, x, expected, kinds: str):
        """``x`` after the collective checks (array kind, shape, dtype; numpy arrays:
        finite on every rank), in one exchange, and the input's non-finite test that
        :meth:`_agree_finite` ends the call with (device arrays: the first pass raises a
        flag as it loads, :class:`~ozfft.fourier.input_check.InputCheck`; None for
        numpy, tested here); selects the context (array module, engine, transports) of
        its kind."""
        kind = array_module_name(x)
        problem, bad = _check_local(x, expected, kinds), 0
        if problem is None and kind == "numpy":
            bad = int((~np.isfinite(x)).sum())
        found = self.comm.allgather((problem, kind, bad))
        raise_problems([p for p, _, _ in found])
        kinds_found = [k for _, k, _ in found]
        if len(set(kinds_found)) > 1:
            raise ValueError(f"the ranks passed arrays of different kinds: {kinds_found}")
        if any(b for _, _, b in found):
            raise NonFiniteInputError("x", sum(b for _, _, b in found), "NaN or Inf")
        self._xp, self._engine, self._tx = self._context(kind)
        return x, (
            None if kind == "numpy" else InputCheck(self._xp, x, self._engine.new_input_flag)
        )

    def _agree_finite(self, check, x) -> None:
        """The end of every call with device arrays, after its last exchange: each rank
        reads its input test, and if any rank's input held NaN or Inf, every rank raises
        the same :class:`~ozfft.errors.NonFiniteInputError` (one exchange, no hang)."""
        if check is None:
            return
        found = None
        try:
            check()
        except NonFiniteInputError:
            xp = self._xp
            found = (int((~xp.isfinite(x)).sum()), bool(xp.isnan(x).any()), bool(xp.isinf(x).any()))
        bad = [f for f in self.comm.allgather(found) if f is not None]
        if bad:
            names = (("NaN", 1), ("Inf", 2))
            kinds = " and ".join(n for n, i in names if any(f[i] for f in bad))
            raise NonFiniteInputError("x", sum(f[0] for f in bad), kinds)

    def _context(self, kind: str):
        if kind not in self._contexts:
            if kind == "cupy":
                import cupy

                transports = [NcclTransport(sub) for sub in self._sub]
                self._contexts[kind] = (cupy, cuda_engine(), transports)
            else:
                transports = [MpiTransport(sub) for sub in self._sub]
                self._contexts[kind] = (np, numpy_engine(), transports)
        return self._contexts[kind]

    def _moves(self, y, carry, split: list, moves, shape):
        """Apply the redistributions ``moves`` to ``y`` or to ``carry``."""
        for d, old, new in moves:
            if carry is None:
                y = redistribute(self._tx[d], y, self._sub_shape(split, old, shape), old, new)
            else:
                carry = self._move_carry(carry, split, d, old, new, shape)
            split[d] = new
        return y, carry

    def _run(
        self, held: list, run_axes, inverse: bool, moves, split: list, shape, owned=True, check=None
    ):
        """One run of passes (a single pass, or passes carrying fixed point, continuing
        a :class:`Carried` block), with the redistributions before each pass; then, as
        the single-process API, conjugation and each axis's normalization. ``held`` is a
        list whose last element is the block or the carried block: taken out of it here,
        so that no caller keeps a block alive that the passes have replaced (at 2048³
        complex128 on 4 GPUs each block is 32 GiB). ``owned``: the block is ours (else the
        caller's input: the first pass writes a new array); ``check``: the call's input
        test, offered to the first pass."""
        xp, engine, options = self._xp, self._engine, self._options
        y = held.pop()
        carry, y = (y, None) if isinstance(y, Carried) else (None, y)
        if inverse:  # conj(x) before the exchanges, so no executor reads it conjugated
            y, owned, _ = conjugated_input(xp, None, y, owned)
        for k, axis in enumerate(run_axes):
            before = y
            y, carry = self._moves(y, carry, split, next(moves), shape)
            owned = owned or (carry is None and y is not before)
            if len(run_axes) == 1 and carry is None:
                if shape[axis] > 1 and y.size:
                    executor = get_executor(engine, get_plan(shape[axis], options))
                    flag = check.flag(executor, y.shape) if check is not None else None
                    y, owned = executor.forward(y, axis, overwrite=owned, nonfinite=flag), True
                continue
            last = k == len(run_axes) - 1
            first = check if k == 0 else None
            result = run_passes(
                engine, y, [axis], options, owned, carry, keep=not last, check=first
            )
            carry, y = (None, result) if last else (result, None)
            owned = True
        if not owned:  # no pass ran (length 1): the steps below work in place
            y = y.copy()
        engine.conj_divide(y, inverse, divisors([shape[a] for a in run_axes], self.norm, inverse))
        return y

    def _execute(self, x, inverse: bool, schedule, expected) -> np.ndarray:
        x, check = self._checked(x, expected, "fc")
        out_dtype = np.result_type(x.dtype, np.complex64)
        y = self._xp.ascontiguousarray(x, dtype=np.complex128)
        owned = y is not x  # else the caller's: the first pass writes a new array
        split, moves = list(schedule[0]), iter(schedule[1:-1])
        chunks = self._chunk_count(x)
        if not inverse and self._overlap is not None and chunks > 1:
            y = self._overlapped(y, owned, check, chunks)  # every chunk's first pass: one flag
        else:
            held, first = [y], check
            del y
            for run in self._runs:
                run_axes = [self.axes[i] for i in run]
                held.append(
                    self._run(
                        held, run_axes, inverse, moves, split, self.global_shape, owned, first
                    )
                )
                owned, first = True, None
            y, _ = self._moves(held.pop(), None, split, next(moves), self.global_shape)
        self._agree_finite(check, x)
        return y.astype(out_dtype, copy=False)

    def _chunk_count(self, x) -> int:
        """The chunks of an overlapped forward transform (1: no overlap, and always on
        one rank, where chunks would only cost time); the same on every rank (a function
        of the plan and of the array kind, which the ranks agree on)."""
        if self._overlap is None or self.grid[0] == 1:
            return 1  # one rank along the exchange: nothing to overlap the chunks with
        want = self._chunks
        if want is None:
            want = 8 if array_module_name(x) == "cupy" else 1
        _, s, _ = self._overlap
        return max(1, min(want, self.global_shape[s] // self.grid[0]))

    def _overlapped(self, y, owned: bool, check, chunks: int):
        """The slab forward transform with its one exchange overlapped: the passes
        before the exchange (along axes the split axis ``s`` does not cut) run on
        ``chunks`` chunks of planes along ``s`` in turn, and each chunk's pieces travel
        (:func:`~ozfft.distributed.exchange.send_rows`; with cupy on a second stream,
        after an event) while the next chunk is transformed; the rest of the passes
        runs on the assembled block. Every line goes through the same integers as
        without chunks: the passes transform whole lines, each with its own exponent,
        and a run carrying fixed point across the exchange moves its int64 parts and
        gathers the chunks' line exponents afterwards."""
        xp, engine, options, shape = self._xp, self._engine, self._options, self.global_shape
        j, s, t = self._overlap
        tx = self._tx[0]
        size, rank = tx.size, tx.rank
        runs = [[self.axes[i] for i in run] for run in self._runs]
        r, pos = 0, 0
        while pos + len(runs[r]) <= j:
            pos += len(runs[r])
            r += 1
        before, partial, rest = runs[:r], runs[r][: j - pos], runs[r][j - pos :]
        blocks = [block_range(shape[s], size, p) for p in range(size)]
        out_shape = self._local_shape([t])
        out = None  # the parts' layout (the numpy engine's int64 pairs trail) from chunk 0
        stream = None
        if xp is not np:
            if getattr(self, "_stream", None) is None:
                self._stream = xp.cuda.Stream(non_blocking=True)
            stream = self._stream
        keep, unpacks, exps = [], [], []
        axis_c, flat = None, False
        for c in range(chunks):
            rows = []
            for a, b in blocks:
                lo, hi = block_range(b - a, chunks, c)
                rows.append((a + lo, a + hi))
            index = [slice(None)] * y.ndim
            index[s] = slice(rows[rank][0] - blocks[rank][0], rows[rank][1] - blocks[rank][0])
            piece = y[tuple(index)]
            if piece.size:
                if check is not None:
                    check.expect_part()
                piece = self._prefix(piece, before, partial, owned, check)
                if isinstance(piece, Carried):
                    axis_c, flat = piece.axis, piece.exponents.ndim == 1
                    rest_shape = [n for a, n in enumerate(piece.shape) if a != axis_c]
                    exps.append(piece.exponents.reshape(rest_shape))
                    piece = piece.parts
            if out is None:
                out = xp.empty((*out_shape, *piece.shape[len(shape) :]), piece.dtype)
            bufs, unpack = send_rows(tx, piece, out, shape, s, t, rows, stream)
            keep.append(bufs)
            if unpack is not None:
                unpacks.append(unpack)
            del piece
        if stream is not None:  # the compute stream waits for the last transfer
            xp.cuda.get_current_stream().wait_event(stream.record())
        for unpack in unpacks:
            unpack()
        del keep, unpacks, y
        split, none = [t], iter(lambda: [], None)
        if partial:
            local = xp.concatenate(exps, axis=s - (s > axis_c))
            moved = self._move_exponents(local, axis_c, [s], 0, s, t, shape, flat)
            carry = Carried(out, moved, axis_c, out_shape)
            del out, local, exps
            z = run_passes(engine, None, rest, options, True, carry, keep=False)
            del carry
            engine.conj_divide(z, False, divisors([shape[a] for a in runs[r]], self.norm, False))
            r += 1
        else:
            z = out
            del out
        held = [z]
        del z
        for run_axes in runs[r:]:
            held.append(self._run(held, run_axes, False, none, split, shape))
        return held.pop()

    def _prefix(self, piece, before, partial, owned: bool, check):
        """The passes of one chunk before the exchange: the runs ``before`` (each
        rounded and normalized), then the passes ``partial`` of a run that carries fixed
        point across the exchange (the :class:`Carried` result)."""
        none, split = iter(lambda: [], None), list(self._forward[0])
        for run_axes in before:
            held = [piece]
            del piece
            piece = self._run(held, run_axes, False, none, split, self.global_shape, owned, check)
            owned, check = True, None
        if partial:
            return run_passes(
                self._engine, piece, partial, self._options, owned, None, keep=True, check=check
            )
        return piece

    def _real_forward(self, x) -> np.ndarray:
        """rfftn as :func:`ozfft.rfftn`: the real-input pass along ``axes[-1]`` (fused:
        it reads the reals, keeps ``n // 2 + 1`` outputs and may carry fixed point on),
        then the complex runs of the other axes on the halved shape."""
        x, check = self._checked(x, self.local_input_shape, "f")
        out_dtype = np.result_type(x.dtype, np.complex64)
        xp, engine, options = self._xp, self._engine, self._options
        full, half, last = self.global_shape, self._half_shape, self.axes[-1]
        split, moves = list(self._forward[0]), iter(self._forward[1:-1])
        y, _ = self._moves(xp.ascontiguousarray(x, np.float64), None, split, next(moves), full)
        carry = None
        if self._fused_first:
            executor = get_executor(engine, get_plan(full[last], options))
            flag = check.flag(executor, y.shape) if check is not None else None
            result = executor.forward_real(y, last, keep=self._keep_first, nonfinite=flag)
            carry, y = (result, None) if self._keep_first else (None, result)
        else:  # as _c2c_axis: the complex pass, its normalization, then the crop
            y = y.astype(np.complex128)
            if full[last] > 1 and y.size:
                executor = get_executor(engine, get_plan(full[last], options))
                flag = check.flag(executor, y.shape) if check is not None else None
                y = executor.forward(y, last, overwrite=True, nonfinite=flag)
            engine.conj_divide(y, False, divisors((full[last],), self.norm, False))
            index = [slice(None)] * y.ndim
            index[last] = slice(0, half[last])
            y = xp.ascontiguousarray(y[tuple(index)])
        held = [y if carry is None else carry]
        del y, carry
        for run in self._runs:
            run_axes = [self.axes[:-1][i] for i in run]
            held.append(self._run(held, run_axes, False, moves, split, half))
        y = held.pop()
        if self._fused_first:
            engine.conj_divide(y, False, divisors((full[last],), self.norm, False))
        y, _ = self._moves(y, None, split, next(moves), half)
        self._agree_finite(check, x)
        return y.astype(out_dtype, copy=False)

    def _real_backward(self, y) -> np.ndarray:
        """irfftn as :func:`ozfft.irfftn` with the plan's shape: the inverse complex runs
        of ``axes[:-1]``, the Hermitian extension of ``axes[-1]`` to its full length,
        its inverse complex pass, the real part."""
        y, check = self._checked(y, self.local_output_shape, "fc")
        out_dtype = np.float32 if y.dtype == np.complex64 or y.dtype == np.float32 else np.float64
        xp, engine, options = self._xp, self._engine, self._options
        full, half, last = self.global_shape, self._half_shape, self.axes[-1]
        split, moves = list(self._backward[0]), iter(self._backward[1:-1])
        z = xp.ascontiguousarray(y, dtype=np.complex128)
        owned = z is not y  # else the caller's: the first run conjugates into a new array
        inner = self.axes[:-1][::-1]
        held, first = [z], check
        del z
        for run in self._back_runs:
            run_axes = [inner[i] for i in run]
            held.append(self._run(held, run_axes, True, moves, split, half, owned, first))
            owned, first = True, None
        z = held.pop()
        z, _ = self._moves(z, None, split, next(moves), half)
        n = full[last]
        ext = xp.ascontiguousarray(hermitian_extension(xp, z, n, last))
        xp.conj(ext, out=ext)
        if n > 1 and ext.size:
            ext = get_executor(engine, get_plan(n, options)).forward(ext, last, overwrite=True)
        engine.conj_divide(ext, True, divisors((n,), self.norm, True))
        out = xp.ascontiguousarray(ext.real)
        out, _ = self._moves(out, None, split, next(moves), full)
        self._agree_finite(check, y)
        return out.astype(out_dtype, copy=False)

    def _sub_shape(self, split, old: int, shape=None) -> tuple[int, ...]:
        """The shape the ranks of one grid dimension share: the global shape with the
        axes the other dimensions split at this rank's block lengths (``old`` whole)."""
        shape = self.global_shape if shape is None else shape
        local = list(self._local_shape(split, shape))
        local[old] = shape[old]
        return tuple(local)

    def _move_carry(self, carry: Carried, split, d: int, old: int, new: int, shape) -> Carried:
        """A carried block redistributed within grid dimension ``d``: the int64 parts
        move like values; the ranks gather the line exponents of the pass that made them
        and keep their box's (the CUDA engine keeps its exponents flat)."""
        axis, tx = carry.axis, self._tx[d]
        parts = redistribute(tx, carry.parts, self._sub_shape(split, old, shape), old, new)
        rest = [n for a, n in enumerate(carry.shape) if a != axis]
        flat = carry.exponents.ndim == 1
        exps = self._move_exponents(
            carry.exponents.reshape(rest), axis, split, d, old, new, shape, flat
        )
        moved = list(split)
        moved[d] = new
        return Carried(parts, exps, axis, self._local_shape(moved, shape))

    def _move_exponents(self, exps, axis: int, split, d: int, old: int, new: int, shape, flat):
        """The line exponents of a carried block (``exps``: one per line along ``axis``,
        shaped as the block without it) for the layout with grid dimension ``d`` moved
        from ``old`` to ``new``: gathered over ``old``, cropped to this rank's block of
        ``new``; flattened with ``flat`` (the CUDA engine's)."""
        exps = allgather_along(self._tx[d], exps, old - (old > axis), shape[old])
        if new != axis:
            index = [slice(None)] * exps.ndim
            block = block_range(shape[new], self.grid[d], self._coords[d])
            index[new - (new > axis)] = slice(*block)
            exps = exps[tuple(index)]
        exps = self._xp.ascontiguousarray(exps)
        return exps.reshape(-1) if flat else exps


def _overlap_split(schedule, order, runs) -> tuple[int, int, int] | None:
    """``(j, s, t)`` where a slab forward transform can overlap its exchange with the
    passes before it: its one redistribution, from a split along ``s`` to one along
    ``t``, comes before pass ``j`` > 0 (the passes before it run along other axes);
    else None."""
    start, steps, end_moves = schedule[0], schedule[1:-2], schedule[-2]
    if len(start) != 1 or end_moves:
        return None
    moved = [i for i, m in enumerate(steps) if m]
    if len(moved) != 1 or moved[0] == 0 or len(steps[moved[0]]) != 1:
        return None
    _, s, t = steps[moved[0]][0]
    return moved[0], s, t


def _schedule(order, start, end, shape, axes, dims) -> list:
    """The layouts of a transform: ``[start split, moves before pass 1, ..., moves
    before the last pass, moves at the end, end split]``, a move being ``(grid
    dimension, old axis, new axis)``. Before a pass whose axis a dimension splits, that
    dimension moves to an axis no dimension splits: the most recently transformed first,
    then the untransformed axes, then the ones still to come. ``end`` None: stay."""
    split = list(start)
    steps: list = [tuple(start)]
    done: list[int] = []

    def fits(d: int, a: int) -> bool:
        return a not in split and shape[a] >= dims[d]

    for axis in order:
        moves = []
        if axis in split:
            d = split.index(axis)
            rest = [a for a in order[len(done) + 1 :]]
            untransformed = [a for a in range(len(shape)) if a not in axes]
            choices = [a for a in [*reversed(done), *untransformed, *rest] if a != axis]
            target = next((a for a in choices if fits(d, a)), None)
            if target is None:
                raise ValueError(
                    f"no axis can take the {dims[d]}-way split off axis {axis} of {shape}"
                )
            moves.append((d, axis, target))
            split[d] = target
        steps.append(moves)
        done.append(axis)
    moves = []
    if end is not None:
        for _ in range(2 * len(dims) + 2):
            if list(end) == split:
                break
            for d in range(len(dims)):
                if split[d] != end[d] and end[d] not in split:
                    moves.append((d, split[d], end[d]))
                    split[d] = end[d]
                    break
            else:  # a cycle: park one dimension on a free axis
                d = next(e for e in range(len(dims)) if split[e] != end[e])
                free = next(a for a in range(len(shape)) if a not in split and a not in end
                            and shape[a] >= dims[d])  # fmt: skip
                moves.append((d, split[d], free))
                split[d] = free
    steps.append(moves)
    steps.append(tuple(split))
    return steps


def _validate(global_shape, decomposition, grid, axes, norm, precision, moduli, size):
    if decomposition not in ("slab", "pencil"):
        raise ValueError(f"decomposition must be 'slab' or 'pencil', got {decomposition!r}")
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
        raise ValueError("a distributed transform needs at least 2 transformed axes")
    if decomposition == "slab":
        if grid is not None and tuple(grid) != (size,):
            raise ValueError(f"a slab grid is the {size} ranks in one dimension, got {grid}")
        dims: tuple[int, ...] = (size,)
    else:
        if len(shape) < 3:
            raise ValueError("a pencil decomposition needs an array of at least 3 axes")
        if grid is None:
            from mpi4py import MPI

            grid = MPI.Compute_dims(size, 2)
        dims = tuple(operator.index(g) for g in grid)
        if len(dims) != 2 or min(dims) < 1 or dims[0] * dims[1] != size:
            raise ValueError(
                f"a pencil grid is 2 positive ints whose product is {size}, got {grid}"
            )
    for d, a in enumerate(axes[: len(dims)]):
        if dims[d] > shape[a]:
            raise ValueError(
                f"{dims[d]} ranks cannot split axis {a} of length {shape[a]} "
                f"({decomposition} grid {dims})"
            )
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or "forward"')
    options = FFTOptions(precision=precision, moduli=moduli)
    return shape, axes, norm, options, dims


def _check_local(x, expected, kinds: str = "fc") -> str | None:
    if array_module_name(x) not in ("numpy", "cupy") or not hasattr(x, "dtype"):
        return (
            "local arrays must be numpy (MPI) or cupy (NCCL) arrays, got "
            f"{type(x).__module__}.{type(x).__name__}"
        )
    if x.dtype.kind not in kinds or x.dtype == np.longdouble or x.dtype == np.clongdouble:
        want = "float32/64" if kinds == "f" else "float32/64 or complex64/128"
        return f"local array of dtype {x.dtype}: expected {want}"
    if tuple(x.shape) != tuple(expected):
        return f"local array of shape {tuple(x.shape)}, expected {tuple(expected)}"
    return None


def fftn(x_local, global_shape, comm: Any = None, **kwargs) -> np.ndarray:
    """``Plan(global_shape, comm, **kwargs).forward(x_local)``."""
    return Plan(global_shape, comm, **kwargs).forward(x_local)


def ifftn(y_local, global_shape, comm: Any = None, **kwargs) -> np.ndarray:
    """``Plan(global_shape, comm, **kwargs).backward(y_local)``."""
    return Plan(global_shape, comm, **kwargs).backward(y_local)


def rfftn(x_local, global_shape, comm: Any = None, **kwargs) -> np.ndarray:
    """``Plan(global_shape, comm, real=True, **kwargs).forward(x_local)``."""
    return Plan(global_shape, comm, real=True, **kwargs).forward(x_local)


def irfftn(y_local, global_shape, comm: Any = None, **kwargs) -> np.ndarray:
    """``Plan(global_shape, comm, real=True, **kwargs).backward(y_local)``: the real
    array of ``global_shape`` (the shape of the real input, not of the halved spectrum)."""
    return Plan(global_shape, comm, real=True, **kwargs).backward(y_local)
