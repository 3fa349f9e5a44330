"""Non-finite input flags in mapped pinned host memory (the CUDA engine's
:meth:`~ozfft.engines.base.Engine.new_input_flag`).

A fused pass that loads a NaN or Inf stores 1 into the int32 flag it was given
(``kernels/fft/fixed_pass.cu``); the call reads the flag once, when it ends. A flag in
device memory costs two extra operations per call — zeroing it (a memset) and copying it
back (a blocking device-to-host copy), ~18 µs on an H200 host, a sixth of a 2^18 transform.
Here the flags live in page-locked host memory that the GPU writes directly (unified
addressing: the host pointer is valid on every device), so the host zeroes a slot with a
plain store and reads it after synchronizing the stream.

The slots form a ring: a call holds its slot from :meth:`MappedFlags.take` until it has
read it (calls synchronize before they return), so slots are reused only after
``slots`` later calls — concurrent calls from more than ``slots`` threads at once would
share one.
"""

from __future__ import annotations

import ctypes
import itertools
import weakref
from typing import Any

import numpy as np

__all__ = ["FlaggedCounts", "MappedFlags"]

_HOST_ALLOC_PORTABLE = 1  #: cudaHostAllocPortable: pinned for every CUDA context
_HOST_ALLOC_MAPPED = 2  #: cudaHostAllocMapped: mapped into the device address space


class _MappedFlag:
    """One slot: ``array`` (a one-element int32 cupy array the kernel writes) and
    :meth:`raised` (waits for the current stream, then reads the slot on the host)."""

    __slots__ = ("_cp", "_host", "_index", "array")

    def __init__(self, cupy: Any, host: np.ndarray, index: int, array: Any) -> None:
        self._cp, self._host, self._index, self.array = cupy, host, index, array

    def raised(self) -> bool:
        self._cp.cuda.get_current_stream().synchronize()
        return bool(self._host[self._index])


def _mapped_int32(owner: Any, cupy: Any, slots: int) -> tuple[int, np.ndarray]:
    """``slots`` int32 in mapped, portable pinned host memory, freed with ``owner``: their
    address (unified addressing: the device's as well) and a numpy view of them."""
    runtime = cupy.cuda.runtime
    ptr = runtime.hostAlloc(4 * slots, _HOST_ALLOC_PORTABLE | _HOST_ALLOC_MAPPED)
    weakref.finalize(owner, runtime.freeHost, ptr)
    return ptr, np.ctypeslib.as_array((ctypes.c_int32 * slots).from_address(ptr))


class MappedFlags:
    """A ring of ``slots`` int32 flags in mapped, portable pinned host memory."""

    def __init__(self, cupy: Any, slots: int = 1024) -> None:
        ptr, self._host = _mapped_int32(self, cupy, slots)
        self._cp = cupy
        memory = cupy.cuda.UnownedMemory(ptr, 4 * slots, self)
        device = cupy.ndarray((slots,), cupy.int32, cupy.cuda.MemoryPointer(memory, 0))
        self._arrays = [device[i : i + 1] for i in range(slots)]
        self._slots = slots
        self._next = itertools.count()

    def take(self) -> _MappedFlag:
        """The next slot, zeroed."""
        index = next(self._next) % self._slots
        self._host[index] = 0
        return _MappedFlag(self._cp, self._host, index, self._arrays[index])


class FlaggedCounts:
    """``slots`` uint64 counts a kernel adds to in device memory (zero between calls) and a
    mapped host flag the kernel sets whenever it adds to them: the device word after the
    counts holds the flag's address (``oz_sp_count`` in ``kernels/gemm/small_product.cu``).
    A call on finite operands then costs a store (:meth:`arm`) and a read after the stream's
    synchronization (:meth:`read`), no memset and no device-to-host copy (~14 µs of host
    time a call on an H200 host); only a call whose kernel counted copies the counts back,
    and zeroes them again. One per thread and device: a call holds it from :meth:`arm` to
    :meth:`read`."""

    def __init__(self, cupy: Any, slots: int = 4) -> None:
        ptr, self._flag = _mapped_int32(self, cupy, 1)
        self._cp = cupy
        self._slots = slots
        self._counts = cupy.zeros(slots + 1, cupy.uint64)
        self._counts[slots] = ptr  # (unified addressing: the host pointer is the device's)
        cupy.cuda.get_current_stream().synchronize()
        self._armed = False

    def arm(self) -> int:
        """The flag cleared; the device address of the counts, for the kernel. (Where the
        last call was interrupted between its launch and its read, its kernel is waited
        for and whatever it counted dropped first.)"""
        if self._armed:
            self._cp.cuda.Device().synchronize()
            self._zero()
        self._flag[0] = 0
        self._armed = True
        return self._counts.data.ptr

    def read(self) -> np.ndarray | None:
        """Waits for the current stream; None where the kernel counted nothing, else the
        counts (zeroed again on the device for the next call)."""
        self._cp.cuda.get_current_stream().synchronize()
        if not self._flag[0]:
            self._armed = False
            return None
        counts = self._cp.asnumpy(self._counts[: self._slots])
        self._zero()
        self._armed = False  # (only once zeroed: an interrupted read is mended by arm)
        return counts

    def _zero(self) -> None:
        self._counts[: self._slots] = 0
        self._cp.cuda.get_current_stream().synchronize()
