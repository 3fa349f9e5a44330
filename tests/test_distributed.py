"""ozfft.distributed under MPI: ``mpiexec -n 2`` and ``-n 4`` run tests/mpi/
distributed_check.py, which checks every rank's block against single-process ozfft bit
for bit (slab layouts, uneven splits, every norm, forward and backward) and the errors
(each raised on every rank, no hang)."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

SCRIPT = Path(__file__).parent / "mpi" / "distributed_check.py"


def mpi_env(**extra: str) -> dict[str, str]:
    """The environment of an ``mpiexec`` launch: unbuffered output, and Open MPI's
    consent to run as root and to place more ranks than cores (CI containers run as root
    on 2 cores; MPICH ignores these variables)."""
    return dict(
        os.environ,
        PYTHONUNBUFFERED="1",
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
        **extra,
    )


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec (pip install mpich)")
    return found


@pytest.mark.parametrize("ranks", [2, 4])
def test_distributed_fft_matches_single_process(ranks):
    env = mpi_env()
    proc = subprocess.run(
        [_mpiexec(), "-n", str(ranks), sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"ok: {ranks} ranks" in proc.stdout


def test_layout_blocks_cover_every_index():
    from ozfft.distributed.layout import block_range, box, local_shape

    for n in (1, 5, 8, 1100):
        for parts in range(1, min(n, 7) + 1):
            ranges = [block_range(n, parts, r) for r in range(parts)]
            assert ranges[0][0] == 0 and ranges[-1][1] == n
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
            sizes = [b - a for a, b in ranges]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    assert box((9, 7, 5), 0, 4, 0) == (slice(0, 3), slice(0, 7), slice(0, 5))
    assert local_shape((9, 7, 5), 1, 4, 3) == (9, 1, 5)


@pytest.mark.gpu
def test_distributed_gpu_fft_matches_single_gpu():
    """cupy arrays through NCCL, one GPU per rank, on every GPU of the machine (at least
    two): every rank's block bit for bit the single-GPU ozfft (tests/mpi/
    distributed_gpu_check.py)."""
    cp = pytest.importorskip("cupy")
    gpus = cp.cuda.runtime.getDeviceCount()
    if gpus < 2:
        pytest.skip("needs at least 2 GPUs (NCCL runs one rank per GPU)")
    script = Path(__file__).parent / "mpi" / "distributed_gpu_check.py"
    proc = subprocess.run(
        [_mpiexec(), "-n", str(gpus), sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=900,
        env=mpi_env(NCCL_NVLS_ENABLE="0"),
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"ok: {gpus} ranks on GPUs" in proc.stdout


def test_plan_argument_errors_name_the_problem():
    """Bad arguments raise on the calling rank before any exchange (one rank here)."""
    from mpi4py import MPI

    from ozfft.distributed import Plan

    comm = MPI.COMM_SELF
    cases = [
        (((8, "a"),), {}, TypeError, "global_shape must be a sequence of ints"),
        (((8,),), {}, ValueError, "at least 2 axes of length >= 1"),
        (((8, 0, 4),), {}, ValueError, "at least 2 axes of length >= 1"),
        (((8, 8),), {"axes": (0, 0)}, ValueError, "axes must be distinct axes of a 2-d array"),
        (((8, 8),), {"axes": (0, 5)}, ValueError, "axes must be distinct axes of a 2-d array"),
        (((8, 8),), {"axes": (1,)}, ValueError, "at least 2 transformed axes"),
        (((8, 8),), {"grid": (2,)}, ValueError, "a slab grid is the 1 ranks in one dimension"),
        (((8, 8),), {"norm": "bad"}, ValueError, "Invalid norm value 'bad'"),
    ]
    for args, kwargs, error, words in cases:
        with pytest.raises(error, match=re.escape(words)):
            Plan(*args, comm, **kwargs)
    plan = Plan((4, 6), comm)
    with pytest.raises(ValueError, match="must be numpy \\(MPI\\) or cupy \\(NCCL\\) arrays"):
        plan.forward([[1.0] * 6] * 4)


def test_one_rank_plan_runs_unchunked():
    """On one rank the exchange is a copy: chunks would only add passes over smaller
    blocks, so a plan asking for them runs one; the result is the single-process fftn."""
    import numpy as np
    from mpi4py import MPI

    import ozfft
    from ozfft.distributed import Plan

    x = np.random.default_rng(5).standard_normal((8, 6, 4)) + 1j
    plan = Plan(x.shape, MPI.COMM_SELF, chunks=4)
    assert plan._chunk_count(x) == 1
    np.testing.assert_array_equal(plan.forward(x), ozfft.fftn(x))


def test_exchange_limits_and_layout_errors():
    from ozfft.distributed.exchange import _byte_layout, raise_problems
    from ozfft.distributed.plan import _schedule

    with pytest.raises(ValueError, match=r"exceeds MPI's 2\*\*31 - 1 byte count; use more ranks"):
        _byte_layout([2**31])
    assert _byte_layout([2**31], None) == ([2**31], [0])  # NCCL counts have no such limit
    with pytest.raises(ValueError, match="rank 1: bad; rank 3: worse"):
        raise_problems([None, "bad", None, "worse"])
    # a 2-way split of axis 0 with nowhere to go: every other axis is shorter than 2
    with pytest.raises(ValueError, match=r"no axis can take the 2-way split off axis 0"):
        _schedule([1, 0], (0,), None, (4, 1), (0, 1), (2,))
