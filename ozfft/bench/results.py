"""Where the campaigns write, and how their tables print missing numbers.

Results go to ``bench/results/<device>/`` of the working directory (one folder per GPU
or CPU class, as committed in the repository) unless ``--out`` says otherwise.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RESULTS_ROOT", "device_slug", "fmt", "gpu_label", "results_dir"]

#: the results store, relative to the working directory (the repository root)
RESULTS_ROOT = Path("bench/results")


def device_slug(name: str) -> str:
    """Folder name of a device: ``"NVIDIA H200"`` -> ``"nvidia-h200"``."""
    return "-".join(name.lower().split()) or "unknown"


def results_dir(device: str) -> Path:
    """Default output folder of a campaign run on ``device``."""
    return RESULTS_ROOT / device_slug(device)


def gpu_label() -> str:
    """The current GPU's name (``ozfft.engines.select.gpu_name``), or ``"unknown GPU"``."""
    from ..engines.select import gpu_name

    return gpu_name() or "unknown GPU"


def fmt(value: float | None, spec: str = ".3g") -> str:
    """``format(value, spec)``, or ``"n/a"`` for a missing number."""
    return "n/a" if value is None else format(value, spec)
