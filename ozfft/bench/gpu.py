"""The GPU check of the campaigns that need the CUDA engine.

``ozfft bench gemm|fft|ceilings|all`` and ``python -m ozfft.bench.gemm|fft`` refuse to
start without a usable CUDA engine and say why, in the same words. Nothing here runs at
import time, and ``ozfft.engines`` is imported only when a check is made.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

__all__ = ["cuda_unavailable", "gpu_campaign"]


def cuda_unavailable() -> str | None:
    """Why the CUDA engine cannot run here (its ``DeviceUnavailableError``), or None."""
    from ..engines.select import cuda_engine
    from ..errors import DeviceUnavailableError

    try:
        cuda_engine()
    except DeviceUnavailableError as exc:
        return str(exc)
    return None


def gpu_campaign(
    args: argparse.Namespace, name: str, run: Callable[[argparse.Namespace], int]
) -> int:
    """``run(args)`` if the CUDA engine is usable; else ``ozfft bench <name>: <why>`` on
    stderr and exit status 2."""
    why = cuda_unavailable()
    if why is not None:
        print(f"ozfft bench {name}: {why}", file=sys.stderr)
        return 2
    return run(args)
