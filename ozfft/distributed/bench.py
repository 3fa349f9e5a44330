"""Weak scaling of the distributed FFT on GPUs, against the same decomposition with cuFFT.

Run under MPI, one GPU per rank::

    mpiexec -n 2 python -m ozfft.distributed.bench --n 512 --out bench/results/<gpu>-x2

Each rank holds ``n³`` complex128 values of an ``(n·ranks, n, n)`` array (a slab of axis
0): the time of :meth:`ozfft.distributed.Plan.forward` (NCCL), of the same slab transform
with ``cupy.fft`` (cuFFT) as the local transform and the same
:func:`~ozfft.distributed.exchange.redistribute`, and of the exchange alone — wall time
with barriers, median of ``--reps``. Rank 0 writes ``distributed_<ranks>.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from .exchange import NcclTransport, redistribute
from .plan import Plan

__all__ = ["main", "measure"]


def measure(n: int = 512, reps: int = 5) -> dict:
    """The three times (ms) on this communicator; every rank calls it."""
    import cupy as cp
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    size = comm.Get_size()
    cp.cuda.Device(comm.Get_rank() % cp.cuda.runtime.getDeviceCount()).use()
    shape = (n * size, n, n)
    plan = Plan(shape, comm)
    rng = np.random.default_rng(comm.Get_rank())
    x = cp.asarray(rng.standard_normal(plan.local_input_shape) + 1j)
    transport = NcclTransport(comm)

    def timed(f) -> float:
        f()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(reps):
            comm.Barrier()
            t = time.perf_counter()
            f()
            cp.cuda.Device().synchronize()
            comm.Barrier()
            times.append((time.perf_counter() - t) * 1e3)
        return float(np.median(times))

    def cufft_slab():
        y = cp.fft.fftn(x, axes=(1, 2))
        return cp.fft.fft(redistribute(transport, y, shape, 0, 1), axis=0)

    return {
        "gpus": size,
        "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "shape": list(shape),
        "ozfft_ms": timed(lambda: plan.forward(x)),
        "cufft_slab_ms": timed(cufft_slab),
        "exchange_ms": timed(lambda: redistribute(transport, x, shape, 0, 1)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ozfft.distributed.bench")
    parser.add_argument("--n", type=int, default=512, help="n³ elements per GPU")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="folder for the JSON")
    args = parser.parse_args(argv)
    result = measure(args.n, args.reps)
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_rank() == 0:
        print(json.dumps(result))
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"distributed_{result['gpus']}.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":  # pragma: no cover - run under mpiexec
    raise SystemExit(main())
