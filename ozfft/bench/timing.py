"""CUDA-event timing shared by the benchmark campaigns."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["median_ms"]


def median_ms(cp: Any, fn, reps: int, warm: int = 2) -> float:
    """Median milliseconds of ``fn()`` on the current stream, after ``warm`` calls."""
    for _ in range(warm):
        fn()
    cp.cuda.get_current_stream().synchronize()
    times = []
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))
