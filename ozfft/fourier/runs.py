"""Runs of axis passes: which axes of an n-D transform hand fixed point on, and the passes.

An n-D complex transform runs its axes last first (as numpy). Consecutive axes whose
plans are one-pass fixed-point plans, neither resized nor repeated, form a *run*: the
passes hand their result on in fixed point (:class:`~ozfft.ozaki.fixed_point.Carried`)
and only the run's last pass rounds to float64; every other axis is a run of its own.
The single-process API (:mod:`ozfft.fourier.api`) and the distributed transforms
(:mod:`ozfft.distributed`) take their runs from :func:`axis_runs`, so both compute the
same integers in the same order and agree bit for bit.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..options import FFTOptions
from .cache import get_executor, get_plan

__all__ = [
    "axis_runs",
    "carries",
    "carry_axis",
    "conjugated_input",
    "divisors",
    "hermitian_extension",
    "run_passes",
]


def carries(plan: Any) -> bool:
    """Whether passes of ``plan`` can hand fixed point on (one-pass fixed-point plans)."""
    return plan.scheme == "fixed" and plan.four_step is None and plan.bluestein is None


def carry_axis(shape, n, axis: int, options: FFTOptions) -> bool:
    """Whether a pass of length ``n`` along ``axis`` of ``shape`` can carry fixed point."""
    n = operator.index(n)
    return n > 1 and shape[axis] == n and math.prod(shape) > 0 and carries(get_plan(n, options))


def axis_runs(shape, lengths, axes, options: FFTOptions) -> list[list[int]]:
    """The runs of a transform of ``shape`` along ``axes`` (lengths ``lengths``): lists of
    indices into ``axes`` in processing order (the last axis first). A run of two or more
    carries fixed point; a run of one is a plain pass (which may resize its axis)."""
    shape = list(shape)
    order = list(reversed(range(len(axes))))
    runs: list[list[int]] = []
    i = 0
    while i < len(order):
        run = [order[i]]
        while (
            i + len(run) < len(order)
            and carry_axis(shape, lengths[order[i + len(run)]], axes[order[i + len(run)]], options)
            and axes[order[i + len(run)]] != axes[run[-1]]
        ):
            run.append(order[i + len(run)])
        if len(run) < 2 or not carry_axis(shape, lengths[run[0]], axes[run[0]], options):
            run = run[:1]
            shape[axes[run[0]]] = operator.index(lengths[run[0]])
        runs.append(run)
        i += len(run)
    return runs


def run_passes(
    engine,
    y,
    axes: list[int],
    options: FFTOptions,
    owned: bool,
    carry=None,
    keep: bool = False,
    check: Any = None,
    conj: bool = False,
):
    """The passes of (part of) a run along ``axes``, in this order, lengths unchanged:
    from complex ``y`` or from the ``carry`` of a previous pass; returns complex128, or
    with ``keep`` the :class:`~ozfft.ozaki.fixed_point.Carried` result of the last pass.
    No normalization and no conjugation of the result (the caller's, at the run's end).
    ``check``: the call's :class:`~ozfft.fourier.input_check.InputCheck`, offered to the
    first pass; ``conj``: the first pass transforms ``conj(y)`` (:func:`conjugated_input`)."""
    for k, axis in enumerate(axes):
        n = y.shape[axis] if carry is None else carry.shape[axis]
        more = keep or k < len(axes) - 1
        executor = get_executor(engine, get_plan(n, options), options.phase_a)
        flag = None
        if check is not None and k == 0 and carry is None:
            flag = check.flag(executor, y.shape)
        extra = {}
        if conj and k == 0:
            if carry is not None:
                raise ValueError("an inverse run starts from complex values")
            y, owned, extra = conjugated_input(engine.xp, executor, y, owned)
        result = executor.forward_carried(
            y if carry is None else None,
            axis,
            overwrite=owned,
            carry=carry,
            keep=more,
            nonfinite=flag,
            **extra,
        )
        if more:
            carry, y = result, None
        else:
            y = result
        owned = True
    return carry if keep else y


def divisors(lengths, norm: str, inverse: bool) -> tuple[float, ...]:
    """The divisors of the normalization of axes of these lengths, in order: "ortho"
    divides both directions by sqrt(n); otherwise the 1/n sits on the inverse
    ("backward") or on the forward transform ("forward"), and n = 1 divides by nothing."""
    if norm == "ortho":
        return tuple(math.sqrt(n) for n in lengths)
    if (norm == "forward") != inverse:
        return tuple(float(n) for n in lengths if n > 1)
    return ()


def conjugated_input(xp, executor, x, owned: bool) -> tuple[Any, bool, dict]:
    """What the first pass of an inverse transform (``conj(fft(conj x))``) is given:
    ``(x, owned, keywords)``. An executor that ``conjugates_input`` reads ``conj(x)`` as it
    loads (keywords ``conj_in=True``); for any other, ``x`` is conjugated here — in place
    where it is ours (``owned``), else into a new array. Both give the same integers."""
    if getattr(executor, "conjugates_input", False):
        return x, owned, {"conj_in": True}
    return (xp.conj(x, out=x) if owned else xp.conj(x)), True, {}


def hermitian_extension(xp, half, n: int, axis: int):
    """The full length-``n`` spectrum along ``axis`` of a real signal from its first
    ``n // 2 + 1`` values ``half`` (entries ``n - 1 .. n // 2 + 1`` the conjugates of
    ``1 .. (n - 1) // 2``): what an inverse real transform runs its last complex pass on."""
    moved = xp.moveaxis(half, axis, -1)
    full = xp.zeros((*moved.shape[:-1], n), np.complex128)
    full[..., : n // 2 + 1] = moved
    tail = (n - 1) // 2
    if tail:
        full[..., n - tail :] = xp.conj(moved[..., 1 : tail + 1][..., ::-1])
    return xp.moveaxis(full, -1, axis)
