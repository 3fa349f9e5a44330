"""The campaign report: one folder with ``campaign.json``, ``report.md`` and PNG plots.

Plots: achieved FFT bandwidth against the measured HBM roof by size; the per-phase time
of the emulated GEMMs; the projected 1024³ FFT time per GPU (memory roof, native FP64,
ozfft). Works on any subset of results (missing sections are skipped).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["write_report"]


def _fmt(v, spec=".3g") -> str:
    return "n/a" if v is None else format(v, spec)


def _plots(results: dict, out: Path) -> list[str]:
    try:
        import matplotlib
    except ImportError:
        return []

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    fft = results.get("fft") or []
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
        rows = [r for r in gemm if r["mode"] == "fast"][-8:]
        fig, ax = plt.subplots(figsize=(7, 4))
        bottom = [0.0] * len(rows)
        labels = [f"{r['op']} {r['m']}/{r['k']} N{r['moduli']}" for r in rows]
        for phase in ("scaling", "residues", "phase_a", "phase_b"):
            vals = [r["phases_ms"].get(phase, 0.0) for r in rows]
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
            f"| HBM copy (read + write) | {ceil['hbm_Bps'] / 1e12:.2f} TB/s |",
            f"| INT8 GEMM (cuBLAS gemmEx, 8192³) | {ceil['int8_gemm_ops'] / 1e12:.0f} TOP/s |",
            f"| FP8 GEMM (torch _scaled_mm) | "
            f"{_fmt(ceil['fp8_gemm_flops'] and ceil['fp8_gemm_flops'] / 1e12, '.0f')} TFLOP/s |",
            f"| INT32 IMAD | {ceil['int32_imad_ops'] / 1e12:.1f} T/s |",
            f"| FP64 FMA | {ceil['fp64_fma_ops'] / 1e12:.1f} T/s |",
            f"| ozfft residues kernel | {ceil['ozfft_residues_Bps'] / 1e12:.2f} TB/s |",
            f"| ozfft Phase B kernel | {ceil['ozfft_phase_b_Bps'] / 1e12:.2f} TB/s, "
            f"{ceil['ozfft_phase_b_outputs_per_s'] / 1e9:.1f} G outputs/s |",
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
    for key, title in (("fft", "3-D FFT vs cuFFT"), ("gemm", "GEMM vs cuBLAS")):
        if results.get(key):
            lines += [f"## {title}", "", f"{len(results[key])} records in campaign.json.", ""]
    pngs = _plots(results, out)
    for png in pngs:
        lines += [f"![{png}]({png})", ""]
    if not pngs:
        lines += ["(No plots: they need matplotlib — `pip install matplotlib`.)", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    return report
