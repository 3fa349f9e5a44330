"""Run under ``mpiexec -n N`` on N GPUs: ozfft.distributed with cupy arrays (NCCL)
against single-GPU ozfft on every rank, bit for bit (tests/test_distributed.py)."""

from __future__ import annotations

import cupy as cp
import harness  # tests/mpi/harness.py, beside this script
import numpy as np
from mpi4py import MPI

import ozfft
from ozfft.distributed import Plan

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()

CASES = [
    ((12, 10, 8), None, "slab", False),
    ((9, 7, 5), (2, 0, 1), "slab", False),
    ((16, 12, 10), None, "pencil", False),
    ((12, 10, 8), None, "slab", True),
    ((9, 8, 6), None, "pencil", True),
    ((64, 64, 64), None, "slab", False),
    ((4, 1100, 3), None, "pencil", False),
]


def check() -> None:
    for shape, axes, decomposition, real in CASES:
        rng = np.random.default_rng(abs(hash(shape)) % 2**32)
        x = rng.standard_normal(shape)
        if not real:
            x = x + 1j * rng.standard_normal(shape)
        x[0] *= 2.0**-300
        d = cp.asarray(x)
        for norm in (None, "ortho"):
            plan = Plan(shape, comm, axes=axes, real=real, norm=norm, decomposition=decomposition)
            y = plan.forward(cp.ascontiguousarray(d[plan.input_slices]))
            assert isinstance(y, cp.ndarray)
            full = (ozfft.rfftn if real else ozfft.fftn)(d, axes=axes, norm=norm)
            what = f"{decomposition} {plan.grid} {shape} {axes} real={real}"
            np.testing.assert_array_equal(cp.asnumpy(y), cp.asnumpy(full[plan.output_slices]), what)
            back = plan.backward(cp.ascontiguousarray(full[plan.output_slices]))
            if real:
                lengths = [shape[a] for a in (axes or range(len(shape)))]
                want = ozfft.irfftn(
                    full, s=lengths, axes=axes or tuple(range(len(shape))), norm=norm
                )
            else:
                want = ozfft.ifftn(full, axes=axes, norm=norm)
            np.testing.assert_array_equal(
                cp.asnumpy(back), cp.asnumpy(want[plan.input_slices]), f"back {what}"
            )


harness.run(comm, [check], f"ok: {size} ranks on GPUs")
