"""Shared by the scripts mpiexec runs: run the checks, abort every rank on a failure (so
that no rank waits in an exchange), and print the line the pytest wrapper looks for."""

from __future__ import annotations

import sys
import traceback


def run(comm, checks, done: str) -> None:
    try:
        for check in checks:
            check()
    except Exception:
        traceback.print_exc()
        sys.stdout.flush()
        comm.Abort(1)
    comm.Barrier()
    if comm.Get_rank() == 0:
        print(done)
