"""``ozfft bench floors`` and ``ozfft bench all`` (resumable campaign)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from .model import (
    FUSED_INT_ENTRY_EXIT,
    FUSED_INT_PER_STAGE,
    FUSED_INT_TWIDDLE,
    GPUS,
    H200_MEASURED,
    H200_MEASURED_SOURCE,
    MMA_OPS,
    MMA_SYNC_FRACTION,
    MMA_SYNC_TOPS_H200,
    NCU_512_INTEGER_FRACTION,
    NCU_512_PASS_MS,
    NCU_512_THREAD_INSTR_PER_ELEMENT,
    fft_pass_counts,
    floors,
    fused_counts,
    fused_floors,
    project,
    project_fused,
)

__all__ = ["floors_lines", "floors_result", "run_all"]

#: the hypothetical stage split of a fused length-1024 Ozaki-II pass (two radix-32
#: stages) that the unfused model also reports (the ``design`` keys)
TARGET_RADICES = [32, 32]


def _fused_counts_dict(n: int) -> dict:
    c = fused_counts(n)
    return {**asdict(c), "stages": c.stages}


def floors_result(ceilings: dict | None, n: int = 1024, num_moduli: int = 16) -> dict:
    """The fused fixed-point model (``fused``: counts, floors; ``projections``: per GPU,
    n³ FP64), the unfused Ozaki-II stage model beside it (``unfused``), the measured
    H200 points against the model (``measured``) and, given measured ceilings, which
    floors the GPU meets. ``today`` (= the fused floors), ``design`` (the Ozaki-II
    32x32-stage floors) and the projections' ``design_fused_ms`` / ``ozfft_unfused_ms``
    keep the keys that earlier readers of this dict use."""
    fused = fused_floors(n)
    unfused = floors(n, num_moduli)
    design = floors(n, num_moduli, TARGET_RADICES)
    projections = []
    for gpu in GPUS:
        p = project_fused(gpu, n)
        old = project(gpu, n, num_moduli)
        p["unfused_ms"] = old["ozfft_unfused_ms"]
        p["unfused_complete"] = old["complete"]
        # Ozaki-II stage model, by their earlier names
        p["ozfft_unfused_ms"] = old["ozfft_unfused_ms"]
        p["design_fused_ms"] = project(gpu, n, num_moduli, TARGET_RADICES)["ozfft_fused_ms"]
        projections.append(p)
    h200 = next(g for g in GPUS if g.name.startswith("H200"))
    measured = []
    for size, (ms, cufft_ms) in sorted(H200_MEASURED.items()):
        p = project_fused(h200, size)
        measured.append(
            {
                "n": size,
                "radices": p["radices"],
                "model_ms": p["fused_ms"],
                "binding": p["binding"],
                "parts_ms": p["parts_ms"],
                "ms": ms,
                "cufft_ms": cufft_ms,
                "source": H200_MEASURED_SOURCE,
            }
        )
    result = {
        "n": n,
        "moduli": num_moduli,
        "precision": "fp64",
        "fused": {"floors": fused, "counts": _fused_counts_dict(n)},
        "unfused": {
            "label": "unfused (Ozaki-II stages)",
            "floors": unfused,
            "counts": fft_pass_counts(n, num_moduli).__dict__,
        },
        "constants": {
            "MMA_OPS": MMA_OPS,
            "FUSED_INT_PER_STAGE": FUSED_INT_PER_STAGE,
            "FUSED_INT_ENTRY_EXIT": FUSED_INT_ENTRY_EXIT,
            "FUSED_INT_TWIDDLE": FUSED_INT_TWIDDLE,
            "NCU_512_THREAD_INSTR_PER_ELEMENT": NCU_512_THREAD_INSTR_PER_ELEMENT,
            "NCU_512_INTEGER_FRACTION": NCU_512_INTEGER_FRACTION,
            "NCU_512_PASS_MS": NCU_512_PASS_MS,
            "MMA_SYNC_TOPS_H200": MMA_SYNC_TOPS_H200,
            "MMA_SYNC_FRACTION": MMA_SYNC_FRACTION,
        },
        "projections": projections,
        "measured": measured,
        # earlier keys
        "today": {k: v for k, v in fused.items() if k in design},
        "design": design,
        "counts_today": _fused_counts_dict(n),
        "counts_design": fft_pass_counts(n, num_moduli, TARGET_RADICES).__dict__,
    }
    if ceilings:
        bw = ceilings["hbm_Bps"]
        checks = {
            "native_fp64": (ceilings["fp64_fma_ops"] * 2, fused["native_fp64"]),
            "tensor_int8 (fused, at the cuBLAS INT8 rate)": (
                ceilings["int8_gemm_ops"],
                fused["tensor_int8"],
            ),
            "int32 (fused)": (ceilings["int32_imad_ops"], fused["int32"]),
        }
        result["meets"] = {
            "gpu": ceilings["gpu"],
            "units": {k: rate >= floor * bw for k, (rate, floor) in checks.items()},
        }
    return result


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def floors_lines(result: dict) -> list[str]:
    """The console summary of :func:`floors_result`: floors, projections per GPU."""
    n = result["n"]
    c = result["fused"]["counts"]
    lines = [
        f"fused fixed-point pass, n = {n} (radices {'·'.join(map(str, c['stages']))}, "
        f"{len(c['passes'])} pass(es) per axis), floors as multiples of B_HBM:",
    ]
    for unit, value in result["fused"]["floors"].items():
        old = result["unfused"]["floors"].get(unit)
        tail = "" if old is None else f"   unfused (Ozaki-II stages) {old:9.2f}"
        lines.append(f"  {unit:16} fused {value:9.2f}{tail}")
    lines.append(
        f"projected {n}³ FP64 3-D FFT (ms; INT8 at {MMA_SYNC_FRACTION:.0%} of peak, "
        "* a unit's rate is missing):"
    )
    for p in result["projections"]:
        lines.append(
            f"  {p['gpu']:15} roof {p['roof_ms']:7.1f}  native {_ms(p['native_fp64_ms']):>7}  "
            f"ozfft fused {p['fused_ms']:8.1f}{'' if p['complete'] else '*'} ({p['binding']})"
            f"  unfused (Ozaki-II stages) {p['unfused_ms']:8.0f}"
        )
    return lines


def _progress(steps: list[str]) -> Iterable[str]:
    try:
        from tqdm import tqdm

        return tqdm(steps, desc="ozfft campaign")
    except ImportError:
        return steps


def run_all(args: argparse.Namespace) -> int:
    """Ceilings, floors, FFT and GEMM benchmarks, resumable; writes the report."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    state_file = out / "campaign.json"
    results = {} if args.restart or not state_file.exists() else json.loads(state_file.read_text())
    from .report import write_report

    steps = ["ceilings", "floors", "fft", "gemm"]
    for step in _progress(steps):
        if step == "floors" and "fused" not in (results.get(step) or {"fused": 1}):
            results[step] = None  # from before the fused model: recomputed (no GPU needed)
        if step in results and results[step] is not None:
            print(f"[campaign] {step}: done earlier, kept (use --restart to redo)")
            continue
        if step == "ceilings":
            from .ceilings import measure

            results[step] = measure()
        elif step == "floors":
            results[step] = floors_result(results.get("ceilings"))
        elif step == "fft":
            from .fft import run as run_fft

            results[step] = run_fft(args.fft_sizes, 3, 128, 0)
        else:
            from .gemm import parse_shape
            from .gemm import run as run_gemm

            shapes = [parse_shape(s) for s in args.gemm_shapes]
            results[step] = run_gemm(shapes, ["dgemm", "zgemm"], ["fast"], [16], 3, 8, 0)
        write_report(results, out)  # after every step: a cut-off run resumes here
    report = write_report(results, out)
    print(f"report: {report}")
    return 0
