"""``ozfft bench gemm``: emulated D/Z/S/C GEMM against cuBLAS in the same process.

For every (op, shape, moduli, mode): our TFLOP/s (2mnk, complex 8mnk), cuBLAS through
cupy, the ratio, the max relative error of both against exact rational products on a
row/column subsample, and a per-phase breakdown (scaling, residues, Phase A, Phase B)
from CUDA events. Writes ``gemm.json`` (a list of records) and ``gemm.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np

from .timing import median_ms

__all__ = ["main", "run"]

OPS = {
    "dgemm": (np.float64, "fp64", (14, 15, 16)),
    "zgemm": (np.complex128, "fp64", (14, 15, 16)),
    "sgemm": (np.float32, "fp32", (7, 8)),
    "cgemm": (np.complex64, "fp32", (7, 8)),
}


def _phi(cp, shape, dtype, rng):
    def real(seed):
        g = cp.random.default_rng(seed)
        return (g.random(shape) - 0.5) * cp.exp(0.5 * g.standard_normal(shape))

    x = real(int(rng.integers(1 << 30)))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * real(int(rng.integers(1 << 30)))
    return x.astype(dtype)


def _phases(cp, engine, a, b, num_moduli, mode, out_dtype) -> dict[str, float]:
    from ..ozaki.moduli import moduli_set
    from ..scheme.gemm import compute_shifts

    moduli = moduli_set(num_moduli)
    compute = cp.complex128 if np.dtype(out_dtype).kind == "c" else cp.float64
    a = a.astype(compute, copy=False)  # what ozfft.matmul does before the pipeline
    b = b.astype(compute, copy=False)
    ev = [cp.cuda.Event() for _ in range(3)]
    ev[0].record()
    a = engine.prepare_operand(a)
    bt = engine.prepare_operand(cp.swapaxes(b, -1, -2))
    sa, sb = compute_shifts(engine, a, bt, num_moduli, mode)
    ev[1].record()
    ra = engine.residues(a, sa, moduli)
    rb = engine.residues(bt, sb, moduli)
    ev[2].record()
    engine.profile = True
    engine.exact_product(ra, rb, sa, sb, moduli, out_dtype)
    engine.profile = False
    return {
        "scaling": cp.cuda.get_elapsed_time(ev[0], ev[1]),
        "residues": cp.cuda.get_elapsed_time(ev[1], ev[2]),
        **engine.phase_ms,
    }


def run(shapes, ops, modes, moduli_override, reps, samples, seed, on_record=None) -> list[dict]:
    """Benchmark every configuration; ``on_record(records)`` runs after each one."""
    import cupy as cp

    import ozfft
    from ozfft.engines.select import cuda_engine
    from ozfft.reference import exact_matmul, max_relative_error

    engine = cuda_engine()
    rng = np.random.default_rng(seed)
    gpu = cp.cuda.runtime.getDeviceProperties(0)["name"]
    gpu = gpu.decode() if isinstance(gpu, bytes) else str(gpu)
    records = []
    for op in ops:
        dtype, precision, default_moduli = OPS[op]
        for m, n, k in shapes:
            a = _phi(cp, (m, k), dtype, rng)
            b = _phi(cp, (k, n), dtype, rng)
            rows = np.sort(rng.choice(m, min(samples, m), replace=False))
            cols = np.sort(rng.choice(n, min(samples, n), replace=False))
            ha = cp.asnumpy(a[cp.asarray(rows)])
            hb = cp.asnumpy(b[:, cp.asarray(cols)])
            exact = exact_matmul(ha, hb)
            flops = (8 if np.dtype(dtype).kind == "c" else 2) * m * n * k
            base_ms = median_ms(cp, lambda a=a, b=b: a @ b, reps)
            native = cp.asnumpy((a @ b)[cp.asarray(rows)][:, cp.asarray(cols)])
            base_err = max_relative_error(native, exact)
            for num_moduli in moduli_override or default_moduli:
                for mode in modes:

                    def call(a=a, b=b, nm=num_moduli, md=mode, pr=precision):
                        return ozfft.matmul(a, b, precision=pr, moduli=nm, mode=md)

                    ms = median_ms(cp, call, reps)
                    got = cp.asnumpy(call()[cp.asarray(rows)][:, cp.asarray(cols)])
                    rec = {
                        "op": op,
                        "m": m,
                        "n": n,
                        "k": k,
                        "moduli": num_moduli,
                        "mode": mode,
                        "tflops": flops / ms / 1e9,
                        "baseline_tflops": flops / base_ms / 1e9,
                        "ratio": base_ms / ms,
                        "max_rel_err": max_relative_error(got, exact),
                        "baseline_max_rel_err": base_err,
                        "phases_ms": _phases(cp, engine, a, b, num_moduli, mode, np.dtype(dtype)),
                        "ms": ms,
                        "baseline_ms": base_ms,
                        "gpu": gpu,
                        "samples": f"{len(rows)}x{len(cols)}",
                    }
                    records.append(rec)
                    print(_row(rec), flush=True)
                    if on_record is not None:
                        on_record(records)
            del a, b
            cp.get_default_memory_pool().free_all_blocks()
    return records


HEADER = (
    "| op | m | n | k | moduli | mode | TFLOP/s | cuBLAS TFLOP/s | ratio | max rel err | "
    "cuBLAS max rel err | scaling ms | residues ms | phase A ms | phase B ms |"
)


def _row(r: dict) -> str:
    p = r["phases_ms"]
    return (
        f"| {r['op']} | {r['m']} | {r['n']} | {r['k']} | {r['moduli']} | {r['mode']} | "
        f"{r['tflops']:.1f} | {r['baseline_tflops']:.1f} | {r['ratio']:.2f} | "
        f"{r['max_rel_err']:.2e} | {r['baseline_max_rel_err']:.2e} | {p['scaling']:.2f} | "
        f"{p['residues']:.2f} | {p['phase_a']:.2f} | {p['phase_b']:.2f} |"
    )


def write(records: list[dict], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gemm.json").write_text(json.dumps(records, indent=1))
    gpu = records[0]["gpu"] if records else "?"
    lines = [
        f"# ozfft GEMM vs cuBLAS on {gpu}",
        "",
        "Same process, CUDA events, median; errors: max relative error on a sampled",
        "row/column block against exact rational products; phi = 0.5 test matrices.",
        f"Host: {platform.node()}.",
        "",
        HEADER,
        "|" + "---|" * (HEADER.count("|") - 1),
    ]
    lines += [_row(r) for r in records]
    (out / "gemm.md").write_text("\n".join(lines) + "\n")


def _shape(text: str) -> tuple[int, int, int]:
    parts = [int(v) for v in text.lower().split("x")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"shape must be N or MxNxK, got {text!r}")
    return tuple(parts)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shapes",
        type=_shape,
        nargs="+",
        default=[
            _shape(s)
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
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--samples", type=int, default=8, help="rows and columns checked")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for gemm.json and gemm.md (default bench/results/<gpu>)",
    )


def main(args: argparse.Namespace | None = None) -> int:
    if args is None:
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        add_arguments(parser)
        args = parser.parse_args()
    out = args.out

    def save(records: list[dict]) -> None:
        nonlocal out
        if out is None:
            out = Path("bench/results") / records[0]["gpu"].lower().replace(" ", "-")
        write(records, out)

    print(HEADER)
    records = run(
        args.shapes,
        args.ops,
        args.modes,
        args.moduli,
        args.reps,
        args.samples,
        args.seed,
        on_record=save,
    )
    if records:
        print(f"wrote {out / 'gemm.json'} and {out / 'gemm.md'}")
    return 0
