"""Where the kernel sources live: ``ozfft/kernels/`` in an installed wheel (the
top-level ``kernels/`` folder is mapped there at build time), or ``kernels/`` of a
source checkout or editable install."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["kernel_dir", "kernel_files"]

_PACKAGE = Path(__file__).resolve().parents[2]  # .../ozfft


@cache
def kernel_dir() -> Path:
    """Directory holding the ``.cu``/``.cuh`` kernel sources."""
    for candidate in (_PACKAGE / "kernels", _PACKAGE.parent / "kernels"):
        if (candidate / "ozaki_common.cuh").is_file():
            return candidate
    raise FileNotFoundError(
        "ozfft's CUDA kernel sources were not found (expected ozfft/kernels/ in the "
        "installed package or kernels/ in a source checkout); reinstall ozfft"
    )


def kernel_files() -> list[Path]:
    """All kernel sources and headers (they all enter the compile-cache key)."""
    root = kernel_dir()
    return sorted([*root.glob("*.cu"), *root.glob("*.cuh")])
