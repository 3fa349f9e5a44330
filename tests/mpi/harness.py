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


def expect(error, words: str, call) -> None:
    """``call`` raises ``error`` with ``words`` in its message (on this rank)."""
    try:
        call()
    except error as exc:
        assert words in str(exc), f"{words!r} not in {exc}"
        return
    raise AssertionError(f"no {error.__name__} raised ({words})")
