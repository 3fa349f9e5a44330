"""Validated options, built once at the API edge and passed down as one object.

:class:`OzakiOptions` says how an emulated product is computed (``ozfft.matmul``);
:class:`FFTOptions` how a transform is (the ``ozfft.fft`` family). Both validate on
construction with the messages users see, so no layer below re-checks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .ozaki.bounds import PRECISIONS, default_fft_moduli, default_moduli
from .ozaki.moduli import MAX_MODULI, MIN_MODULI

__all__ = ["MODES", "PRECISIONS", "FFTOptions", "GemmOptions", "OzakiOptions"]

MODES = ("fast", "accurate")
Precision = Literal["fp64", "fp32"]
Mode = Literal["fast", "accurate"]


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


@dataclass(frozen=True)
class OzakiOptions:
    """How an emulated product is computed.

    precision: target accuracy, ``"fp64"`` or ``"fp32"``; picks the default moduli count.
    moduli: number of INT8 moduli (``2..20``) or ``None`` for the precision's default.
    mode: ``"fast"`` (Cauchy–Schwarz scaling) or ``"accurate"`` (extra bounding GEMM).
    """

    precision: Precision = "fp64"
    moduli: int | None = None
    mode: Mode = "fast"

    def __post_init__(self) -> None:
        _check_precision(self.precision)
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        _check_moduli(self.moduli)

    @property
    def num_moduli(self) -> int:
        """The moduli count actually used."""
        if self.moduli is not None:
            return self.moduli
        return default_moduli(self.precision, self.mode)


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
    """

    precision: Precision = "fp64"
    moduli: int | None = None

    def __post_init__(self) -> None:
        _check_precision(self.precision)
        _check_moduli(self.moduli)

    @property
    def num_moduli(self) -> int:
        """Moduli of the Ozaki-II stage path (explicit, or the precision's default)."""
        return self.moduli if self.moduli is not None else default_fft_moduli(self.precision)
