"""Exceptions raised by ozfft.

Every error subclasses :class:`OzfftError` *and* the builtin a numpy user would
expect (``ValueError`` for bad values, ``TypeError`` for bad dtypes, ...), so
``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "DeviceMemoryError",
    "DeviceUnavailableError",
    "KernelCompileError",
    "NonFiniteInputError",
    "OzfftError",
    "PlanMemoryError",
    "UnsupportedDTypeError",
]


class OzfftError(Exception):
    """Base class of every error ozfft raises on purpose."""


class NonFiniteInputError(OzfftError, ValueError):
    """An operand holds NaN or Inf, which the integer scheme cannot represent."""

    def __init__(self, operand: str, count: int, kind: str = "NaN or Inf") -> None:
        self.operand = operand
        self.count = count
        super().__init__(
            f"operand {operand!r} contains {count} non-finite value(s) ({kind}); "
            "the Ozaki scheme works on finite numbers only"
        )


class UnsupportedDTypeError(OzfftError, TypeError):
    """An operand has a dtype ozfft does not compute in."""

    def __init__(self, operand: str, dtype: object, supported: str) -> None:
        self.operand = operand
        self.dtype = dtype
        super().__init__(
            f"operand {operand!r} has unsupported dtype {dtype}; supported: {supported}"
        )


class DeviceUnavailableError(OzfftError, RuntimeError):
    """The CUDA engine was asked for but cupy / cuda-python / a GPU is missing."""


class KernelCompileError(OzfftError, RuntimeError):
    """NVRTC (or nvcc, for a host-built source) rejected a kernel source; the message holds
    its log and where the full specialized source (macro prologue + text) was written for
    inspection."""

    def __init__(
        self,
        source: str,
        arch: str,
        log: str,
        dump_path: object | None,
        compiler: str = "NVRTC",
    ) -> None:
        self.source = source
        self.compiler = compiler
        self.arch = arch
        self.log = log
        self.dump_path = dump_path
        where = (
            f"the specialized source is in {dump_path}"
            if dump_path is not None
            else "the specialized source could not be saved"
        )
        super().__init__(
            f"{compiler} could not compile kernel {source!r} for {arch}; {where}\n"
            f"{compiler} log:\n{log.rstrip()}"
        )


class DeviceMemoryError(OzfftError, MemoryError):
    """The GPU could not provide the workspace an operation needs."""

    def __init__(self, what: str, needed_bytes: int, free_bytes: int | None = None) -> None:
        self.needed_bytes = needed_bytes
        self.free_bytes = free_bytes
        free = "" if free_bytes is None else f", {free_bytes / 2**30:.2f} GiB free"
        super().__init__(
            f"{what} needs {needed_bytes} bytes ({needed_bytes / 2**30:.2f} GiB) of GPU "
            f"memory{free}; use smaller operands or free device memory"
        )


class PlanMemoryError(OzfftError, MemoryError):
    """An FFT plan would take more memory than allowed (``OZFFT_PLAN_MEMORY``)."""

    def __init__(self, n: int, needed_bytes: int, limit_bytes: int) -> None:
        self.needed_bytes = needed_bytes
        self.limit_bytes = limit_bytes
        super().__init__(
            f"an FFT plan for length {n} needs {needed_bytes} bytes "
            f"({needed_bytes / 2**30:.2f} GiB), more than the {limit_bytes} bytes allowed; "
            "raise OZFFT_PLAN_MEMORY or transform a shorter axis"
        )
