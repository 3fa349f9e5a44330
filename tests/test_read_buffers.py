"""The CUDA engine's asynchronous reads (``_read_async``): page-locked buffers reused once
read, and parked, not freed, while a copy dropped unread may still write them. Host-only:
a stand-in for cupy whose events finish when the test says so."""

from __future__ import annotations

import gc
import sys
import types

import numpy as np
import pytest

from ozfft.engines.cuda import engine as cuda_engine


class _Event:
    def __init__(self, disable_timing: bool = True) -> None:
        self.done = False

    def record(self, stream) -> None:
        self.done = False  # (the copy queued before it is in flight)

    def synchronize(self) -> None:
        self.done = True


class _Values:
    """A device array's stand-in: 10 int64 values whose copy writes ``fill``."""

    dtype = np.dtype(np.int64)

    def __init__(self, fill: int) -> None:
        self.fill = fill
        self.data = types.SimpleNamespace(ptr=fill)


@pytest.fixture
def fake_cupy(monkeypatch):
    """A cupy with one device: ``memcpyAsync`` writes the source's fill at once."""
    pinned = types.ModuleType("cupyx")
    monkeypatch.setitem(sys.modules, "cupyx", pinned)
    buffers = {}  # page-locked stand-ins by address

    def empty_pinned(shape, dtype):
        host = np.zeros(shape, dtype)
        buffers[host.ctypes.data] = host
        return host

    def copy(dst, src, nbytes, kind, stream):
        buffers[dst][:nbytes].view(np.int64)[:] = src

    pinned.empty_pinned = empty_pinned
    cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDevice=lambda: 0, memcpyAsync=copy),
        Event=_Event,
        get_current_stream=lambda: types.SimpleNamespace(ptr=0),
    )
    monkeypatch.setattr(cuda_engine, "_KEPT", cuda_engine._Kept())
    return types.SimpleNamespace(cuda=cuda)


def test_a_read_returns_its_values_and_its_buffer(fake_cupy):
    read = cuda_engine._read_async(fake_cupy, _Values(7), 10)
    np.testing.assert_array_equal(read(), np.full(10, 7))
    np.testing.assert_array_equal(read(), np.full(10, 7))  # (once read, kept)
    assert len(cuda_engine._KEPT.reads[0]) == 1
    again = cuda_engine._read_async(fake_cupy, _Values(8), 10)  # the same buffer again
    assert not cuda_engine._KEPT.reads[0]
    np.testing.assert_array_equal(again(), np.full(10, 8))


def test_reads_dropped_unread_are_parked_until_their_copies_are_done(fake_cupy):
    """Two reads dropped unread park their buffers; whichever copy finishes first, a later
    read takes back exactly the finished ones (and none while both are in flight)."""
    first = cuda_engine._read_async(fake_cupy, _Values(1), 10)
    second = cuda_engine._read_async(fake_cupy, _Values(2), 10)
    del first, second
    gc.collect()
    parked = cuda_engine._KEPT.parked_reads[0]
    assert len(parked) == 2 and not cuda_engine._KEPT.reads[0]
    slots = list(parked)
    third = cuda_engine._read_async(fake_cupy, _Values(3), 10)  # both in flight: a new buffer
    assert parked == slots
    slots[1][2].done = True  # the later-parked copy finishes first
    fourth = cuda_engine._read_async(fake_cupy, _Values(4), 10)  # takes it back, uses it
    assert parked == [slots[0]] and not cuda_engine._KEPT.reads[0]
    slots[0][2].done = True
    np.testing.assert_array_equal(third(), np.full(10, 3))
    np.testing.assert_array_equal(fourth(), np.full(10, 4))
    fifth = cuda_engine._read_async(fake_cupy, _Values(5), 10)
    assert not parked
    np.testing.assert_array_equal(fifth(), np.full(10, 5))
    assert len(cuda_engine._KEPT.reads[0]) == 3  # every buffer kept, none lost
