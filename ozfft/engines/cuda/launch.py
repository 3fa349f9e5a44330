"""Kernel launches through the CUDA driver with an argument block kept between calls.

cupy's ``RawKernel`` call converts its argument tuple on every launch (~8 µs on an H200
host for the 19 arguments of the fused FFT pass, ~11 µs with the numpy scalars built per
call); ``cuLaunchKernel`` from cuda-bindings with a kept block of C values takes ~4 µs
(docs/perf-notes.md, "Small transforms"). A 1-D transform of 2^18 points launches two
passes in ~0.1 ms, so this is a tenth of the call. The values are packed into the block
by one ``struct.pack_into`` (a ctypes assignment per value cost ~0.3 µs each: ~7 µs for
the 24 arguments of the plan probe's rows kernel). Without cuda-bindings the cupy call
is used.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["DriverLaunch", "launcher"]

#: the ``struct`` code of each argument kind, in an 8-byte slot of its own: a device array
#: (its pointer), int64, int32 (and 4 bytes of padding; little-endian, so the kernel reads
#: the value from the slot's start)
_SLOT_CODES = {"ptr": "Q", "i64": "q", "i32": "i4x"}


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
        self._is_ptr = tuple(kind == "ptr" for kind in self._kinds)
        self._format = struct.Struct("<" + "".join(_SLOT_CODES[kind] for kind in self._kinds))
        self._values = ctypes.create_string_buffer(8 * max(1, len(self._kinds)))
        base = ctypes.addressof(self._values)
        self._block = (ctypes.c_void_p * max(1, len(self._kinds)))(
            *[base + 8 * i for i in range(len(self._kinds))]
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
        values = [
            (arg if isinstance(arg, int) else arg.data.ptr) if is_ptr else arg
            for is_ptr, arg in zip(self._is_ptr, args, strict=True)
        ]
        with self._lock:
            self._format.pack_into(self._values, 0, *values)
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
