"""Where the time of an emulated product goes: a profiling hook engines report to.

Engines wrap each phase of their work in :func:`phase`; it costs nothing unless a
:func:`profile_phases` block is active in the calling thread. Tools (``ozfft bench``)
open such a block around a public call and read the totals, instead of re-running the
pipeline themselves::

    with ozfft.profiling.profile_phases() as prof:
        ozfft.matmul(a, b)
    prof.ms        # {"scaling": ..., "residues": ..., "phase_a": ..., "phase_b": ...}

Each engine supplies a :class:`Clock`: CUDA events on the GPU (the block's exit waits
for them), ``time.perf_counter`` on the host. Phases may repeat (per column block,
per FFT stage): their times add up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Clock", "HostClock", "PhaseProfile", "phase", "profile_phases", "profiling_active"]


class Clock(Protocol):
    """Time stamps of one engine: ``mark()`` takes one, ``elapsed_ms`` measures a span."""

    def mark(self) -> Any: ...

    def elapsed_ms(self, start: Any, stop: Any) -> float: ...


class HostClock:
    """Wall-clock time stamps for engines that compute synchronously on the host."""

    def mark(self) -> float:
        return time.perf_counter()

    def elapsed_ms(self, start: float, stop: float) -> float:
        return (stop - start) * 1e3


@dataclass
class PhaseProfile:
    """Totals of one profiled block: milliseconds and call counts per phase name."""

    ms: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    _spans: list[tuple[str, Clock, Any, Any]] = field(default_factory=list, repr=False)

    def _resolve(self) -> None:
        for name, clock, start, stop in self._spans:
            self.ms[name] = self.ms.get(name, 0.0) + clock.elapsed_ms(start, stop)
            self.calls[name] = self.calls.get(name, 0) + 1
        self._spans.clear()

    @property
    def total_ms(self) -> float:
        return sum(self.ms.values())


_STATE = threading.local()


def _active() -> PhaseProfile | None:
    return getattr(_STATE, "profile", None)


def profiling_active() -> bool:
    """Whether a :func:`profile_phases` block is open in this thread."""
    return _active() is not None


@contextmanager
def profile_phases() -> Iterator[PhaseProfile]:
    """Collect phase times of every engine call made inside the block (this thread)."""
    outer = _active()
    prof = PhaseProfile()
    _STATE.profile = prof
    try:
        yield prof
    finally:
        _STATE.profile = outer
        prof._resolve()


#: what :func:`phase` returns outside a profiled block (reusable, nestable)
_UNTIMED = nullcontext()


def phase(name: str, clock: Clock) -> AbstractContextManager[None]:
    """Engines: time the enclosed work as phase ``name`` when profiling is active; else a
    shared context that does nothing (no generator is made: small calls enter several
    phases each)."""
    prof = _active()
    return _UNTIMED if prof is None else _timed(prof, name, clock)


@contextmanager
def _timed(prof: PhaseProfile, name: str, clock: Clock) -> Iterator[None]:
    start = clock.mark()
    try:
        yield
    finally:
        prof._spans.append((name, clock, start, clock.mark()))
