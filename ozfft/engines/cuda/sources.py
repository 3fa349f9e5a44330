"""Where the kernel sources live (inside the wheel as ``ozfft.kernels``, or ``kernels/``
of a source checkout)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["kernel_dir", "kernel_files"]


@cache
def kernel_dir() -> Path:
    """Directory holding the ``.cu``/``.cuh`` kernel sources."""
    try:
        from importlib.resources import files

        packaged = Path(str(files("ozfft.kernels")))
        if (packaged / "ozaki_common.cuh").is_file():
            return packaged
    except (ModuleNotFoundError, TypeError):
        pass
    checkout = Path(__file__).resolve().parents[3] / "kernels"
    if (checkout / "ozaki_common.cuh").is_file():
        return checkout
    raise FileNotFoundError(
        "ozfft's CUDA kernel sources were not found (expected the package data "
        "'ozfft.kernels' or kernels/ in a source checkout); reinstall ozfft"
    )


def kernel_files() -> list[Path]:
    """All kernel sources and headers (they all enter the compile-cache key)."""
    root = kernel_dir()
    return sorted([*root.glob("*.cu"), *root.glob("*.cuh")])
