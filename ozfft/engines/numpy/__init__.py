"""The NumPy engine (exact reference; stages mirror the algorithm)."""

from .engine import NumpyEngine

__all__ = ["NumpyEngine"]
