"""Kernel launches through the CUDA driver with an argument block kept between calls.

cupy's ``RawKernel`` call converts its argument tuple on every launch (~8 µs on an H200
host for the 19 arguments of the fused FFT pass, ~11 µs with the numpy scalars built per
call); ``cuLaunchKernel`` from cuda-bindings with a kept block of C values takes ~4 µs
(docs/perf-notes.md, "Small transforms"). A 1-D transform of 2^18 points launches two
passes in ~0.1 ms, so this is a tenth of the call. Without cuda-bindings the cupy call is
used.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["DriverLaunch", "launcher"]

#: the C type of each argument kind: a device array (its pointer), int64, int32
_C_TYPES = {"ptr": ctypes.c_void_p, "i64": ctypes.c_longlong, "i32": ctypes.c_int}


class DriverLaunch:
    """``kernel`` (a cupy ``RawKernel``) launched by ``cuLaunchKernel`` on cupy's current
    stream; ``signature`` names the kind of each parameter, in the kernel's order
    (``"ptr"``: a cupy array, passed as its device pointer; ``"i64"``, ``"i32"``: an int).
    Calls from several threads take turns on the one argument block."""

    def __init__(self, kernel: Any, signature: Sequence[str]) -> None:
        import cupy
        from cuda.bindings import driver

        self._cp = cupy
        self._driver = driver
        self._function = driver.CUfunction(init_value=kernel.kernel.ptr)
        self._kinds = tuple(signature)
        self._values = [_C_TYPES[kind]() for kind in self._kinds]
        self._block = (ctypes.c_void_p * len(self._values))(
            *[ctypes.addressof(v) for v in self._values]
        )
        self._address = ctypes.addressof(self._block)
        self._streams: dict[int, Any] = {}
        self._lock = threading.Lock()

    def __call__(
        self,
        grid: tuple[int, ...],
        block: tuple[int, ...],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> None:
        if len(args) != len(self._kinds):
            raise TypeError(f"the kernel takes {len(self._kinds)} arguments, got {len(args)}")
        gx, gy, gz = (*grid, 1, 1)[:3]
        bx, by, bz = (*block, 1, 1)[:3]
        stream_ptr = self._cp.cuda.get_current_stream().ptr
        with self._lock:
            for value, kind, arg in zip(self._values, self._kinds, args, strict=True):
                value.value = arg.data.ptr if kind == "ptr" else int(arg)
            stream = self._streams.get(stream_ptr)
            if stream is None:
                stream = self._streams[stream_ptr] = self._driver.CUstream(init_value=stream_ptr)
            launch = (self._function, gx, gy, gz, bx, by, bz, shared_mem, stream, self._address, 0)
            (status,) = self._driver.cuLaunchKernel(*launch)
            if status == self._driver.CUresult.CUDA_ERROR_INVALID_CONTEXT:
                # a thread on which no CUDA runtime call has bound cupy's device yet
                runtime = self._cp.cuda.runtime
                runtime.setDevice(runtime.getDevice())
                (status,) = self._driver.cuLaunchKernel(*launch)
        if status != self._driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel failed: {status.name}")


def launcher(kernel: Any, signature: Sequence[str]) -> Any:
    """A :class:`DriverLaunch` of ``kernel``, or, without cuda-bindings, a function with the
    same call that passes the arguments to cupy's launch (ints as ``signature`` types)."""
    try:
        return DriverLaunch(kernel, signature)
    except ImportError:
        import numpy as np

        kinds = tuple(signature)
        scalar = {"i64": np.int64, "i32": np.int32}

        def launch(grid, block, args, shared_mem: int = 0) -> None:
            if len(args) != len(kinds):
                raise TypeError(f"the kernel takes {len(kinds)} arguments, got {len(args)}")
            kernel(
                grid,
                block,
                tuple(a if k == "ptr" else scalar[k](a) for k, a in zip(kinds, args, strict=True)),
                shared_mem=shared_mem,
            )

        return launch
