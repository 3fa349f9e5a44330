"""Validated options, built once at the API edge and passed down as one object.

:class:`OzakiOptions` says how an emulated product is computed (``ozfft.matmul``);
:class:`FFTOptions` how a transform is (the ``ozfft.fft`` family). Both validate on
construction with the messages users see, so no layer below re-checks them.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Literal

from .config import PHASE_A_CHOICES
from .ozaki.bounds import PRECISIONS, default_fft_moduli, default_moduli
from .ozaki.moduli import MAX_MODULI, MIN_MODULI

__all__ = [
    "MODES",
    "PHASE_A_CHOICES",
    "PRECISIONS",
    "FFTOptions",
    "GemmOptions",
    "OzakiOptions",
]

MODES = ("fast", "accurate")
Precision = Literal["fp64", "fp32"]
Mode = Literal["fast", "accurate"]
PhaseA = Literal["int8", "fp8", "auto"]


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")


def _check_moduli(moduli: int | None) -> None:
    if moduli is None:
        return
    if isinstance(moduli, bool) or not isinstance(moduli, int):
        raise TypeError(
            f"moduli must be an int between {MIN_MODULI} and {MAX_MODULI} or None, "
            f"got {type(moduli).__name__}"
        )
    if not MIN_MODULI <= moduli <= MAX_MODULI:
        raise ValueError(f"moduli must be between {MIN_MODULI} and {MAX_MODULI}, got {moduli}")


def _check_phase_a(phase_a: str | None) -> None:
    """``None`` (the ``OZFFT_PHASE_A`` default) or one of :data:`PHASE_A_CHOICES`."""
    if phase_a is not None and (not isinstance(phase_a, str) or phase_a not in PHASE_A_CHOICES):
        choices = ", ".join(repr(c) for c in PHASE_A_CHOICES)
        raise ValueError(f"phase_a must be one of {choices} or None, got {phase_a!r}")


def _integer_scalar(value: Any) -> Any:
    """A numpy (or other ``__index__``) integer scalar as a Python int; bools and
    everything else unchanged (``_check_moduli`` names them)."""
    if isinstance(value, int) or value is None or type(value).__name__ in ("bool", "bool_"):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


@dataclass(frozen=True)
class OzakiOptions:
    """How an emulated product is computed.

    precision: the unit roundoff of ``ozfft.matmul``'s accuracy guarantee, ``"fp64"``
    (``2**-53``) or ``"fp32"`` (``2**-24``); also picks the default moduli count.
    moduli: an explicit number of INT8 moduli (``2..20``; numpy integer scalars are
    accepted), which turns the guarantee off, or ``None``: chosen per call, starting
    from the precision's default (docs/numerics.md, "The accuracy guarantee of matmul").
    mode: ``"fast"`` (Cauchy–Schwarz scaling) or ``"accurate"`` (extra bounding GEMM).
    phase_a: the arithmetic of Phase A, ``"int8"``, ``"fp8"`` or ``"auto"`` (by engine and
    device, :func:`ozfft.engines.select.resolve_phase_a`), or ``None``: ``OZFFT_PHASE_A``
    (default ``"auto"``). With ``"fp8"`` a count of INT8 moduli (``moduli``, or the one
    the guarantee picks) stands for its bits: the FP8 residue system with at least
    ``log2`` of those moduli's product (at most 18 of them, 141 bits).
    """

    precision: Precision = "fp64"
    moduli: int | None = None
    mode: Mode = "fast"
    phase_a: PhaseA | None = None

    def __post_init__(self) -> None:
        _check_precision(self.precision)
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        object.__setattr__(self, "moduli", _integer_scalar(self.moduli))
        _check_moduli(self.moduli)
        _check_phase_a(self.phase_a)

    @property
    def num_moduli(self) -> int:
        """The explicit count, else the documented default of ``precision`` and ``mode``
        (16 for fp64, 8 for fp32): the count a call uses when its data allow it
        (``ozfft.linalg.matmul_plan`` says what one call uses)."""
        if self.moduli is not None:
            return self.moduli
        return default_moduli(self.precision, self.mode)

    @property
    def guaranteed(self) -> bool:
        """Whether ``ozfft.matmul`` keeps its accuracy guarantee (no explicit moduli)."""
        return self.moduli is None


#: the name ozfft 0.1 used; kept for existing callers
GemmOptions = OzakiOptions


@dataclass(frozen=True)
class FFTOptions:
    """How a transform is computed.

    precision: ``"fp64"`` or ``"fp32"``: picks the digit format of the fixed-point stages
    (or the moduli count of the Ozaki-II stage path).
    moduli: ``None`` lets the planner choose the scheme per length (fixed-point digit
    stages where they apply, see docs/numerics.md); an int ``2..20`` forces the Ozaki-II
    stage path with that many moduli.
    phase_a: the arithmetic of Phase A, ``"int8"``, ``"fp8"`` or ``"auto"``, or ``None``:
    ``OZFFT_PHASE_A`` (default ``"auto"``). The transform's result does not depend on it
    (docs/numerics.md, "FP8 Phase A of the FFT").
    """

    precision: Precision = "fp64"
    moduli: int | None = None
    phase_a: PhaseA | None = None

    def __post_init__(self) -> None:
        _check_precision(self.precision)
        _check_moduli(self.moduli)
        _check_phase_a(self.phase_a)

    @property
    def num_moduli(self) -> int:
        """Moduli of the Ozaki-II stage path (explicit, or the precision's default)."""
        return self.moduli if self.moduli is not None else default_fft_moduli(self.precision)
