"""Validated options shared by the GEMM (and later FFT) entry points."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .ozaki.bounds import default_moduli
from .ozaki.moduli import MAX_MODULI, MIN_MODULI

__all__ = ["MODES", "PRECISIONS", "GemmOptions"]

PRECISIONS = ("fp64", "fp32")
MODES = ("fast", "accurate")
Precision = Literal["fp64", "fp32"]
Mode = Literal["fast", "accurate"]


@dataclass(frozen=True)
class GemmOptions:
    """How an emulated product is computed.

    precision: target accuracy, ``"fp64"`` or ``"fp32"``; picks the default moduli count.
    moduli: number of INT8 moduli (``2..20``) or ``None`` for the precision's default.
    mode: ``"fast"`` (Cauchy–Schwarz scaling) or ``"accurate"`` (extra bounding GEMM).
    """

    precision: Precision = "fp64"
    moduli: int | None = None
    mode: Mode = "fast"

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.moduli is not None:
            if isinstance(self.moduli, bool) or not isinstance(self.moduli, int):
                raise TypeError(
                    f"moduli must be an int between {MIN_MODULI} and {MAX_MODULI} or None, "
                    f"got {type(self.moduli).__name__}"
                )
            if not MIN_MODULI <= self.moduli <= MAX_MODULI:
                raise ValueError(
                    f"moduli must be between {MIN_MODULI} and {MAX_MODULI}, got {self.moduli}"
                )

    @property
    def num_moduli(self) -> int:
        """The moduli count actually used."""
        if self.moduli is not None:
            return self.moduli
        return default_moduli(self.precision, self.mode)
