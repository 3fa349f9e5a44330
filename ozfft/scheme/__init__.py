"""Drivers of the Ozaki-II scheme: they call an engine's stages in order.

:mod:`ozfft.scheme.gemm` runs a general product (scaling -> residues -> Phase A ->
Phase B); :mod:`ozfft.scheme.fixed` a product whose left operand is a fixed integer
matrix (the FFT's stage matrices). The rules they apply live in :mod:`ozfft.ozaki`,
the stages in :mod:`ozfft.engines`.
"""

from .fixed import fixed_left_product
from .gemm import compute_shifts, emulated_matmul

__all__ = ["compute_shifts", "emulated_matmul", "fixed_left_product"]
