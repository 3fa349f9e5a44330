"""Block layouts of a global array over the ranks of a communicator.

A slab layout splits one axis into contiguous blocks, one per rank; with ``n`` not
divisible by the rank count ``p`` the first ``n mod p`` ranks hold one index more (as
mpi4py-fft and heFFTe do). Everything here is plain arithmetic on shapes.
"""

from __future__ import annotations

__all__ = ["block_range", "box", "local_shape"]


def block_range(n: int, parts: int, rank: int) -> tuple[int, int]:
    """``[start, stop)`` of block ``rank`` when ``n`` indices are split into ``parts``."""
    base, extra = divmod(n, parts)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def box(shape: tuple[int, ...], split: int, parts: int, rank: int) -> tuple[slice, ...]:
    """The slices of the global ``shape`` that rank ``rank`` holds when axis ``split`` is
    split into ``parts`` blocks (every other axis whole)."""
    start, stop = block_range(shape[split], parts, rank)
    return tuple(slice(start, stop) if a == split else slice(0, n) for a, n in enumerate(shape))


def local_shape(shape: tuple[int, ...], split: int, parts: int, rank: int) -> tuple[int, ...]:
    """The shape of rank ``rank``'s block (see :func:`box`)."""
    start, stop = block_range(shape[split], parts, rank)
    return tuple(stop - start if a == split else n for a, n in enumerate(shape))
