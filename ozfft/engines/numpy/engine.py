"""The NumPy engine: exact reference implementation of every stage, runs everywhere.

Each stage reports to :mod:`ozfft.profiling` as phase ``scaling`` (``row_stats``,
``bound_operand``, ``bound_product``), ``residues``, ``phase_a`` or ``phase_b``, timed
with the host clock (the work is synchronous). ``integer_residues`` (the FFT's constant
stage matrices, prepared once per plan) is not a phase, as on the CUDA engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import config
from ...ozaki.residue_system import ResidueSystem
from ...profiling import HostClock, phase
from ..base import Engine, ResidueStack, RowStats
from . import phase_a, phase_b, residues, scaling

__all__ = ["NumpyEngine"]

_CLOCK = HostClock()


class NumpyEngine(Engine):
    """Ozaki-II stages on numpy arrays (float BLAS for the exact integer products)."""

    name = "numpy"

    @property
    def xp(self) -> Any:
        return np

    def row_stats(
        self, x: np.ndarray, operand: str, *, need_sumsq: bool, defer_check: bool = False
    ) -> RowStats:
        with phase("scaling", _CLOCK):
            max_exp, sumsq = scaling.row_stats(x, operand, need_sumsq=need_sumsq)
        return RowStats(max_exp, sumsq)

    def bound_operand(self, x: np.ndarray, max_exp: np.ndarray, bound_bits: int) -> np.ndarray:
        with phase("scaling", _CLOCK):
            return scaling.bound_operand(x, max_exp, bound_bits)

    def bound_product(self, abar: np.ndarray, btbar: np.ndarray, bound_bits: int) -> np.ndarray:
        with phase("scaling", _CLOCK):
            return scaling.bound_product(abar, btbar, bound_bits)

    def residues(
        self, x: np.ndarray, shift: np.ndarray, moduli: ResidueSystem, rounding: str = "trunc"
    ) -> ResidueStack:
        with phase("residues", _CLOCK):
            return residues.residues(x, shift, moduli, rounding)

    def integer_residues(
        self, re: np.ndarray, im: np.ndarray, moduli: ResidueSystem
    ) -> ResidueStack:
        return residues.integer_residues(re, im, moduli)

    def exact_product(
        self,
        ra: ResidueStack,
        rbt: ResidueStack,
        shift_a: np.ndarray,
        shift_b: np.ndarray,
        moduli: ResidueSystem,
        out_dtype: Any,
        *,
        complex_method: str = "karatsuba",
    ) -> np.ndarray:
        u = self.modular_products(ra, rbt, moduli, complex_method=complex_method)
        return self.reconstruct(u, shift_a, shift_b, moduli, out_dtype)

    def modular_products(
        self,
        ra: ResidueStack,
        rbt: ResidueStack,
        moduli: ResidueSystem,
        *,
        complex_method: str = "karatsuba",
    ) -> np.ndarray:
        """Phase A: ``(N, [2,] ..., m, n)`` residues ``u_i`` of the product (uint8; uint16
        for an FP8 residue system)."""
        with phase("phase_a", _CLOCK):
            return phase_a.modular_products(ra, rbt, moduli, complex_method=complex_method)

    def reconstruct(
        self,
        u: np.ndarray,
        shift_a: np.ndarray,
        shift_b: np.ndarray,
        moduli: ResidueSystem,
        out_dtype: Any,
    ) -> np.ndarray:
        """Phase B: exact CRT reconstruction of ``u``, one rounding, inverse scaling."""
        with phase("phase_b", _CLOCK):
            out_dtype = np.dtype(out_dtype)
            is_complex = out_dtype.kind == "c"
            fmt = phase_b.FLOAT32 if out_dtype in (np.float32, np.complex64) else phase_b.FLOAT64
            shift = -(shift_a[..., :, None] + shift_b[..., None, :])
            out_shape = shift.shape
            shift = shift.reshape(-1)
            planes = [u[:, 0], u[:, 1]] if is_complex else [u]
            chunk = config.phase_b_chunk()
            parts = []
            for plane in planes:
                flat = plane.reshape(moduli.count, -1)
                vals = np.empty(flat.shape[1], np.float64)
                for start in range(0, flat.shape[1], chunk):
                    stop = start + chunk
                    vals[start:stop] = phase_b.kulisch_reconstruct(
                        flat[:, start:stop], shift[start:stop], moduli, fmt
                    )
                parts.append(vals.reshape(out_shape))
            if is_complex:
                out = np.empty(out_shape, out_dtype)
                out.real = parts[0]
                out.imag = parts[1]
                return out
            with np.errstate(over="ignore"):
                return parts[0].astype(out_dtype)
