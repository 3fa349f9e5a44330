"""``ozfft bench floors`` and ``ozfft bench all`` (resumable campaign)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from .model import GPUS, fft_pass_counts, floors, project

__all__ = ["floors_result", "run_all"]

#: the target stage split of a fused length-1024 pass (two radix-32 stages), against
#: which the floors are also reported (the ``design`` keys of :func:`floors_result`)
TARGET_RADICES = [32, 32]


def floors_result(ceilings: dict | None, n: int = 1024, num_moduli: int = 16) -> dict:
    """Floors for ozfft as planned today and with the target 32x32 stages, the
    projection table, and (given measured ceilings) which floors the GPU meets."""
    today = floors(n, num_moduli)
    design = floors(n, num_moduli, TARGET_RADICES)
    projections = []
    for gpu in GPUS:
        p = project(gpu, n, num_moduli)
        p["design_fused_ms"] = project(gpu, n, num_moduli, TARGET_RADICES)["ozfft_fused_ms"]
        projections.append(p)
    result = {
        "n": n,
        "moduli": num_moduli,
        "today": today,
        "design": design,
        "counts_today": fft_pass_counts(n, num_moduli).__dict__,
        "counts_design": fft_pass_counts(n, num_moduli, TARGET_RADICES).__dict__,
        "projections": projections,
    }
    if ceilings:
        bw = ceilings["hbm_Bps"]
        rates = {
            "native_fp64": ceilings["fp64_fma_ops"] * 2,
            "tensor_int8": ceilings["int8_gemm_ops"],
            "int32": ceilings["int32_imad_ops"],
            "fp64_residues": ceilings["fp64_fma_ops"],
        }
        result["meets"] = {
            "gpu": ceilings["gpu"],
            "units": {
                ("native_fp64" if k == "native_fp64" else f"{k} (32x32 stages)"): rates[k]
                >= design[k] * bw
                for k in rates
            },
        }
    return result


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
