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
    split along ``split_from``, returned split along ``split_to``."""
    xp, size, rank = transport.xp, transport.size, transport.rank
    extra = local.shape[len(shape) :]
    item = local.itemsize * int(np.prod(extra, dtype=np.int64))
    send = []
    for dest in range(size):
        start, stop = block_range(shape[split_to], size, dest)
        index = [slice(None)] * local.ndim
        index[split_to] = slice(start, stop)
        send.append(xp.ascontiguousarray(local[tuple(index)]).reshape(-1).view(xp.uint8))
    send_counts, send_displs = _byte_layout([int(b.size) for b in send], transport.max_message)
    mine = local_shape(shape, split_to, size, rank)
    recv_shapes = []
    for src in range(size):
        src_shape = list(mine)
        start, stop = block_range(shape[split_from], size, src)
        src_shape[split_from] = stop - start
        recv_shapes.append(tuple(src_shape))
    recv_counts, recv_displs = _byte_layout(
        [int(np.prod(s, dtype=np.int64)) * item for s in recv_shapes], transport.max_message
    )
    sendbuf = xp.concatenate(send) if send else xp.empty(0, xp.uint8)
    recvbuf = xp.empty(sum(recv_counts), xp.uint8)
    transport.alltoallv(sendbuf, send_counts, send_displs, recvbuf, recv_counts, recv_displs)
    out = xp.empty((*mine, *extra), local.dtype)
    for src in range(size):
        start, stop = block_range(shape[split_from], size, src)
        index = [slice(None)] * out.ndim
        index[split_from] = slice(start, stop)
        piece = recvbuf[recv_displs[src] : recv_displs[src] + recv_counts[src]]
        out[tuple(index)] = piece.view(local.dtype).reshape(*recv_shapes[src], *extra)
    return out


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
