"""Per-phase times of a public call, read from the profiling hook.

The emulated product runs four phases (docs/architecture.md; Ozaki, Uchino, Imamura,
"Ozaki Scheme II: A GEMM-oriented emulation of floating-point matrix multiplication
using an integer modular technique"): ``scaling`` (exponent shifts), ``residues``
(INT8 residue planes), ``phase_a`` (the INT8 GEMMs, one per modulus) and ``phase_b``
(CRT reconstruction and rounding). Engines report them through
:func:`ozfft.profiling.phase`; the campaigns open :func:`ozfft.profiling.profile_phases`
around a public call and tabulate what was reported. An engine may report only some
phases (or none): the missing ones are ``None`` and print as ``n/a``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..profiling import PhaseProfile, profile_phases
from .results import fmt

__all__ = ["PHASES", "PhaseTable", "phase_cells", "phase_table", "profile_call"]

#: the pipeline's phases, in execution order (the names engines report)
PHASES = ("scaling", "residues", "phase_a", "phase_b")

#: milliseconds per phase name; None where no profile reported the phase
PhaseTable = dict[str, float | None]


def phase_table(profiles: PhaseProfile | Iterable[PhaseProfile]) -> PhaseTable:
    """Median milliseconds per phase over ``profiles`` (one profile per repetition).

    The four :data:`PHASES` are always keys (None when no profile reported them); any
    other reported phase follows, in name order. A phase's median is over the
    profiles that report it.
    """
    if isinstance(profiles, PhaseProfile):
        profiles = [profiles]
    seen: dict[str, list[float]] = {}
    for prof in profiles:
        for name, ms in prof.ms.items():
            seen.setdefault(name, []).append(ms)
    table: PhaseTable = {name: None for name in PHASES}
    for name in [*PHASES, *sorted(set(seen) - set(PHASES))]:
        if name in seen:
            table[name] = float(np.median(seen[name]))
    return table


def profile_call(fn: Callable[[], Any], reps: int = 1) -> PhaseTable:
    """Run ``fn()`` ``reps`` times, each inside :func:`profile_phases`; tabulate."""
    profiles = []
    for _ in range(max(reps, 1)):
        with profile_phases() as prof:
            fn()
        profiles.append(prof)
    return phase_table(profiles)


def phase_cells(table: PhaseTable | None, spec: str = ".2f") -> list[str]:
    """The four :data:`PHASES` of ``table`` as table cells (``n/a`` where missing)."""
    table = table or {}
    return [fmt(table.get(name), spec) for name in PHASES]
