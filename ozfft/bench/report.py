"""The campaign report: one folder with ``campaign.json``, ``report.md`` and PNG plots.

Sections: the measured ceilings, the model of the fused fixed-point FFT pass (formulas,
floors beside the unfused Ozaki-II stage model's, rates each GPU needs, projections,
measured H200 points against the model: :mod:`ozfft.bench.model`), and the FFT and GEMM
result tables themselves (times, ratios, errors and phases per size, as
:mod:`ozfft.bench.fft` and :mod:`ozfft.bench.gemm` print them). Plots: achieved 3-D FFT
bandwidth against the measured HBM roof by size; the per-phase time of the emulated
GEMMs; the projected 1024³ FFT time per GPU (memory roof, native FP64, ozfft fused,
unfused Ozaki-II stages). Works on any subset of results (missing sections and numbers
are skipped or shown as n/a).
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
            "ozfft/cuFFT: ozfft's time over cuFFT's (lower is better). "
            "Errors: relative L2 against a",
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
        ax.plot(sizes, bw, "s-", label="ozfft (fused passes)")
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
            (0.1, "fused_ms", "ozfft fused fixed point (model)"),
            (0.3, "unfused_ms", "unfused (Ozaki-II stages)"),
        ):
            vals = [p.get(key) or 0.0 for p in proj]
            bars = ax.bar([x + off for x in xs], vals, width=0.2, label=label)
            if key == "fused_ms":  # hatched: a lower bound (a unit's rate is missing)
                for bar, p in zip(bars, proj, strict=True):
                    if not p.get("complete", True):
                        bar.set_hatch("//")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("projected 1024³ FP64 FFT, ms")
        ax.set_title("hatched: lower bound, a unit's rate not in the cited source", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "projection_1024.png", dpi=110)
        plt.close(fig)
        made.append("projection_1024.png")
    return made


_UNIT_NAMES = {
    "native_fp64": "native FP64 (5 log2 n flops)",
    "tensor_int8": "INT8 tensor ops",
    "int32": "integer (INT32-pipe) instructions",
    "fp64_residues": "FP64 ops (residues)",
    "bytes_over_roof": "bytes / 32",
    "unfused_bytes_over_fused": "bytes / 32",
}


def _x(value: float | None, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def _tensor_cell(parts: dict) -> str:
    """The tensor time of a projection: INT8's, or FP8's (marked) where the GPU's INT8 is
    cut."""
    if "tensor_fp8" in parts:
        return f"{_x(parts['tensor_fp8'])} (FP8)"
    return _x(parts["tensor_int8"])


def _gpu_sentence(p: dict) -> str:
    """What the fused design does on one GPU, from its projection."""
    parts, needs, has = p["parts_ms"], p["needs"], p["has"]
    names = {
        "memory": "memory",
        "tensor_int8": "INT8 tensor cores",
        "tensor_fp8": "FP8 tensor cores",
        "int32": "INT32",
    }
    unit = {"tensor_int8": "INT8", "tensor_fp8": "FP8", "int32": "INT32"}
    missing = [unit[u] for u, v in parts.items() if v is None]
    times = ", ".join(
        f"{label} {parts[u]:.1f} ms"
        for u, label in (
            ("tensor_int8", "tensor"),
            ("tensor_fp8", "FP8 tensor"),
            ("int32", "INT32"),
        )
        if parts.get(u) is not None
    )
    native = f"native FP64 {_x(p['native_fp64_ms'])} ms"
    if p["complete"]:
        head = (
            f"**{names[p['binding']]}-bound**: {p['fused_ms']:.0f} ms = "
            f"{p['fused_ms'] / p['roof_ms']:.1f}× the memory roof ({times}; {native})"
        )
        unfused = p.get("unfused_ms")
        if unfused is not None and p.get("unfused_complete", True):
            head += f", {unfused / p['fused_ms']:.1f}× below the unfused (Ozaki-II stages) model"
    else:
        head = (
            f"**lower bound only**, {' and '.join(missing)} rate{'s' if len(missing) > 1 else ''} "
            "not in the cited source: "
            f"≥ {p['fused_ms']:.0f} ms, set by {names[p['binding']]}"
            + (f" ({times}; {native})" if times else f" ({native})")
        )
    mark = "" if p["mma_fraction_measured"] else " assumed"
    int8 = f"INT8 {needs['int8_TOPS_effective']:.0f} TOPS through mma.sync"
    if has["int8_TOPS_effective"] is not None:
        int8 += f" (has {has['int8_TOPS_effective']:.0f} at the{mark} {p['mma_fraction']:.0%})"
    int32 = f"INT32 {needs['int32_Tops']:.0f} T/s"
    if has["int32_Tops"] is not None:
        int32 += f" (has {has['int32_Tops']:.1f})"
    return f"- {p['gpu']}: {head}. At memory speed it would need {int8} and {int32}."


def _floors_section(floors: dict) -> list[str]:
    """The model: floors, rates needed, projections per GPU, model vs measurement."""
    n = floors["n"]
    fused = floors["fused"]
    counts = fused["counts"]
    const = floors["constants"]
    frac = const["MMA_SYNC_FRACTION"]
    radices = "·".join(map(str, counts["stages"]))
    lines = [
        f"## The fused fixed-point FFT model (n = {n}, fp64)",
        "",
        "What the GPU runs (`kernels/fft/fixed_pass.cu`): one kernel pass per axis for "
        "n ≤ 1024 (four-step passes beyond), per complex element and pass:",
        "",
        "- HBM bytes: 32 (16 read + 16 written), the memory roof;",
        "- INT8 tensor work: Σ over the plan's stages of `fixed_stage_mmas(r) / (8 r)` "
        "MMAs (a task is r elements of each of 8 lines): m16n8k16 where 2r ≤ 16 (4096 ops), "
        f"m16n8k32 beyond ({const['MMA_OPS']} ops) — radices {radices}: "
        f"{counts['mmas']:.4g} MMAs = {counts['tc_ops']:.0f} ops;",
        f"- integer instructions: {const['FUSED_INT_ENTRY_EXIT']} + "
        f"{const['FUSED_INT_PER_STAGE']} × stages (+ {const['FUSED_INT_TWIDDLE']} in a "
        f"four-step row pass) = {counts['int_instr']}. Per stage: the straight-line stage "
        "loop of the sm_90 build (133 integer instructions per 64-element task and thread "
        "in a middle radix-8 stage); entry/exit: calibrated so that an n = 512 pass (8·8·8) "
        f"equals the ncu count on an H200 ({const['NCU_512_THREAD_INSTR_PER_ELEMENT']} thread "
        f"instructions per element, {const['NCU_512_INTEGER_FRACTION']:.0%} integer/logic, "
        f"{const['NCU_512_PASS_MS']} ms per 512³ pass);",
        "- no FP64 operation, no residues, no CRT (the Ozaki-II stages' 1,760-instruction "
        "Phase B is not part of this path).",
        "",
        f"Tensor time at {frac:.0%} of the dense INT8 peak: what the fused pass's mma.sync "
        f"reached on an H200 ({const['MMA_SYNC_TOPS_H200']:.0f} TOPS of 1979) — measured "
        "for Hopper (H100, H200, GH200 share the SM), an assumption (†) for every other GPU "
        "(MI300X: a port of the pass to its matrix cores).",
        "",
        "### Floors (multiples of B_HBM for memory-roof parity)",
        "",
        f"| unit | fused fixed-point (today) | {floors['unfused']['label']} |",
        "|---|---|---|",
    ]
    old = floors["unfused"]["floors"]
    for unit, value in fused["floors"].items():
        other = old.get(
            unit, old.get("unfused_bytes_over_fused") if unit == "bytes_over_roof" else None
        )
        lines.append(f"| {_UNIT_NAMES.get(unit, unit)} | {value:.2f} | {_x(other, '.2f')} |")
    lines.append(f"| {_UNIT_NAMES['fp64_residues']} | 0 | {old['fp64_residues']:.2f} |")
    meets = floors.get("meets")
    if meets:
        lines += [
            "",
            f"Measured GPU ({meets['gpu']}): "
            + "; ".join(f"{k}: {'meets' if v else 'misses'}" for k, v in meets["units"].items())
            + f" (the fused pass's mma.sync reaches ~{frac:.0%} of the INT8 peak, below cuBLAS).",
        ]
    lines += [
        "",
        "### Rates each GPU needs to run the fused pass at memory speed",
        "",
        "floor × B_HBM; INT8 as the rate mma.sync must deliver and as the datasheet peak "
        f"that would give it at {frac:.0%}.",
        "",
        "| GPU | HBM TB/s | INT8 needed, TOPS (peak at "
        f"{frac:.0%}) | INT8 at mma.sync, TOPS | INT32 needed, T/s | INT32, T/s |",
        "|---|---|---|---|---|---|",
    ]
    for p in floors["projections"]:
        needs, has = p["needs"], p["has"]
        lines.append(
            f"| {p['gpu']} | {p['spec']['hbm_TBps']:.2f} | {needs['int8_TOPS_effective']:.0f} "
            f"({needs['int8_TOPS_peak']:.0f}) | {_x(has['int8_TOPS_effective'], '.0f')}"
            f"{'' if p['mma_fraction_measured'] or has['int8_TOPS_effective'] is None else '†'} | "
            f"{needs['int32_Tops']:.0f} | {_x(has['int32_Tops'])} |"
        )
    lines += ["", f"† the H200's measured {frac:.0%} of the INT8 peak, assumed for this GPU."]
    lines += [
        "",
        f"### Projected {n}³ FP64 3-D FFT",
        "",
        "max(memory time, tensor time, INT32 time), full overlap assumed (a lower bound).",
        "",
        "| GPU | roof ms | native FP64 ms | fused: tensor ms | fused: INT32 ms | "
        f"ozfft fused ms | binds | {floors['unfused']['label']} ms | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in floors["projections"]:
        parts = p["parts_ms"]
        lines.append(
            f"| {p['gpu']} | {p['roof_ms']:.1f} | {_x(p['native_fp64_ms'])} | "
            f"{_tensor_cell(parts)} | {_x(parts['int32'])} | "
            f"{p['fused_ms']:.1f}{'' if p['complete'] else '*'} | {p['binding']} | "
            f"{p['unfused_ms']:.0f}{'' if p.get('unfused_complete', True) else '*'} | "
            f"{p['spec']['source']} |"
        )
    lines += [
        "",
        "\\* a unit's rate is not in the cited source; that unit is left out of the max.",
        "",
        "What the fused design does on each GPU:",
        "",
        *(_gpu_sentence(p) for p in floors["projections"]),
        "",
    ]
    measured = floors.get("measured") or []
    if measured:
        lines += [
            "### Model vs measurement (H200, 3-D c2c FP64)",
            "",
            f"Measured: `{measured[0]['source']}` (same run as cuFFT); model: the H200 row "
            "above at each size.",
            "",
            "| n³ | radices | model ms (binds) | ozfft ms | measured / model | cuFFT ms |",
            "|---|---|---|---|---|---|",
        ]
        for m in measured:
            lines.append(
                f"| {m['n']}³ | {'·'.join(map(str, m['radices']))} | {m['model_ms']:.2f} "
                f"({m['binding']}) | {m['ms']:.2f} | {m['ms'] / m['model_ms']:.2f} | "
                f"{m['cufft_ms']:.2f} |"
            )
        lines.append("")
    return lines


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
            f"| INT32 DP4A | {_scaled(ceil, 'int32_dp4a_ops', 1e12, '.1f')} T/s |",
            f"| INT8 mma.sync m16n8k32 (registers) | "
            f"{_scaled(ceil, 'int8_mma_sync_ops', 1e12, '.0f')} TOP/s |",
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
    if floors and "fused" in floors:
        lines += _floors_section(floors)
    elif floors:
        lines += [
            "## Model",
            "",
            "These floors predate the model of the fused fixed-point pass: rerun "
            "`ozfft bench floors --model-only --out DIR` (or `ozfft bench all`, which "
            "recomputes them).",
            "",
        ]
    lines += result_tables(results)
    pngs = _plots(results, out)
    for png in pngs:
        lines += [f"![{png}]({png})", ""]
    if not pngs:
        lines += ["(No plots: they need matplotlib — `pip install matplotlib`.)", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    return report
