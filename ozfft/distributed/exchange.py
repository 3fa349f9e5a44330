"""Exchanges between the ranks of a slab-decomposed array, on numpy arrays through MPI.

:func:`redistribute` moves a block from a layout split along one axis to a layout split
along another (one ``Alltoallv``), :func:`allgather_along` assembles a split array on
every rank (one ``Allgatherv``), and :func:`agree` turns a problem found on any rank
into the same error on every rank, so that a bad call never leaves ranks waiting in an
exchange. Buffers travel as bytes, so int64 fixed-point parts and complex128 values use
the same code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import block_range, local_shape

__all__ = ["agree", "allgather_along", "redistribute"]

#: MPI counts are C ints: the bytes one rank sends another must stay below this
_MAX_MESSAGE = 2**31 - 1


def _byte_layout(counts: list[int]) -> tuple[list[int], list[int]]:
    if max(counts, default=0) > _MAX_MESSAGE:
        raise ValueError(
            f"an exchange message of {max(counts)} bytes exceeds MPI's 2**31 - 1 byte count; "
            "use more ranks"
        )
    displs = [0]
    for c in counts[:-1]:
        displs.append(displs[-1] + c)
    return counts, displs


def redistribute(
    comm: Any, local: np.ndarray, shape: tuple[int, ...], split_from: int, split_to: int
) -> np.ndarray:
    """Rank's block of the global ``shape`` (plus trailing dimensions ``local`` may have)
    split along ``split_from``, returned split along ``split_to``."""
    from mpi4py import MPI

    size, rank = comm.Get_size(), comm.Get_rank()
    extra = local.shape[len(shape) :]
    item = local.itemsize * int(np.prod(extra, dtype=np.int64))
    send = []
    for dest in range(size):
        start, stop = block_range(shape[split_to], size, dest)
        index = [slice(None)] * local.ndim
        index[split_to] = slice(start, stop)
        send.append(np.ascontiguousarray(local[tuple(index)]).reshape(-1).view(np.uint8))
    send_counts, send_displs = _byte_layout([b.size for b in send])
    mine = local_shape(shape, split_to, size, rank)
    recv_shapes = []
    for src in range(size):
        src_shape = list(mine)
        start, stop = block_range(shape[split_from], size, src)
        src_shape[split_from] = stop - start
        recv_shapes.append(tuple(src_shape))
    recv_counts, recv_displs = _byte_layout(
        [int(np.prod(s, dtype=np.int64)) * item for s in recv_shapes]
    )
    sendbuf = np.concatenate(send) if send else np.empty(0, np.uint8)
    recvbuf = np.empty(sum(recv_counts), np.uint8)
    comm.Alltoallv(
        [sendbuf, (send_counts, send_displs), MPI.BYTE],
        [recvbuf, (recv_counts, recv_displs), MPI.BYTE],
    )
    out = np.empty((*mine, *extra), local.dtype)
    for src in range(size):
        start, stop = block_range(shape[split_from], size, src)
        index = [slice(None)] * out.ndim
        index[split_from] = slice(start, stop)
        piece = recvbuf[recv_displs[src] : recv_displs[src] + recv_counts[src]]
        out[tuple(index)] = piece.view(local.dtype).reshape(*recv_shapes[src], *extra)
    return out


def allgather_along(comm: Any, local: np.ndarray, axis: int, length: int) -> np.ndarray:
    """The whole array of which every rank holds the block of ``axis`` (global
    ``length``) that :func:`~ozfft.distributed.layout.block_range` gives it."""
    from mpi4py import MPI

    size = comm.Get_size()
    moved = np.ascontiguousarray(np.moveaxis(local, axis, 0))
    row = moved[0].nbytes if moved.shape[0] else int(np.prod(moved.shape[1:])) * moved.itemsize
    counts = []
    for src in range(size):
        start, stop = block_range(length, size, src)
        counts.append((stop - start) * row)
    counts, displs = _byte_layout(counts)
    recv = np.empty(sum(counts), np.uint8)
    comm.Allgatherv(moved.reshape(-1).view(np.uint8), [recv, (counts, displs), MPI.BYTE])
    whole = recv.view(local.dtype).reshape(length, *moved.shape[1:])
    return np.moveaxis(whole, 0, axis)


def agree(comm: Any, problem: str | None, error: type[Exception] = ValueError) -> None:
    """Raise ``error`` on every rank if any rank found a problem (``problem`` is that
    rank's description, None where all is well)."""
    problems = comm.allgather(problem)
    found = [f"rank {r}: {p}" for r, p in enumerate(problems) if p is not None]
    if found:
        raise error("; ".join(found))
