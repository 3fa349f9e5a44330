"""Engines: one interface (:class:`Engine`), a NumPy and a CUDA implementation."""

from .base import Engine, ResidueStack, RowStats
from .numpy import NumpyEngine

__all__ = ["Engine", "NumpyEngine", "ResidueStack", "RowStats"]
