"""The CUDA engine (cupy + NVRTC kernels + cuBLAS INT8 GEMMs); imported lazily."""

from .engine import CudaEngine

__all__ = ["CudaEngine"]
