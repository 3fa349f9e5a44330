"""``ozfft bench gemm``: emulated D/Z/S/C GEMM against cuBLAS in the same process.

For every (op, shape, moduli, mode): our TFLOP/s (``2mnk`` real, ``8mnk`` complex
flops), cuBLAS through cupy, the ratio ``cuBLAS ms / ozfft ms``, the max relative
error of both against exact rational products on a row/column subsample
(:func:`ozfft.reference.exact_matmul`), and the time per phase (scaling, residues,
Phase A, Phase B) as the engine reports it to :mod:`ozfft.profiling` (``n/a`` for a
phase it does not report). Writes ``gemm.json`` (a list of records) and ``gemm.md``.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .gpu import gpu_campaign
from .phases import phase_cells, profile_call
from .results import (
    add_phase_a,
    add_seed_and_out,
    command_line_args,
    fmt,
    gpu_label,
    markdown_row,
    markdown_table,
    record_gpu,
    run_and_save,
    write_results,
)
from .timing import median_ms

__all__ = [
    "HEADER",
    "OPS",
    "Shape",
    "add_arguments",
    "main",
    "parse_shape",
    "row",
    "run",
    "table",
    "write",
]

#: op -> (dtype, precision, default moduli counts)
OPS: dict[str, tuple[type, str, tuple[int, ...]]] = {
    "dgemm": (np.float64, "fp64", (14, 15, 16)),
    "zgemm": (np.complex128, "fp64", (14, 15, 16)),
    "sgemm": (np.float32, "fp32", (7, 8)),
    "cgemm": (np.complex64, "fp32", (7, 8)),
}

Shape = tuple[int, int, int]


def _phi(cp: Any, shape: tuple[int, int], dtype: type, rng: np.random.Generator) -> Any:
    """The papers' phi = 0.5 test matrix ``(U(0,1) - 0.5) exp(0.5 N(0,1))`` on the GPU."""

    def real(seed: int) -> Any:
        g = cp.random.default_rng(seed)
        return (g.random(shape) - 0.5) * cp.exp(0.5 * g.standard_normal(shape))

    x = real(int(rng.integers(1 << 30)))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * real(int(rng.integers(1 << 30)))
    return x.astype(dtype)


def run(
    shapes: Sequence[Shape],
    ops: Sequence[str],
    modes: Sequence[str],
    moduli_override: Sequence[int] | None,
    reps: int,
    samples: int,
    seed: int,
    on_record: Callable[[list[dict]], None] | None = None,
    phases: Sequence[str | None] = (None,),
) -> list[dict]:
    """Benchmark every configuration, ozfft once per Phase A of ``phases`` (``"int8"``,
    ``"fp8"``, ``"auto"``; None: ``OZFFT_PHASE_A``); ``on_record(records)`` runs after each
    one."""
    import cupy as cp

    import ozfft
    from ozfft.engines.select import cuda_engine, resolve_phase_a
    from ozfft.reference import exact_matmul, max_relative_error

    rng = np.random.default_rng(seed)
    gpu = gpu_label()
    records: list[dict] = []
    for op in ops:
        dtype, precision, default_moduli = OPS[op]
        for m, n, k in shapes:
            a = _phi(cp, (m, k), dtype, rng)
            b = _phi(cp, (k, n), dtype, rng)
            rows = cp.asarray(np.sort(rng.choice(m, min(samples, m), replace=False)))
            cols = cp.asarray(np.sort(rng.choice(n, min(samples, n), replace=False)))
            exact = exact_matmul(cp.asnumpy(a[rows]), cp.asnumpy(b[:, cols]))
            flops = (8 if np.dtype(dtype).kind == "c" else 2) * m * n * k
            base_ms = median_ms(cp, lambda a=a, b=b: a @ b, reps)
            base_err = max_relative_error(cp.asnumpy((a @ b)[rows][:, cols]), exact)
            configs = [
                (nm, md, resolve_phase_a(ph, cuda_engine()))
                for nm in moduli_override or default_moduli
                for md in modes
                for ph in phases
            ]
            for num_moduli, mode, phase_a in configs:

                def call(a=a, b=b, nm=num_moduli, md=mode, pr=precision, ph=phase_a) -> Any:
                    return ozfft.matmul(a, b, precision=pr, moduli=nm, mode=md, phase_a=ph)

                ms = median_ms(cp, call, reps)
                got = cp.asnumpy(call()[rows][:, cols])
                plan = ozfft.linalg.matmul_plan(
                    a, b, precision=precision, moduli=num_moduli, mode=mode, phase_a=phase_a
                )
                rec = {
                    "op": op,
                    "m": m,
                    "n": n,
                    "k": k,
                    "moduli": num_moduli,
                    # the moduli Phase A ran on: a complex INT8 product's Gaussian system
                    "phase_a_moduli": plan.phase_a_system.count,
                    "gaussian": bool(plan.phase_a_system.gaussian),
                    "mode": mode,
                    "phase_a": phase_a,
                    "tflops": flops / ms / 1e9,
                    "baseline_tflops": flops / base_ms / 1e9,
                    "ratio": base_ms / ms,
                    "max_rel_err": max_relative_error(got, exact),
                    "baseline_max_rel_err": base_err,
                    "phases_ms": profile_call(call, reps),
                    "ms": ms,
                    "baseline_ms": base_ms,
                    "gpu": gpu,
                    "samples": f"{len(rows)}x{len(cols)}",
                }
                records.append(rec)
                print(row(rec), flush=True)
                if on_record is not None:
                    on_record(records)
            del a, b
            cp.get_default_memory_pool().free_all_blocks()
    return records


HEADER = (
    "| op | m | n | k | moduli | mode | TFLOP/s | cuBLAS TFLOP/s | ratio | max rel err | "
    "cuBLAS max rel err | scaling ms | residues ms | phase A ms | phase B ms |"
)


def row(r: dict) -> str:
    """One markdown row of a record (``n/a`` for anything it lacks)."""
    cells = [str(r.get(key, "n/a")) for key in ("op", "m", "n", "k", "moduli", "mode")]
    if r.get("phase_a", "int8") != "int8":
        cells[0] = f"{cells[0]} ({r['phase_a']})"
    if r.get("gaussian"):
        cells[4] = f"{cells[4]} ({r['phase_a_moduli']} Gaussian)"
    cells += [
        fmt(r.get("tflops"), ".1f"),
        fmt(r.get("baseline_tflops"), ".1f"),
        fmt(r.get("ratio"), ".2f"),
        fmt(r.get("max_rel_err"), ".2e"),
        fmt(r.get("baseline_max_rel_err"), ".2e"),
        *phase_cells(r.get("phases_ms")),
    ]
    return markdown_row(cells)


def table(records: Sequence[dict]) -> list[str]:
    """The markdown table of ``records`` (header, rule, one row each)."""
    return markdown_table(HEADER, map(row, records))


def write(records: list[dict], out: Path) -> None:
    """``gemm.json`` and ``gemm.md`` under ``out``."""
    lines = [
        f"# ozfft GEMM vs cuBLAS on {record_gpu(records)}",
        "",
        "Same process, CUDA events, median; errors: max relative error on a sampled",
        "row/column block against exact rational products; phi = 0.5 test matrices.",
        "Phases: medians as the engine reports them to ozfft.profiling (n/a: not reported).",
        f"Host: {platform.node()}.",
        "",
        *table(records),
    ]
    write_results(records, out, "gemm", lines)


def parse_shape(text: str) -> Shape:
    """``"N"`` -> ``(N, N, N)``; ``"MxNxK"`` -> ``(M, N, K)``."""
    parts = [int(v) for v in text.lower().split("x")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"shape must be N or MxNxK, got {text!r}")
    return (parts[0], parts[1], parts[2])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ozfft bench gemm``."""
    parser.add_argument(
        "--shapes",
        type=parse_shape,
        nargs="+",
        default=[
            parse_shape(s)
            for s in ("1024", "2048", "4096", "8192", "16384", "16384x16384x256", "256x256x16384")
        ],
    )
    parser.add_argument("--ops", nargs="+", choices=tuple(OPS), default=list(OPS))
    parser.add_argument(
        "--modes", nargs="+", choices=("fast", "accurate"), default=["fast", "accurate"]
    )
    parser.add_argument(
        "--moduli",
        type=int,
        nargs="+",
        default=None,
        help="moduli counts (default: around each op's default)",
    )
    add_phase_a(parser)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--samples", type=int, default=8, help="rows and columns checked")
    add_seed_and_out(parser, "gemm")


def main(args: argparse.Namespace | None = None) -> int:
    """Run the campaign (``ozfft bench gemm``; ``python -m ozfft.bench.gemm`` parses the
    command line and checks for a GPU first, as the CLI does)."""
    if args is None:
        return gpu_campaign(command_line_args(__doc__, add_arguments), "gemm", main)
    return run_and_save(
        args.out,
        "gemm",
        HEADER,
        write,
        lambda save: run(
            args.shapes,
            args.ops,
            args.modes,
            args.moduli,
            args.reps,
            args.samples,
            args.seed,
            on_record=save,
            phases=args.phase_a,
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
