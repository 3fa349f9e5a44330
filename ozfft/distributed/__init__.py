"""Distributed n-D FFTs over MPI ranks (slab and pencil decompositions), bit for bit the
single-process :func:`ozfft.fftn` of the gathered array (docs/distributed.md).

Nothing else in ozfft imports this package; it needs mpi4py (and an MPI: the ``mpich``
wheel, or the system's).
"""

from __future__ import annotations

from .plan import Plan, fftn, ifftn, irfftn, rfftn

__all__ = ["Plan", "fftn", "ifftn", "irfftn", "rfftn"]
