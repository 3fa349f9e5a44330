"""The plan cache and the executor cache (bounded LRUs, ``OZFFT_PLAN_CACHE`` entries).

Plans are host descriptions keyed by ``(n, scheme, precision or moduli)``; the
sub-plans of four-step and Bluestein plans are entries of their own (shared between the
plans that use them). Every plan's bytes are estimated before it is built
(``OZFFT_PLAN_MEMORY``, :class:`~ozfft.errors.PlanMemoryError`). Executors are plans
prepared for one engine and device (they own device state) and are keyed by the
engine's :meth:`~ozfft.engines.base.Engine.device_key`, the plan key and the arithmetic of
Phase A (``"int8"``, ``"fp8"``: the same plan, the same integers, other products).
:func:`clear_plan_cache` drops both.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Any

from .. import config
from ..engines.base import Engine
from ..engines.select import numpy_engine, resolve_phase_a
from ..errors import PlanMemoryError
from ..options import FFTOptions
from .bluestein import BluesteinExecutor, build_bluestein_plan
from .execute import FFTExecutor, StageExecutor
from .fixed import fixed_executor
from .plan import (
    FFTPlan,
    bluestein_length,
    build_fixed_plan,
    build_stage_plan,
    estimate_fixed_plan_bytes,
    estimate_stage_plan_bytes,
    factorize,
    fixed_layout,
)

__all__ = ["clear_plan_cache", "get_executor", "get_plan", "plan_cache_info", "plan_key"]

_PLANS: OrderedDict[tuple, FFTPlan] = OrderedDict()
_EXECUTORS: OrderedDict[tuple, FFTExecutor] = OrderedDict()
_LOCK = Lock()
_HITS = [0, 0]


def plan_key(n: int, options: FFTOptions) -> tuple:
    """``(n, "fixed", precision)`` where the fixed-point scheme applies (one pass,
    four-step or Bluestein around a fixed-point plan, see :func:`~.plan.fixed_layout`)
    and no moduli count is forced, else ``(n, "ozaki", moduli)``."""
    if options.moduli is None and fixed_layout(n) is not None:
        return (n, "fixed", options.precision)
    return (n, "ozaki", options.num_moduli)


def _build(key: tuple) -> FFTPlan:
    n, scheme, param = key
    limit = config.plan_memory_limit()
    if scheme == "fixed":
        needed = estimate_fixed_plan_bytes(n, param)
        if needed > limit:
            raise PlanMemoryError(n, needed, limit)
        if fixed_layout(n) == "bluestein":
            return _bluestein(n, (bluestein_length(n), "fixed", param))
        return build_fixed_plan(n, param, sub_plan=lambda m: _cached(m, (m, "fixed", param)))
    needed = estimate_stage_plan_bytes(n, param)
    if needed > limit:
        raise PlanMemoryError(n, needed, limit)
    if factorize(n) is not None:
        return build_stage_plan(n, param)
    return _bluestein(n, (bluestein_length(n), "ozaki", param))


def _bluestein(n: int, inner_key: tuple) -> FFTPlan:
    inner = _cached(inner_key[0], inner_key)
    return build_bluestein_plan(n, inner, get_executor(numpy_engine(), inner))


def _cached(n: int, key: tuple) -> FFTPlan:
    with _LOCK:
        plan = _PLANS.get(key)
        if plan is not None:
            _PLANS.move_to_end(key)
            _HITS[0] += 1
            return plan
    plan = _build(key)
    with _LOCK:
        _HITS[1] += 1
        _PLANS[key] = plan
        _PLANS.move_to_end(key)
        while len(_PLANS) > config.plan_cache_size():
            _PLANS.popitem(last=False)
    return plan


def get_plan(n: int, options: FFTOptions | int) -> FFTPlan:
    """Cached plan for length ``n`` (an int ``options`` means an Ozaki-II plan with
    that many moduli)."""
    if isinstance(options, int):
        options = FFTOptions(moduli=options)
    key = plan_key(n, options)
    return _cached(n, key)


def get_executor(engine: Engine, plan: FFTPlan, phase_a: str | None = None) -> FFTExecutor:
    """The plan prepared for ``engine`` on its current device (cached), its products in
    the arithmetic ``phase_a`` (``"int8"``, ``"fp8"``; ``"auto"`` or ``None``: resolved by
    :func:`~ozfft.engines.select.resolve_phase_a`).

    Bluestein plans run their chirp products on the engine around the executor of their
    inner plan; other plans go to the engine's own executor
    (:meth:`~ozfft.engines.base.Engine.prepare_fft`), else to the NumPy fixed-point
    executors or the generic Ozaki-II stage executor.
    """
    phase_a = resolve_phase_a(phase_a, engine)
    key = (
        engine.device_key(),
        plan.n,
        plan.scheme,
        plan.num_moduli,
        plan.digit_format,
        phase_a,
    )
    with _LOCK:
        ex = _EXECUTORS.get(key)
        if ex is not None and ex.plan is plan:
            _EXECUTORS.move_to_end(key)
            return ex
    if plan.bluestein is not None:
        inner = get_executor(engine, plan.bluestein.inner, phase_a)
        ex = BluesteinExecutor(engine, plan, inner)
    else:
        ex = engine.prepare_fft(plan, phase_a)
    if ex is None:
        if plan.scheme == "fixed":
            if engine.name != "numpy":
                raise NotImplementedError(f"the {engine.name} engine has no fixed-point FFT")
            ex = fixed_executor(plan, lambda sub: get_executor(engine, sub, phase_a), phase_a)
        else:
            ex = StageExecutor(engine, plan, phase_a)
    with _LOCK:
        _EXECUTORS[key] = ex
        _EXECUTORS.move_to_end(key)
        while len(_EXECUTORS) > config.plan_cache_size():
            _EXECUTORS.popitem(last=False)
    return ex


def clear_plan_cache() -> None:
    """Empty the plan cache and every engine's prepared executors."""
    with _LOCK:
        _PLANS.clear()
        _EXECUTORS.clear()
        _HITS[:] = [0, 0]


def plan_cache_info() -> dict[str, Any]:
    """``{"size", "hits", "misses", "maxsize", "bytes", "executors"}``: plans cached,
    lookups, the bound, the plans' host bytes (arrays shared between plans, e.g. a
    four-step plan's sub-plans, counted once) and the number of prepared executors."""
    with _LOCK:
        return {
            "size": len(_PLANS),
            "hits": _HITS[0],
            "misses": _HITS[1],
            "maxsize": config.plan_cache_size(),
            "bytes": _unique_bytes(_PLANS.values()),
            "executors": len(_EXECUTORS),
        }


def _unique_bytes(plans) -> int:
    arrays: dict[int, object] = {}
    for plan in plans:
        arrays.update(plan.host_arrays())
    return sum(a.nbytes for a in arrays.values())
