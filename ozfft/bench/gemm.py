"""``ozfft bench gemm``: emulated D/Z/S/C GEMM against cuBLAS in the same process.

For every (op, shape, moduli, mode): our TFLOP/s (``2mnk`` real, ``8mnk`` complex
flops, times the stack's items), cuBLAS through cupy (``a @ b``: batched for a stack),
the ratio ``cuBLAS ms / ozfft ms``, the max relative error of both against exact
rational products on a row/column subsample (of a stack's first item;
:func:`ozfft.reference.exact_matmul`), and the time per phase (scaling, residues,
Phase A, Phase B, and the accuracy plan's own work) as the engine reports it to
:mod:`ozfft.profiling` (``n/a`` for a phase it does not report). ``--moduli guaranteed``
runs the default call (``moduli=None``: the accuracy guarantee picks the count; the
table names the plan). Writes ``gemm.json`` (a list of records) and ``gemm.md``.
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
    "GUARANTEED",
    "HEADER",
    "OPS",
    "Shape",
    "add_arguments",
    "main",
    "parse_moduli",
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

#: (m, n, k), or (items, m, n, k) for a stack of products
Shape = tuple[int, ...]
#: the ``--moduli`` word for the default, accuracy-guaranteed call (``moduli=None``)
GUARANTEED = "guaranteed"


def _phi(cp: Any, shape: tuple[int, ...], dtype: type, rng: np.random.Generator) -> Any:
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
    moduli_override: Sequence[int | None] | None,
    reps: int,
    samples: int,
    seed: int,
    on_record: Callable[[list[dict]], None] | None = None,
    phases: Sequence[str | None] = (None,),
) -> list[dict]:
    """Benchmark every configuration, ozfft once per Phase A of ``phases`` (``"int8"``,
    ``"fp8"``, ``"auto"``; None: ``OZFFT_PHASE_A``); a moduli count of None is the
    accuracy-guaranteed call; ``on_record(records)`` runs after each one."""
    import cupy as cp

    import ozfft
    from ozfft.engines.select import cuda_engine, resolve_phase_a
    from ozfft.reference import exact_matmul, max_relative_error

    rng = np.random.default_rng(seed)
    gpu = gpu_label()
    records: list[dict] = []
    for op in ops:
        dtype, precision, default_moduli = OPS[op]
        for shape in shapes:
            items, m, n, k = (1, *shape) if len(shape) == 3 else shape
            stack = (items,) if items > 1 else ()
            a = _phi(cp, (*stack, m, k), dtype, rng)
            b = _phi(cp, (*stack, k, n), dtype, rng)
            first_a, first_b = (a[0], b[0]) if stack else (a, b)
            rows = cp.asarray(np.sort(rng.choice(m, min(samples, m), replace=False)))
            cols = cp.asarray(np.sort(rng.choice(n, min(samples, n), replace=False)))
            exact = exact_matmul(cp.asnumpy(first_a[rows]), cp.asnumpy(first_b[:, cols]))
            flops = (8 if np.dtype(dtype).kind == "c" else 2) * items * m * n * k

            def first(c: Any, stack=stack, rows=rows, cols=cols) -> Any:
                """The sampled block of a result (of its first item for a stack)."""
                return cp.asnumpy((c[0] if stack else c)[rows][:, cols])

            base_ms = median_ms(cp, lambda a=a, b=b: a @ b, reps)
            base_err = max_relative_error(first(a @ b), exact)
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
                got = first(call())
                plan = ozfft.linalg.matmul_plan(
                    a, b, precision=precision, moduli=num_moduli, mode=mode, phase_a=phase_a
                )
                rec = {
                    "op": op,
                    "items": items,
                    "m": m,
                    "n": n,
                    "k": k,
                    "moduli": plan.moduli,
                    "guaranteed": num_moduli is None,
                    "plan": plan.describe(),
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
    "cuBLAS max rel err | scaling ms | residues ms | phase A ms | phase B ms | fused ms | "
    "plan ms |"
)


def row(r: dict) -> str:
    """One markdown row of a record (``n/a`` for anything it lacks)."""
    cells = [str(r.get(key, "n/a")) for key in ("op", "m", "n", "k", "moduli", "mode")]
    if r.get("phase_a", "int8") != "int8":
        cells[0] = f"{cells[0]} ({r['phase_a']})"
    if r.get("items", 1) > 1:
        cells[1] = f"{r['items']} x {cells[1]}"
    if r.get("gaussian"):
        cells[4] = f"{cells[4]} ({r['phase_a_moduli']} Gaussian)"
    if r.get("guaranteed"):
        cells[4] = f"{r.get('plan', cells[4])}, guaranteed"
    cells += [
        fmt(r.get("tflops"), ".1f"),
        fmt(r.get("baseline_tflops"), ".1f"),
        fmt(r.get("ratio"), ".2f"),
        fmt(r.get("max_rel_err"), ".2e"),
        fmt(r.get("baseline_max_rel_err"), ".2e"),
        *phase_cells(r.get("phases_ms")),
        # residues, Phase A and Phase B in one kernel (small products on the GPU)
        fmt((r.get("phases_ms") or {}).get("fused"), ".2f"),
        fmt((r.get("phases_ms") or {}).get("guarantee"), ".2f"),
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
    """``"N"`` -> ``(N, N, N)``; ``"MxNxK"`` -> ``(M, N, K)``; ``"BxMxNxK"`` -> ``(B, M, N,
    K)``, a stack of ``B`` products."""
    try:
        parts = [int(v) for v in text.lower().split("x")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts *= 3
    if len(parts) not in (3, 4) or min(parts) < 1:
        raise argparse.ArgumentTypeError(
            f"shape must be N, MxNxK or BxMxNxK (a stack of B products), got {text!r}"
        )
    return tuple(parts)


def parse_moduli(text: str) -> int | None:
    """A moduli count, or ``"guaranteed"`` (None: the default call, its plan's count)."""
    if text.strip().lower() == GUARANTEED:
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"moduli are a count or {GUARANTEED!r}, not {text!r}"
        ) from None


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
        type=parse_moduli,
        nargs="+",
        default=None,
        help=f"moduli counts, or {GUARANTEED!r} for the default call (default: around each "
        "op's default)",
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
