"""Exchanges between the ranks of a decomposed array: numpy arrays through MPI, cupy
arrays through NCCL.

:func:`redistribute` moves a block from a layout split along one axis to a layout split
along another (one all-to-all), :func:`allgather_along` assembles a split array on every
rank, and :func:`raise_problems` turns the problems the ranks gathered into the same error on
every rank, so that a bad call never leaves ranks waiting in an exchange. Buffers travel as
bytes, so int64 fixed-point parts and complex128 values use the same code. A
:class:`Transport` is one communicator's way of moving bytes: ``Alltoallv`` /
``Allgatherv`` of mpi4py for host arrays, grouped NCCL sends and receives for device
arrays (one GPU per rank; the NCCL communicator is built from a unique id broadcast over
MPI).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import block_range, local_shape

__all__ = [
    "MpiTransport",
    "NcclTransport",
    "Transport",
    "allgather_along",
    "raise_problems",
    "redistribute",
    "send_rows",
]

#: MPI counts are C ints: the bytes one rank sends another must stay below this
_MAX_MESSAGE = 2**31 - 1


def _byte_layout(
    counts: list[int], limit: int | None = _MAX_MESSAGE
) -> tuple[list[int], list[int]]:
    if limit is not None and max(counts, default=0) > limit:
        raise ValueError(
            f"an exchange message of {max(counts)} bytes exceeds MPI's 2**31 - 1 byte count; "
            "use more ranks"
        )
    displs = [0]
    for c in counts[:-1]:
        displs.append(displs[-1] + c)
    return counts, displs


class Transport:
    """Byte exchanges among the ranks of one communicator (``comm``: its mpi4py one)."""

    xp: Any = np
    #: the largest message in bytes (MPI counts are C ints; None: no limit)
    max_message: int | None = _MAX_MESSAGE

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.size, self.rank = comm.Get_size(), comm.Get_rank()

    def alltoallv(self, send, send_counts, send_displs, recv, recv_counts, recv_displs) -> None:
        raise NotImplementedError  # pragma: no cover - every transport defines it

    def allgatherv(self, send, recv, counts, displs) -> None:
        raise NotImplementedError  # pragma: no cover - every transport defines it


class MpiTransport(Transport):
    """Host arrays through MPI (mpi4py ``Alltoallv`` / ``Allgatherv`` of bytes)."""

    def alltoallv(self, send, send_counts, send_displs, recv, recv_counts, recv_displs) -> None:
        from mpi4py import MPI

        self.comm.Alltoallv(
            [send, (send_counts, send_displs), MPI.BYTE],
            [recv, (recv_counts, recv_displs), MPI.BYTE],
        )

    def allgatherv(self, send, recv, counts, displs) -> None:
        from mpi4py import MPI

        self.comm.Allgatherv(send, [recv, (counts, displs), MPI.BYTE])


class NcclTransport(Transport):
    """Device arrays through NCCL: each exchange is one group of point-to-point sends
    and receives on cupy's current stream (NCCL has no all-to-all-v; counts are size_t)."""

    max_message = None

    def __init__(self, comm: Any) -> None:
        super().__init__(comm)
        import cupy
        from cupy.cuda import nccl

        self.xp = cupy
        self._nccl = nccl
        uid = comm.bcast(nccl.get_unique_id() if self.rank == 0 else None, root=0)
        self._comm = nccl.NcclCommunicator(self.size, uid, self.rank)

    def _group(self, sends, recvs) -> None:
        nccl, stream = self._nccl, self.xp.cuda.get_current_stream().ptr
        nccl.groupStart()
        try:
            for peer, ptr, count in sends:
                if count:
                    self._comm.send(ptr, count, nccl.NCCL_UINT8, peer, stream)
            for peer, ptr, count in recvs:
                if count:
                    self._comm.recv(ptr, count, nccl.NCCL_UINT8, peer, stream)
        finally:
            nccl.groupEnd()

    def alltoallv(self, send, send_counts, send_displs, recv, recv_counts, recv_displs) -> None:
        s0, r0 = send.data.ptr, recv.data.ptr
        self._group(
            [(p, s0 + send_displs[p], send_counts[p]) for p in range(self.size)],
            [(p, r0 + recv_displs[p], recv_counts[p]) for p in range(self.size)],
        )

    def allgatherv(self, send, recv, counts, displs) -> None:
        r0 = recv.data.ptr
        self._group(
            [(p, send.data.ptr, send.nbytes) for p in range(self.size)],
            [(p, r0 + displs[p], counts[p]) for p in range(self.size)],
        )


def redistribute(
    transport: Transport, local, shape: tuple[int, ...], split_from: int, split_to: int
):
    """Rank's block of the global ``shape`` (plus trailing dimensions ``local`` may have)
    split along ``split_from``, returned split along ``split_to``.

    Every byte that changes rank is copied once on each side at most: the pieces for the
    other ranks are packed into one send buffer (or sent straight from ``local`` where
    they are contiguous, ``split_to`` leading), the pieces from the other ranks land
    straight in the result where they are contiguous there (``split_from`` leading, as
    in the slab forward transform) or are unpacked from one receive buffer, and the
    rank's own piece is one local copy that no transport sees. On one rank the layouts
    are the same: ``local`` is returned (C-contiguous).
    """
    xp, size, rank = transport.xp, transport.size, transport.rank
    if size == 1:
        return xp.ascontiguousarray(local)
    extra = local.shape[len(shape) :]
    mine = local_shape(shape, split_to, size, rank)
    out = xp.empty((*mine, *extra), local.dtype)

    def block(array, axis: int, peer: int) -> tuple[slice, ...]:
        index = [slice(None)] * array.ndim
        index[axis] = slice(*block_range(shape[axis], size, peer))
        return tuple(index)

    def elements(array, axis: int, peer: int) -> int:
        start, stop = block_range(shape[axis], size, peer)
        return int(np.prod(array.shape, dtype=np.int64)) // array.shape[axis] * (stop - start)

    item = local.itemsize
    out[block(out, split_from, rank)] = local[block(local, split_to, rank)]  # own piece
    sizes = [elements(local, split_to, p) * item for p in range(size)]
    if local.flags.c_contiguous and all(n == 1 for n in local.shape[:split_to]):
        send_counts, send_displs = _byte_layout(sizes, transport.max_message)
        sendbuf = local.reshape(-1).view(xp.uint8)
    else:  # pack the other ranks' pieces, in rank order, into one buffer
        send_counts, send_displs = _byte_layout(
            [0 if p == rank else n for p, n in enumerate(sizes)], transport.max_message
        )
        sendbuf = xp.empty(sum(send_counts) // item, local.dtype)
        for p in range(size):
            if p != rank:
                start, count = send_displs[p] // item, send_counts[p] // item
                piece = local[block(local, split_to, p)]
                sendbuf[start : start + count].reshape(piece.shape)[...] = piece
        sendbuf = sendbuf.view(xp.uint8)
    send_counts[rank] = 0
    sizes = [elements(out, split_from, p) * item for p in range(size)]
    direct = all(n == 1 for n in out.shape[:split_from])
    if direct:  # each source's piece is a contiguous range of the result
        recv_counts, recv_displs = _byte_layout(sizes, transport.max_message)
        recvbuf = out.reshape(-1).view(xp.uint8)
    else:
        recv_counts, recv_displs = _byte_layout(
            [0 if p == rank else n for p, n in enumerate(sizes)], transport.max_message
        )
        recvbuf = xp.empty(sum(recv_counts), xp.uint8)
    recv_counts[rank] = 0
    transport.alltoallv(sendbuf, send_counts, send_displs, recvbuf, recv_counts, recv_displs)
    if not direct:
        for p in range(size):
            if p != rank:
                target = out[block(out, split_from, p)]
                piece = recvbuf[recv_displs[p] : recv_displs[p] + recv_counts[p]]
                out[block(out, split_from, p)] = piece.view(local.dtype).reshape(target.shape)
    return out


def send_rows(
    transport: Transport, chunk, out, shape, split_from: int, split_to: int, rows, stream=None
):
    """One chunk of :func:`redistribute`: ``chunk`` is this rank's rows ``rows[rank]``
    (``[start, stop)``, global indices along ``split_from``) of the global ``shape``,
    whole along ``split_from``'s partner ``split_to``; ``out`` is this rank's block of
    the layout split along ``split_to`` (whole along ``split_from``), where the rows
    ``rows[p]`` of every rank ``p`` land. The pieces for the other ranks are packed on
    the current stream, the own piece copied into ``out``; the transfer runs on
    ``stream`` (device arrays: after an event of the current stream; None: the current
    stream, or at once for MPI). Returns the buffers that must outlive the transfer and a
    function that unpacks what arrived, to call once the transfer is complete (None
    where every piece landed in ``out`` directly)."""
    xp, size, rank = transport.xp, transport.size, transport.rank
    item = chunk.itemsize

    def block(array, axis: int, lo: int, hi: int) -> tuple[slice, ...]:
        index = [slice(None)] * array.ndim
        index[axis] = slice(lo, hi)
        return tuple(index)

    def elements(array, axis: int, length: int) -> int:
        return int(np.prod(array.shape, dtype=np.int64)) // array.shape[axis] * length

    cols = [block_range(shape[split_to], size, p) for p in range(size)]
    lo, hi = rows[rank]
    if hi > lo:
        out[block(out, split_from, lo, hi)] = chunk[block(chunk, split_to, *cols[rank])]
    counts = [elements(chunk, split_to, b - a) * item for a, b in cols]
    counts[rank] = 0
    send_counts, send_displs = _byte_layout(counts, transport.max_message)
    sendbuf = xp.empty(sum(send_counts) // item, chunk.dtype)
    for p in range(size):
        if p != rank and send_counts[p]:
            start, count = send_displs[p] // item, send_counts[p] // item
            piece = chunk[block(chunk, split_to, *cols[p])]
            sendbuf[start : start + count].reshape(piece.shape)[...] = piece
    sendbuf = sendbuf.view(xp.uint8)
    direct = all(n == 1 for n in out.shape[:split_from])
    sizes = [elements(out, split_from, b - a) * item for a, b in rows]
    sizes[rank] = 0
    if direct:  # each source's rows are a contiguous range of the result
        row = elements(out, split_from, 1) * item
        recv_counts = sizes
        recv_displs = [a * row for a, _ in rows]
        _byte_layout(recv_counts, transport.max_message)
        recvbuf = out.reshape(-1).view(xp.uint8)
    else:
        recv_counts, recv_displs = _byte_layout(sizes, transport.max_message)
        recvbuf = xp.empty(sum(recv_counts), xp.uint8)
    if stream is None:
        transport.alltoallv(sendbuf, send_counts, send_displs, recvbuf, recv_counts, recv_displs)
    else:
        stream.wait_event(xp.cuda.get_current_stream().record())
        with stream:
            transport.alltoallv(
                sendbuf, send_counts, send_displs, recvbuf, recv_counts, recv_displs
            )
    if direct:
        return [sendbuf], None

    def unpack() -> None:
        for p, (a, b) in enumerate(rows):
            if p != rank and b > a:
                target = out[block(out, split_from, a, b)]
                piece = recvbuf[recv_displs[p] : recv_displs[p] + recv_counts[p]]
                target[...] = piece.view(out.dtype).reshape(target.shape)

    return [sendbuf, recvbuf], unpack


def allgather_along(transport: Transport, local, axis: int, length: int):
    """The whole array of which every rank holds the block of ``axis`` (global
    ``length``) that :func:`~ozfft.distributed.layout.block_range` gives it."""
    xp, size = transport.xp, transport.size
    moved = xp.ascontiguousarray(xp.moveaxis(local, axis, 0))
    row = int(np.prod(moved.shape[1:], dtype=np.int64)) * moved.itemsize
    blocks = [block_range(length, size, src) for src in range(size)]
    counts, displs = _byte_layout(
        [(stop - start) * row for start, stop in blocks], transport.max_message
    )
    recv = xp.empty(sum(counts), xp.uint8)
    transport.allgatherv(moved.reshape(-1).view(xp.uint8), recv, counts, displs)
    whole = recv.view(local.dtype).reshape(length, *moved.shape[1:])
    return xp.moveaxis(whole, 0, axis)


def raise_problems(problems: list, error: type[Exception] = ValueError) -> None:
    """Raise ``error`` naming every rank's problem (the gathered ``problems``, None where
    a rank found none), if there is any."""
    found = [f"rank {r}: {p}" for r, p in enumerate(problems) if p is not None]
    if found:
        raise error("; ".join(found))
