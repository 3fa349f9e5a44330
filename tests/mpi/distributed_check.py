"""Run under ``mpiexec -n N``: ozfft.distributed against single-process ozfft on every
rank, bit for bit, and its errors (tests/test_distributed.py launches it)."""

from __future__ import annotations

import itertools

import harness  # tests/mpi/harness.py, beside this script
import numpy as np
from mpi4py import MPI

import ozfft
from ozfft.distributed import Plan
from ozfft.errors import NonFiniteInputError

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

# (global shape, axes): even and uneven splits, other axis orders, a 4-d array, a length
# above one pass (four-step) and a Bluestein length (runs of a single pass)
CASES = [
    ((12, 10, 8), None),
    ((9, 7, 5), None),
    ((8, 6, 10), (2, 0, 1)),
    ((6, 8, 4, 5), (1, 3)),
    ((16, 12), None),
    ((4, 1100), None),
    ((8, 67), (1, 0)),
]


PENCIL_CASES = [
    ((12, 10, 8), None),
    ((9, 7, 5), None),
    ((8, 6, 10), (2, 0, 1)),
    ((6, 8, 4, 5), (1, 3)),
    ((4, 1100, 3), None),
]


def check_transforms() -> None:
    cases = [(shape, axes, "slab") for shape, axes in CASES]
    cases += [(shape, axes, "pencil") for shape, axes in PENCIL_CASES]
    for shape, axes, decomposition in cases:
        rng = np.random.default_rng(abs(hash(shape)) % 2**32)  # the same on every rank
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        x[0] *= 2.0**-300  # lines of very different scales
        for norm in (None, "ortho", "forward"):
            plan = Plan(shape, comm, axes=axes, norm=norm, decomposition=decomposition)
            local = np.ascontiguousarray(x[plan.input_slices])
            y = plan.forward(local)
            full = ozfft.fftn(x, axes=axes, norm=norm)
            what = f"{decomposition} {plan.grid} {shape} {axes}"
            np.testing.assert_array_equal(y, full[plan.output_slices], err_msg=what)
            np.testing.assert_array_equal(local, x[plan.input_slices], err_msg=what)
            spectrum = np.ascontiguousarray(full[plan.output_slices])
            back = plan.backward(spectrum)
            np.testing.assert_array_equal(spectrum, full[plan.output_slices], err_msg=what)
            want = ozfft.ifftn(full, axes=axes, norm=norm)[plan.input_slices]
            np.testing.assert_array_equal(back, want, err_msg=f"backward {what}")
        real = x.real.copy()
        plan = Plan(shape, comm, axes=axes, decomposition=decomposition)
        y = plan.forward(np.ascontiguousarray(real[plan.input_slices]))
        np.testing.assert_array_equal(y, ozfft.fftn(real, axes=axes)[plan.output_slices])
        single = plan.forward(np.ascontiguousarray(x[plan.input_slices]).astype(np.complex64))
        assert single.dtype == np.complex64


REAL_CASES = [
    ((12, 10, 8), None, "slab"),
    ((9, 7, 5), None, "slab"),
    ((8, 6, 10), (2, 0, 1), "slab"),
    ((16, 13), None, "slab"),
    ((6, 1100), (1, 0), "slab"),
    ((12, 10, 8), None, "pencil"),
    ((9, 7, 6), (0, 2, 1), "pencil"),
    ((6, 8, 4, 5), (1, 3), "pencil"),
]


def check_real_transforms() -> None:
    for shape, axes, decomposition in REAL_CASES:
        rng = np.random.default_rng(abs(hash(shape)) % 2**32 + 1)
        x = rng.standard_normal(shape)
        x[1] *= 2.0**-200
        for norm in (None, "ortho", "forward"):
            plan = Plan(shape, comm, axes=axes, real=True, norm=norm, decomposition=decomposition)
            y = plan.forward(np.ascontiguousarray(x[plan.input_slices]))
            full = ozfft.rfftn(x, axes=axes, norm=norm)
            what = f"real {decomposition} {plan.grid} {shape} {axes} {norm}"
            np.testing.assert_array_equal(y, full[plan.output_slices], err_msg=what)
            back = plan.backward(np.ascontiguousarray(full[plan.output_slices]))
            lengths = [shape[a] for a in (axes or range(len(shape)))]
            want = ozfft.irfftn(full, s=lengths, axes=axes or tuple(range(len(shape))), norm=norm)
            np.testing.assert_array_equal(back, want[plan.input_slices], err_msg=f"back {what}")
        plan = Plan(shape, comm, axes=axes, real=True, decomposition=decomposition)
        harness.expect(
            ValueError,
            "expected float32/64",
            lambda p=plan: p.forward(np.zeros(p.local_input_shape, complex)),
        )


# slab forward transforms whose one exchange overlaps the passes before it: a run carrying
# fixed point across the exchange (one-pass lengths), a run rounded before it (a four-step
# axis after the exchange), uneven blocks and chunks, another split axis
CHUNK_CASES = [
    ((12, 10, 8), None),
    ((9, 7, 5), None),
    ((8, 6, 10), (2, 0, 1)),
    ((1100, 6, 4), None),
    ((6, 8, 4, 5), (1, 3)),
    ((16, 12), None),
]


def check_chunked() -> None:
    """Plan(chunks=k): each rank's block bit for bit the single-process transform, for
    any k (the chunks' passes, their exchange and the gathered line exponents)."""
    for shape, axes in CHUNK_CASES:
        rng = np.random.default_rng(abs(hash(shape)) % 2**32 + 2)
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        x[1] *= 2.0**-250  # lines of very different scales
        full = ozfft.fftn(x, axes=axes)
        for chunks in (2, 3, 64):
            plan = Plan(shape, comm, axes=axes, chunks=chunks)
            assert plan._chunk_count(x) == min(chunks, shape[plan._input_split[0]] // size)
            if size > 1:
                assert plan._overlap is not None, shape
            local = np.ascontiguousarray(x[plan.input_slices])
            kept = local.copy()
            y = plan.forward(local)
            what = f"chunks={chunks} {shape} {axes}"
            np.testing.assert_array_equal(y, full[plan.output_slices], err_msg=what)
            np.testing.assert_array_equal(local, kept, err_msg=f"input changed: {what}")


def check_redistribute() -> None:
    """Every pair of split axes, uneven blocks, trailing dimensions and a non-contiguous
    block: the result is the slice of the global array that the new layout gives this
    rank (the exchange alone, against plain indexing of the global array)."""
    from ozfft.distributed.exchange import MpiTransport, redistribute
    from ozfft.distributed.layout import box

    transport = MpiTransport(comm)
    for shape, extra in (((7, 5, 6), ()), ((5, 9, 4), (2,)), ((6, 4, 5, 3), ())):
        full = np.arange(int(np.prod(shape + extra)), dtype=np.int64).reshape(shape + extra)
        for old, new in itertools.permutations(range(len(shape)), 2):
            if min(shape[old], shape[new]) < size:
                continue
            mine = full[box(shape, old, size, rank)]
            got = redistribute(transport, mine, shape, old, new)
            np.testing.assert_array_equal(got, full[box(shape, new, size, rank)], f"{old}->{new}")
            strided = np.asfortranarray(mine)
            got = redistribute(transport, strided, shape, old, new)
            np.testing.assert_array_equal(got, full[box(shape, new, size, rank)])


def check_functional_forms() -> None:
    """ozfft.distributed.fftn / ifftn / rfftn / irfftn: Plan(...).forward / backward."""
    from ozfft import distributed

    shape = (9, 8, 6)
    x = np.random.default_rng(7).standard_normal(shape)
    plan = Plan(shape, comm, real=True)
    y = distributed.rfftn(np.ascontiguousarray(x[plan.input_slices]), shape, comm)
    full = ozfft.rfftn(x)
    np.testing.assert_array_equal(y, full[plan.output_slices])
    back = distributed.irfftn(np.ascontiguousarray(full[plan.output_slices]), shape, comm)
    np.testing.assert_array_equal(
        back, ozfft.irfftn(full, s=shape, axes=(0, 1, 2))[plan.input_slices]
    )
    plan = Plan(shape, comm, decomposition="pencil")
    c = x + 1j
    y = distributed.fftn(c[plan.input_slices], shape, comm, decomposition="pencil")
    np.testing.assert_array_equal(y, ozfft.fftn(c)[plan.output_slices])
    back = distributed.ifftn(y, shape, comm, decomposition="pencil")
    np.testing.assert_array_equal(back, ozfft.ifftn(ozfft.fftn(c))[plan.input_slices])


def check_errors() -> None:
    if size > 1:
        harness.expect(ValueError, "different arguments", lambda: Plan((8, 8, 8 + rank), comm))
        harness.expect(ValueError, "cannot split axis", lambda: Plan((size - 1, 8), comm))
    plan = Plan((8, 6, 4), comm)
    good = np.zeros(plan.local_input_shape, complex)
    bad = np.zeros((1, 2, 3), complex) if rank == 0 else good
    harness.expect(ValueError, "rank 0: local array of shape", lambda: plan.forward(bad))
    ints = np.zeros(plan.local_input_shape, np.int64) if rank == size - 1 else good
    harness.expect(
        ValueError, f"rank {size - 1}: local array of dtype int64", lambda: plan.forward(ints)
    )
    nan = good.copy()
    if rank == size - 1:
        nan.flat[0] = np.nan
    harness.expect(NonFiniteInputError, "non-finite", lambda: plan.forward(nan))
    chunked = Plan((8, 6, 4), comm, chunks=2)
    harness.expect(NonFiniteInputError, "1 non-finite value(s)", lambda: chunked.forward(nan))
    harness.expect(
        ValueError, "chunks must be a positive int", lambda: Plan((8, 8), comm, chunks=0)
    )
    harness.expect(
        ValueError, "decomposition must be 'slab'", lambda: Plan((8, 8), comm, decomposition="x")
    )


CHECKS = [
    check_redistribute,
    check_transforms,
    check_chunked,
    check_real_transforms,
    check_functional_forms,
    check_errors,
]
harness.run(comm, CHECKS, f"ok: {size} ranks")
