"""The CUDA engine (cupy + NVRTC kernels + cuBLAS INT8 GEMMs); cupy is imported lazily.

Modules: :mod:`.engine` (the engine and its CUDA-event profiling clock),
:mod:`.compiler` (NVRTC and the on-disk cubin cache), :mod:`.sources` (the kernel tree
and each source's include closure), :mod:`.constants` (the specializing macros) and
:mod:`.workspace` (the GEMM workspace plan).
"""

from .engine import CudaEngine, CudaEventClock

__all__ = ["CudaEngine", "CudaEventClock"]
