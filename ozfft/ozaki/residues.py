"""Exact symmetric residues of integer arrays (the fixed operands of both engines)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .residue_system import ResidueSystem

__all__ = ["symmetric_int_residues", "symmetric_mod"]


def symmetric_mod(values: np.ndarray, p: int, dtype: Any = np.int8) -> np.ndarray:
    """Exact symmetric residue of an integer array, in ``[-(p-1)/2, p/2]``, as ``dtype``
    (int8: moduli up to 256, where +128 wraps to -128, the same class; float32 holds the
    FP8 moduli's, up to ``32**3``, exactly)."""
    r = np.mod(values, p)
    r[r > p // 2] -= p
    if np.dtype(dtype) == np.int8:
        return r.astype(np.int16).astype(np.int8)
    return r.astype(dtype)


def symmetric_int_residues(values: np.ndarray, moduli: ResidueSystem) -> np.ndarray:
    """``(N, ...)`` int8 symmetric residues of an int64 array (exact integer arithmetic)."""
    out = np.empty((moduli.count, *values.shape), np.int8)
    for i, p in enumerate(moduli.moduli):
        out[i] = symmetric_mod(values, p)
    return out
