"""Run under ``mpiexec -n N`` on N GPUs: ozfft.distributed with cupy arrays (NCCL)
against single-GPU ozfft on every rank, bit for bit (tests/test_distributed.py)."""

from __future__ import annotations

import cupy as cp
import harness  # tests/mpi/harness.py, beside this script
import numpy as np
from mpi4py import MPI

import ozfft
from ozfft.distributed import Plan
from ozfft.errors import NonFiniteInputError

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
    ((2048, 6, 4), None, "slab", False),
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
        for norm, chunks in ((None, None), ("ortho", None), (None, 1), (None, 3)):
            plan = Plan(
                shape, comm, axes=axes, real=real, norm=norm, decomposition=decomposition,
                chunks=chunks,
            )  # fmt: skip
            local = cp.ascontiguousarray(d[plan.input_slices])
            y = plan.forward(local)
            assert isinstance(y, cp.ndarray)
            full = (ozfft.rfftn if real else ozfft.fftn)(d, axes=axes, norm=norm)
            what = f"{decomposition} {plan.grid} {shape} {axes} real={real} chunks={chunks}"
            np.testing.assert_array_equal(cp.asnumpy(y), cp.asnumpy(full[plan.output_slices]), what)
            # the input is the caller's: the first pass writes a new array
            np.testing.assert_array_equal(cp.asnumpy(local), x[plan.input_slices], what)
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


def check_nonfinite() -> None:
    """NaN or Inf on one rank only: the first passes' device flags, agreed over the
    ranks at the end of the call, raise the same error on every rank (no hang)."""
    for chunks, decomposition, real in (
        (None, "slab", False),
        (1, "slab", False),
        (None, "pencil", False),
        (None, "slab", True),
    ):
        plan = Plan((16, 12, 10), comm, chunks=chunks, decomposition=decomposition, real=real)
        dtype = np.float64 if real else np.complex128
        x = cp.ones(plan.local_input_shape, dtype)
        if rank == size - 1:
            x[0, 1, 2] = np.inf
        harness.expect(
            NonFiniteInputError, "1 non-finite value(s) (Inf)", lambda p=plan, a=x: p.forward(a)
        )
        back = cp.ones(plan.local_output_shape, np.complex128)
        if rank == 0:
            back[-1, 0, 0] = np.nan
            back[0, 0, 1] = np.nan
        harness.expect(
            NonFiniteInputError, "2 non-finite value(s) (NaN)", lambda p=plan, a=back: p.backward(a)
        )
        # and a finite call after the error works
        plan.forward(cp.zeros(plan.local_input_shape, dtype))


harness.run(comm, [check, check_nonfinite], f"ok: {size} ranks on GPUs")
