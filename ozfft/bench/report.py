"""The campaign report: one folder with ``campaign.json``, ``report.md`` and PNG plots.

Sections: the measured ceilings, the floors and projections of the model, and the FFT
and GEMM result tables themselves (times, ratios, errors and phases per size, as
:mod:`ozfft.bench.fft` and :mod:`ozfft.bench.gemm` print them). Plots: achieved 3-D FFT
bandwidth against the measured HBM roof by size; the per-phase time of the emulated
GEMMs; the projected 1024³ FFT time per GPU (memory roof, native FP64, ozfft). Works on
any subset of results (missing sections and numbers are skipped or shown as n/a).
"""

from __future__ import annotations

import json
from pathlib import Path

from . import fft as fft_bench
from . import gemm as gemm_bench
from .phases import PHASES
from .results import fmt as _fmt

__all__ = ["result_tables", "write_report"]


def _scaled(record: dict, key: str, unit: float, spec: str) -> str:
    """``record[key] / unit`` formatted, or ``n/a`` when missing or None."""
    value = record.get(key)
    return _fmt(None if value is None else value / unit, spec)


def _is_cube_fftn(r: dict) -> bool:
    """A 3-D c2c cube record (records from before ``case`` existed are all cubes)."""
    return r.get("case", "fftn") == "fftn" and "ms" in r and "cufft_ms" in r


def result_tables(results: dict) -> list[str]:
    """Markdown sections with the FFT and GEMM tables of ``results`` (may be empty)."""
    lines: list[str] = []
    fft = results.get("fft") or []
    if fft:
        lines += [
            "## FFTs vs cuFFT",
            "",
            "ozfft/cuFFT: ozfft's time over cuFFT's (lower is better). Errors: relative L2 against a",
            "long-double transform; correctly rounded: fraction of outputs equal to it",
            "rounded to float64 (n/a: not computed for that size).",
            "",
            *fft_bench.table(fft),
            "",
        ]
    gemm = results.get("gemm") or []
    if gemm:
        lines += [
            "## GEMM vs cuBLAS",
            "",
            "Ratio: cuBLAS ms / ozfft ms. Errors: max relative error on a sampled block",
            "against exact rational products. Phases in ms as the engine reports them",
            "(n/a: not reported).",
            "",
            *gemm_bench.table(gemm),
            "",
        ]
    return lines


def _plots(results: dict, out: Path) -> list[str]:
    try:
        import matplotlib
    except ImportError:
        return []

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    fft = [r for r in results.get("fft") or [] if _is_cube_fftn(r)]
    if fft:
        fig, ax = plt.subplots(figsize=(6, 4))
        sizes = [r["n"] for r in fft]
        bw = [3 * 32 * r["n"] ** 3 / (r["ms"] * 1e-3) / 1e12 for r in fft]
        cu = [3 * 32 * r["n"] ** 3 / (r["cufft_ms"] * 1e-3) / 1e12 for r in fft]
        roof = [r["hbm_TBps"] for r in fft]
        ax.plot(sizes, roof, "k--", label="HBM copy roof (measured)")
        ax.plot(sizes, cu, "o-", label="cuFFT")
        ax.plot(sizes, bw, "s-", label="ozfft (unfused)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n (n³ complex128)")
        ax.set_ylabel("3-pass effective bandwidth, TB/s")
        ax.legend()
        ax.set_title("3-D FFT: achieved bandwidth vs roof")
        fig.tight_layout()
        fig.savefig(out / "fft_bandwidth.png", dpi=110)
        plt.close(fig)
        made.append("fft_bandwidth.png")
    gemm = results.get("gemm") or []
    if gemm:
        rows = [r for r in gemm if r.get("mode") == "fast"][-8:]
        fig, ax = plt.subplots(figsize=(7, 4))
        bottom = [0.0] * len(rows)
        labels = [f"{r['op']} {r['m']}/{r['k']} N{r['moduli']}" for r in rows]
        for phase in PHASES:
            vals = [(r.get("phases_ms") or {}).get(phase) or 0.0 for r in rows]
            ax.bar(labels, vals, bottom=bottom, label=phase)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.set_ylabel("ms")
        ax.set_title("Emulated GEMM: time per phase")
        ax.tick_params(axis="x", rotation=45)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "gemm_phases.png", dpi=110)
        plt.close(fig)
        made.append("gemm_phases.png")
    proj = (results.get("floors") or {}).get("projections") or []
    if proj:
        fig, ax = plt.subplots(figsize=(8, 4))
        names = [p["gpu"] for p in proj]
        xs = range(len(names))
        for off, key, label in (
            (-0.3, "roof_ms", "memory roof"),
            (-0.1, "native_fp64_ms", "native FP64"),
            (0.1, "design_fused_ms", "ozfft fused, 32x32 stages"),
            (0.3, "ozfft_unfused_ms", "ozfft today (unfused)"),
        ):
            vals = [p.get(key) or 0.0 for p in proj]
            ax.bar([x + off for x in xs], vals, width=0.2, label=label)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("projected 1024³ FP64 FFT, ms")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "projection_1024.png", dpi=110)
        plt.close(fig)
        made.append("projection_1024.png")
    return made


def write_report(results: dict, out: Path) -> Path:
    """Write ``campaign.json``, ``report.md`` and the plots; return the report path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "campaign.json").write_text(json.dumps(results, indent=1, default=str))
    lines = ["# ozfft benchmark campaign", ""]
    ceil = results.get("ceilings")
    if ceil:
        lines += [
            f"## Ceilings on {ceil['gpu']}",
            "",
            "| what | rate |",
            "|---|---|",
            f"| HBM copy (read + write) | {_scaled(ceil, 'hbm_Bps', 1e12, '.2f')} TB/s |",
            f"| INT8 GEMM (cuBLAS gemmEx, 8192³) | {_scaled(ceil, 'int8_gemm_ops', 1e12, '.0f')} "
            "TOP/s |",
            f"| FP8 GEMM (torch _scaled_mm) | {_scaled(ceil, 'fp8_gemm_flops', 1e12, '.0f')} "
            "TFLOP/s |",
            f"| INT32 IMAD | {_scaled(ceil, 'int32_imad_ops', 1e12, '.1f')} T/s |",
            f"| FP64 FMA | {_scaled(ceil, 'fp64_fma_ops', 1e12, '.1f')} T/s |",
            f"| ozfft residues kernel | {_scaled(ceil, 'ozfft_residues_Bps', 1e12, '.2f')} TB/s |",
            f"| ozfft Phase B kernel | {_scaled(ceil, 'ozfft_phase_b_Bps', 1e12, '.2f')} TB/s, "
            f"{_scaled(ceil, 'ozfft_phase_b_outputs_per_s', 1e9, '.1f')} G outputs/s |",
            "",
        ]
        sass = ceil.get("sass") or {}
        if sass.get("phase_b_per_complex_output"):
            lines += [
                f"SASS cross-check: `oz_reconstruct_complex` has "
                f"{sass['phase_b_per_complex_output']['total']} instructions per complex "
                f"output; the model counts {sass['phase_b_model']}.",
                "",
            ]
        ncu = ceil.get("ncu")
        if ncu:
            res = ncu.get("residues_per_complex_element")
            lines += [
                f"ncu cross-check (executed): Phase B "
                f"{ncu['phase_b_per_complex_output']:.0f} thread instructions per complex "
                f"output (model {ncu['phase_b_model']}); residues "
                f"{_fmt(res, '.0f')} per complex element.",
                "",
            ]
    floors = results.get("floors")
    if floors:
        lines += [
            "## Floors (multiples of B_HBM for memory-roof parity)",
            "",
            "| unit | as planned today | 32x32 stages (design) |",
            "|---|---|---|",
        ]
        for unit in floors["today"]:
            lines.append(f"| {unit} | {floors['today'][unit]:.2f} | {floors['design'][unit]:.2f} |")
        meets = floors.get("meets")
        if meets:
            lines += [
                "",
                f"Measured GPU ({meets['gpu']}): "
                + "; ".join(
                    f"{k}: {'meets' if v else 'misses'}" for k, v in meets["units"].items()
                ),
                "",
            ]
        lines += [
            "",
            "## Projected 1024³ FP64 3-D FFT",
            "",
            "| GPU | roof ms | native FP64 ms | ozfft fused (32x32) ms | ozfft today ms | source |",
            "|---|---|---|---|---|---|",
        ]
        for p in floors["projections"]:
            lines.append(
                f"| {p['gpu']} | {p['roof_ms']:.1f} | {_fmt(p['native_fp64_ms'], '.1f')} | "
                f"{_fmt(p['design_fused_ms'], '.1f')}{'' if p['complete'] else '*'} | "
                f"{p['ozfft_unfused_ms']:.0f} | {p['spec']['source']} |"
            )
        lines += ["", "\\* a unit's rate is not in the cited source; that unit is left out.", ""]
    lines += result_tables(results)
    pngs = _plots(results, out)
    for png in pngs:
        lines += [f"![{png}]({png})", ""]
    if not pngs:
        lines += ["(No plots: they need matplotlib — `pip install matplotlib`.)", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    return report
