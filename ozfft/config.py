"""Every environment variable ozfft reads, in one place.

=====================  ==============================================================
``OZFFT_ENGINE``       force an engine for ``ozfft check`` and friends: ``numpy`` or
                       ``cuda`` (default: the best one present)
``OZFFT_CACHE_DIR``    where compiled kernels are cached (default
                       ``$XDG_CACHE_HOME/ozfft`` or ``~/.cache/ozfft``)
``OZFFT_LOG_LEVEL``    level of the ``ozfft`` logger (``DEBUG``, ``INFO``, ...)
``OZFFT_CHUNK``        outputs per Phase-B chunk on the NumPy engine (default 65536)
``OZFFT_PLAN_MEMORY``  bytes an FFT plan may take (default 4 GiB); larger plans raise
``OZFFT_PLAN_CACHE``   FFT plans kept in the LRU cache (default 32)
``OZFFT_WORKSPACE``    cap, in bytes, on the CUDA engine's GEMM workspace (default:
                       half the free device memory); smaller caps give narrower
                       column blocks
``OZFFT_PHASE_A``      Phase A arithmetic when a call passes no ``phase_a=``: ``int8``,
                       ``fp8`` or ``auto`` (default ``auto``: INT8 on the NumPy engine
                       and where a GPU's dense INT8 rate is at least its FP8 rate,
                       FP8 where INT8 is cut; ``ozfft.engines.select.resolve_phase_a``)
``OZFFT_FUSED_SMALL``  ``0`` turns off the CUDA engine's fused small-product kernel
                       (k <= 64: residues, Phase A and Phase B in one launch) and its
                       one-pass test of the accuracy plan (``tiled_plan_probe``), and
                       stages those products and that test like any other (default
                       ``1``; same plans, same bits)
``OZFFT_SLICES``       ``0`` makes the fused small product (real and complex operands)
                       use residues and the CRT where it would use exact base-256 slices
                       (default ``1``; same bits)
``OZFFT_CUTLASS``      ``0`` keeps Phase A of the CUDA engine's staged products on
                       cuBLAS with INT32 planes where it would run the CUTLASS kernel
                       that stores each sum reduced mod p as a byte (Hopper, with
                       CUTLASS's headers and nvcc present; default ``1``; same bits)
``OZFFT_CUTLASS_DIR``  CUTLASS's ``include`` folder (default: the one of the
                       ``nvidia-cutlass`` package, ``pip install 'ozfft[cutlass]'``)
=====================  ==============================================================
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "PHASE_A_CHOICES",
    "cache_dir",
    "cutlass_include",
    "cutlass_phase_a",
    "forced_engine",
    "fused_small_products",
    "log_level",
    "phase_a_default",
    "phase_b_chunk",
    "plan_cache_size",
    "plan_memory_limit",
    "product_switches",
    "small_product_slices",
    "workspace_limit",
]


#: the values of ``phase_a=`` and ``OZFFT_PHASE_A``
PHASE_A_CHOICES = ("int8", "fp8", "auto")


def forced_engine() -> str | None:
    """Engine name from ``OZFFT_ENGINE`` or ``None``."""
    value = os.environ.get("OZFFT_ENGINE", "").strip().lower()
    if value and value not in ("numpy", "cuda"):
        raise ValueError(f"OZFFT_ENGINE must be 'numpy' or 'cuda', not {value!r}")
    return value or None


def cache_dir() -> Path:
    """Directory of the on-disk kernel cache."""
    explicit = os.environ.get("OZFFT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ozfft"


def log_level() -> str | None:
    """Level name for the ``ozfft`` logger, if set."""
    value = os.environ.get("OZFFT_LOG_LEVEL")
    return value.upper() if value else None


def phase_a_default() -> str:
    """The Phase A asked for when a call passes ``phase_a=None``: ``OZFFT_PHASE_A``
    (``"int8"``, ``"fp8"`` or ``"auto"``, case-insensitive), ``"auto"`` when unset."""
    value = os.environ.get("OZFFT_PHASE_A", "").strip().lower()
    if not value:
        return "auto"
    if value not in PHASE_A_CHOICES:
        choices = ", ".join(repr(c) for c in PHASE_A_CHOICES)
        raise ValueError(f"OZFFT_PHASE_A must be one of {choices}, not {value!r}")
    return value


def _switch(name: str) -> bool:
    """An on/off variable: ``1`` (the default) or ``0``."""
    value = os.environ.get(name, "1").strip()
    if value not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, not {value!r}")
    return value == "1"


#: the variables that choose how a small product runs (its Phase A and kernel)
_PRODUCT_SWITCHES = ("OZFFT_PHASE_A", "OZFFT_FUSED_SMALL", "OZFFT_SLICES")


def product_switches() -> tuple[str | None, ...]:
    """The raw values of the variables that choose how a small product runs
    (``OZFFT_PHASE_A``, ``OZFFT_FUSED_SMALL``, ``OZFFT_SLICES``; None where unset): what
    ``ozfft.matmul``'s products prepared per call signature are keyed on, so that setting
    one takes effect on the next call, as for every other call."""
    environ = os.environ
    return tuple(environ.get(name) for name in _PRODUCT_SWITCHES)


def fused_small_products() -> bool:
    """Whether the CUDA engine may run small products fused (``OZFFT_FUSED_SMALL``: ``1``,
    the default, or ``0``)."""
    return _switch("OZFFT_FUSED_SMALL")


def small_product_slices() -> bool:
    """Whether the CUDA engine's fused small product (real and complex) may use exact
    base-256 slices (``OZFFT_SLICES``: ``1``, the default, or ``0``: residues and the CRT)."""
    return _switch("OZFFT_SLICES")


def cutlass_phase_a() -> bool:
    """Whether the CUDA engine may run Phase A on its CUTLASS kernel with byte planes
    (``OZFFT_CUTLASS``: ``1``, the default, or ``0``: cuBLAS and INT32 planes)."""
    return _switch("OZFFT_CUTLASS")


def cutlass_include() -> Path | None:
    """CUTLASS's include folder from ``OZFFT_CUTLASS_DIR``, or ``None`` (unset)."""
    value = os.environ.get("OZFFT_CUTLASS_DIR", "").strip()
    return Path(value).expanduser() if value else None


def phase_b_chunk() -> int:
    """Outputs reconstructed per chunk by the NumPy engine's Phase B."""
    value = int(os.environ.get("OZFFT_CHUNK", "65536"))
    if value < 1:
        raise ValueError(f"OZFFT_CHUNK must be a positive integer, not {value}")
    return value


def workspace_limit() -> int | None:
    """Byte cap on the CUDA engine's workspace from ``OZFFT_WORKSPACE``, or ``None``."""
    value = os.environ.get("OZFFT_WORKSPACE")
    if not value:
        return None
    limit = int(value)
    if limit < 1:
        raise ValueError(f"OZFFT_WORKSPACE must be a positive number of bytes, not {limit}")
    return limit


def _positive_int(name: str, default: int) -> int:
    value = int(os.environ.get(name, str(default)))
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value}")
    return value


def plan_memory_limit() -> int:
    """Bytes one FFT plan may take (``OZFFT_PLAN_MEMORY``, default 4 GiB)."""
    return _positive_int("OZFFT_PLAN_MEMORY", 4 << 30)


def plan_cache_size() -> int:
    """Number of FFT plans the LRU cache keeps (``OZFFT_PLAN_CACHE``, default 32)."""
    return _positive_int("OZFFT_PLAN_CACHE", 32)
