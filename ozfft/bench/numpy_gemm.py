"""``ozfft bench numpy-gemm``: the NumPy engine against numpy's float64 matmul.

For ``m = n = k = size`` phi = 0.5 matrices and each scaling mode, the best-of-repeats
time of ``ozfft.matmul`` against ``N`` numpy float64 matmuls of the same size, ``N``
the mode's default FP64 moduli count: Phase A is ``N`` exact integer products, so
``N`` native GEMMs are its floor and the ratio is the overhead of everything else
(the target is at most 2, docs/perf-notes.md "NumPy engine, 1024³ DGEMM"). Also the
time per phase as the engine reports it to :mod:`ozfft.profiling` (``n/a`` for phases
it does not report). Runs on the CPU; writes ``numpy_gemm.json`` and
``numpy_gemm.md`` (default folder ``bench/results/cpu-<cores>core``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .phases import phase_cells, profile_call
from .results import (
    RESULTS_ROOT,
    add_seed_and_out,
    command_line_args,
    fmt,
    markdown_row,
    markdown_table,
    run_and_save,
    write_results,
)

__all__ = ["HEADER", "add_arguments", "best_of", "default_out", "main", "row", "run", "write"]


def best_of(fn: Callable[[], Any], repeats: int) -> float:
    """Fastest of ``repeats`` wall-clock runs of ``fn()``, in seconds."""
    best = float("inf")
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def default_out() -> Path:
    """``bench/results/cpu-<cores>core`` (the committed CPU results folder's pattern)."""
    return RESULTS_ROOT / f"cpu-{os.cpu_count() or 1}core"


def run(
    sizes: Sequence[int],
    repeats: int,
    modes: Sequence[str] = ("fast", "accurate"),
    seed: int = 0,
    on_record: Callable[[list[dict]], None] | None = None,
) -> list[dict]:
    """Time every size and mode on the NumPy engine; return the records.
    ``on_record(records)`` runs after each one."""
    import ozfft
    from ozfft.reference import phi_matrix

    rng = np.random.default_rng(seed)
    records: list[dict] = []
    for size in sizes:
        for mode in modes:
            a = phi_matrix(rng, (size, size), 0.5)
            b = phi_matrix(rng, (size, size), 0.5)
            count = ozfft.GemmOptions(mode=mode).num_moduli
            native = best_of(lambda a=a, b=b, c=count: [a @ b for _ in range(c)], repeats)

            def call(a: np.ndarray = a, b: np.ndarray = b, m: str = mode) -> Any:
                return ozfft.matmul(a, b, mode=m)

            ours = best_of(call, repeats)
            rec = {
                "op": "dgemm",
                "m": size,
                "n": size,
                "k": size,
                "moduli": count,
                "mode": mode,
                "ozfft_ms": ours * 1e3,
                "n_native_ms": native * 1e3,
                "ratio_to_n_native": ours / native,
                "phases_ms": profile_call(call, repeats),
                "cpu": platform.processor() or platform.machine(),
                "numpy": np.__version__,
            }
            records.append(rec)
            print(row(rec), flush=True)
            if on_record is not None:
                on_record(records)
    return records


HEADER = (
    "| size | mode | N | ozfft ms | N x dgemm ms | ratio | scaling | residues | phase A | phase B |"
)


def row(r: dict) -> str:
    """One markdown row of a record (``n/a`` for phases the engine did not report)."""
    cells = [
        str(r["m"]),
        r["mode"],
        str(r["moduli"]),
        fmt(r.get("ozfft_ms"), ".1f"),
        fmt(r.get("n_native_ms"), ".1f"),
        fmt(r.get("ratio_to_n_native"), ".2f"),
        *phase_cells(r.get("phases_ms"), ".1f"),
    ]
    return markdown_row(cells)


def write(records: list[dict], out: Path) -> None:
    """``numpy_gemm.json`` and ``numpy_gemm.md`` under ``out``."""
    write_results(records, out, "numpy_gemm", markdown_table(HEADER, map(row, records)))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ozfft bench numpy-gemm``."""
    parser.add_argument(
        "--sizes", "--size", dest="sizes", type=int, nargs="+", default=[1024], help="m = n = k"
    )
    parser.add_argument(
        "--modes", nargs="+", choices=("fast", "accurate"), default=["fast", "accurate"]
    )
    parser.add_argument("--repeats", type=int, default=5, help="best of this many runs")
    add_seed_and_out(parser, "numpy_gemm", "bench/results/cpu-<cores>core")


def main(args: argparse.Namespace | None = None) -> int:
    """Run the campaign (``python -m ozfft.bench.numpy_gemm`` or ``ozfft bench numpy-gemm``)."""
    if args is None:
        args = command_line_args(__doc__, add_arguments)
    if min(args.sizes) < 1 or args.repeats < 1:
        print("ozfft bench numpy-gemm: sizes and --repeats must be >= 1", file=sys.stderr)
        return 2
    return run_and_save(
        args.out or default_out(),
        "numpy_gemm",
        HEADER,
        write,
        lambda save: run(args.sizes, args.repeats, args.modes, args.seed, on_record=save),
    )


if __name__ == "__main__":  # the same as `ozfft bench numpy-gemm` (runs on the CPU)
    sys.exit(main())
