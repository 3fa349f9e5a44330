"""Benchmark campaign pieces that need no GPU: model arithmetic against hand-computed
cases, the floors CLI in model-only mode, the report writer on synthetic data, the
long-double FFT reference against an exact DFT, the correctly-rounded measure, the
phase tables built from the profiling hook, and the import-time hygiene of the
bench package."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import mpmath
import numpy as np
import pytest

from ozfft import reference
from ozfft.bench import campaign, model
from ozfft.bench import fft as fft_bench
from ozfft.bench import gemm as gemm_bench
from ozfft.bench.campaign import floors_result
from ozfft.bench.phases import PHASES, phase_cells, phase_table, profile_call
from ozfft.bench.report import write_report
from ozfft.cli import main
from ozfft.profiling import HostClock, PhaseProfile, phase


def test_native_floor_is_5_log2_n_flops_over_32_bytes():
    # the usual 5 n log2 n flops of an FFT: 5 log2(1024) = 50 flops per element and pass
    # over 32 bytes, 1.5625 x B_HBM
    assert model.floors(1024)["native_fp64"] == pytest.approx(1.5625)


def test_pass_counts_by_hand():
    c = model.fft_pass_counts(1024, 16)
    assert c.stages == [1024]
    assert c.tc_ops == 3 * 16 * 2 * 1024  # Karatsuba: 3 INT8 GEMMs per modulus, k = 1024
    assert c.fp64_ops == 16 + 16 * 19
    # Phase B: N = 16 moduli, P < 2**126: 5 base-2**31 digits
    assert model._digits31(16) == 5 and model._digits31(15) == 4
    assert model.phase_b_instructions(16) == 16 * (21 + 2 * 5) + 2 * (8 * 5 + 59)
    assert c.int32_instr == model.phase_b_instructions(16)
    planes = 48
    assert c.bytes_unfused == 64 + 16 + planes + planes + 4 * planes + 4 * planes + 16 + 64
    two = model.fft_pass_counts(1024, 16, [32, 32])
    assert two.tc_ops == 2 * 3 * 16 * 2 * 32 and two.int32_instr == 2 * c.int32_instr


def test_projection_by_hand():
    gpu = model.GPUSpec(
        "toy",
        hbm_TBps=1.0,
        fp64_TFLOPS=10.0,
        int8_TOPS=1000.0,
        fp8_TFLOPS=None,
        int32_Tops=10.0,
        source="hand",
    )
    p = model.project(gpu, n=64, num_moduli=8, radices=[64])
    elements = 64**3
    assert p["roof_ms"] == pytest.approx(3 * elements * 32 / 1e12 * 1e3)
    assert p["native_fp64_ms"] == pytest.approx(max(p["roof_ms"], 3 * elements * 30 / 10e12 * 1e3))
    tc = 3 * elements * (3 * 8 * 2 * 64) / 1000e12 * 1e3
    int32 = 3 * elements * model.phase_b_instructions(8) / 10e12 * 1e3
    assert p["parts_ms"]["tensor_int8"] == pytest.approx(tc)
    assert p["parts_ms"]["int32"] == pytest.approx(int32)
    assert p["ozfft_fused_ms"] == pytest.approx(
        max(p["roof_ms"], tc, int32, p["parts_ms"]["fp64_residues"])
    )
    assert p["complete"]


def test_gpu_table_cites_sources_and_covers_the_issue_list():
    names = " ".join(g.name for g in model.GPUS)
    for want in ("H100", "H200", "GH200", "B200", "B300", "Rubin", "MI300X", "RTX 5080"):
        assert want in names
    assert all(g.source and g.hbm_TBps > 0 for g in model.GPUS)
    h200 = next(g for g in model.GPUS if g.name.startswith("H200"))
    # 1024^3, 3 passes, 32 B per element at 4.8 TB/s
    assert model.project(h200)["roof_ms"] == pytest.approx(3 * 1024**3 * 32 / 4.8e12 * 1e3)


def test_floors_meets_uses_measured_rates():
    ceil = {
        "gpu": "toy",
        "hbm_Bps": 1e12,
        "fp64_fma_ops": 1e12,
        "int8_gemm_ops": 1e15,
        "int32_imad_ops": 1e14,
    }
    r = floors_result(ceil, 1024, 16)
    meets = r["meets"]["units"]
    fused = r["fused"]["floors"]
    assert meets["tensor_int8 (fused, at the cuBLAS INT8 rate)"] == (
        1e15 >= fused["tensor_int8"] * 1e12
    )
    assert meets["int32 (fused)"] == (1e14 >= fused["int32"] * 1e12)
    assert meets["native_fp64"] == (2e12 >= fused["native_fp64"] * 1e12)


# -- the fused fixed-point pass ---------------------------------------------------------


def test_fused_stage_mmas_by_hand():
    # fp64: 8 data digits, 7 matrix digits, diagonals 5..13; pairs per diagonal
    # 6, 7, 7, 6, 5, 4, 3, 2, 1 = 41. Radix 8 (2r = 16): one m16n8k16 per pair (2048
    # MACs); radix 16: 2 row tiles x 1 k chunk x 41 pairs = 82 m16n8k32 (4096 MACs).
    assert model.fused_stage_mmas_per_element(8) == 41 / (8 * 8)
    assert model.fused_stage_mmas_per_element(16) == 82 / (8 * 16)
    assert model.fused_stage_ops_per_element(8) == 41 / 64 * 2 * 16 * 8 * 16 == 2624
    assert model.fused_stage_ops_per_element(16) == 82 / 128 * 8192 == 5248
    assert model.MMA_OPS == 2 * 16 * 8 * 32 == 8192


def test_fused_counts_by_hand_512_and_64():
    c = model.fused_counts(512)
    assert c.layout == "one-pass" and c.stages == [8, 8, 8] and len(c.passes) == 1
    assert c.mmas == 3 * 41 / 64 == 1.921875
    assert c.tc_ops == 3 * 2624 == 7872  # 3936 INT8 MACs per element and pass
    assert c.int_instr == 131 + 3 * 67 == 332
    assert c.bytes == 32
    c = model.fused_counts(64)
    assert c.stages == [8, 8]
    assert c.mmas == 2 * 41 / 64 == 1.28125
    assert c.tc_ops == 5248
    assert c.int_instr == 131 + 2 * 67 == 265
    assert c.bytes == 32
    f = model.fused_floors(512)
    assert f == {
        "native_fp64": 5 * 9 / 32,
        "tensor_int8": 7872 / 32,
        "int32": 332 / 32,
        "bytes_over_roof": 1.0,
    }


def test_fused_integer_constants_are_calibrated_to_the_ncu_count():
    # 1.853e9 warp instructions for a 512^3 pass = 13.8 warp = 442 thread per element
    per_element = model.NCU_512_WARP_INSTRUCTIONS * 32 / 512**3
    assert per_element == pytest.approx(model.NCU_512_THREAD_INSTR_PER_ELEMENT, rel=2e-3)
    # an n = 512 pass (three stages) reproduces 75 % of 442 integer instructions
    assert model.fused_int_instructions(3) == round(0.752 * 442) == 332
    assert model.FUSED_INT_ENTRY_EXIT == 131 and model.FUSED_INT_PER_STAGE == 67
    assert model.fused_int_instructions(2, twiddle=True) == 131 + 134 + 170


def test_fused_four_step_counts():
    # 2**20 = 1024 x 1024: a column pass and a twiddled row pass writing natural order
    c = model.fused_counts(1 << 20)
    assert c.layout == "four-step" and [p.n for p in c.passes] == [1024, 1024]
    assert [p.twiddle for p in c.passes] == [False, True]
    assert c.int_instr == 332 + 332 + 170
    assert c.bytes == 32 + 32
    assert c.mmas == 2 * (41 / 64 + 41 / 64 + 82 / 128)
    with pytest.raises(ValueError, match="one-pass and four-step"):
        model.fused_counts(1031)  # prime above 64: Bluestein, not modelled


def test_fused_projection_for_h200_by_hand():
    h200 = next(g for g in model.GPUS if g.name.startswith("H200"))
    p = model.project_fused(h200)  # 1024^3, radices 8.8.16
    work = 3 * 2**30  # three axis passes over 1024^3 elements
    roof = work * 32 / 4.8e12 * 1e3  # 21.47 ms
    tensor = work * (2 * 2624 + 5248) / 515e12 * 1e3  # 26 % of 1979: 65.65 ms
    int32 = work * 332 / (132 * 64 * 1.98e9) * 1e3  # 16.7 T/s: 63.94 ms
    assert p["radices"] == [8, 8, 16]
    assert p["roof_ms"] == pytest.approx(roof) and roof == pytest.approx(21.47, abs=0.01)
    assert p["parts_ms"]["tensor_int8"] == pytest.approx(tensor)
    assert tensor == pytest.approx(65.65, abs=0.01)
    assert p["parts_ms"]["int32"] == pytest.approx(int32) and int32 == pytest.approx(
        63.94, abs=0.01
    )
    assert p["fused_ms"] == pytest.approx(tensor) and p["binding"] == "tensor_int8"
    assert p["complete"]
    assert p["native_fp64_ms"] == pytest.approx(roof)  # 50 flops/element at 34 TF: 4.7 ms
    assert p["needs"]["int32_Tops"] == pytest.approx(332 / 32 * 4.8)  # 50 T/s
    assert p["needs"]["int8_TOPS_effective"] == pytest.approx(10496 / 32 * 4.8)  # 1574
    assert p["mma_fraction_measured"]
    # 512^3: 7.99 ms INT32-bound (a lower bound: full overlap at the full INT32 rate)
    # against 11.9 ms measured in the same run
    p512 = model.project_fused(h200, 512)
    assert p512["fused_ms"] == pytest.approx(3 * 512**3 * 332 / (132 * 64 * 1.98e9) * 1e3)
    assert p512["fused_ms"] == pytest.approx(7.99, abs=0.01) and p512["binding"] == "int32"


def test_fused_projection_takes_fp8_where_int8_is_cut():
    # B300: no dense INT8 in its source, 4500 T dense FP8: Phase A on FP8, four e4m3
    # products per INT8 one (docs/numerics.md, "FP8 Phase A of the FFT")
    b300 = next(g for g in model.GPUS if g.name == "B300")
    p = model.project_fused(b300)
    assert p["phase_a"] == "fp8" and "tensor_int8" not in p["parts_ms"]
    work = 3 * 2**30
    fp8 = work * 4 * (2 * 2624 + 5248) / (4500e12 * model.MMA_SYNC_FRACTION) * 1e3
    assert p["parts_ms"]["tensor_fp8"] == pytest.approx(fp8) and p["binding"] == "tensor_fp8"
    # equal INT8 and FP8 peaks (Hopper, B200): INT8, a quarter of the tensor work
    for name in ("H200 SXM", "B200"):
        q = model.project_fused(next(g for g in model.GPUS if g.name == name))
        assert q["phase_a"] == "int8" and "tensor_fp8" not in q["parts_ms"]
    from ozfft.bench.report import _gpu_sentence, _tensor_cell

    assert _tensor_cell(p["parts_ms"]) == f"{fp8:.1f} (FP8)"
    assert f"FP8 tensor {fp8:.1f} ms" in _gpu_sentence(p)


def test_fused_projection_marks_missing_rates_and_beats_the_unfused_model():
    r = floors_result(None)
    by_name = {p["gpu"]: p for p in r["projections"]}
    for name in ("H100 SXM", "H200 SXM", "GH200 (HBM3e)"):
        p = by_name[name]
        # tensor work at the measured mma.sync rate and INT32 issue within 3 % of each other
        assert p["complete"] and p["binding"] == "tensor_int8"
        assert p["parts_ms"]["int32"] == pytest.approx(p["parts_ms"]["tensor_int8"], rel=0.03)
        assert p["fused_ms"] < p["unfused_ms"] and p["fused_ms"] < p["design_fused_ms"]
    b200 = by_name["B200"]
    assert not b200["complete"] and b200["parts_ms"]["int32"] is None
    assert not b200["mma_fraction_measured"]
    assert b200["fused_ms"] == b200["parts_ms"]["tensor_int8"]
    assert [m["n"] for m in r["measured"]] == [256, 512, 1024]
    # the model's measured points are the committed results file's fftn rows
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "bench/results/nvidia-h200/fft.json"
    if results.exists():  # a source checkout
        rows = {rec["n"]: rec for rec in json.loads(results.read_text()) if rec["case"] == "fftn"}
        for m in r["measured"]:
            assert m["ms"] == pytest.approx(rows[m["n"]]["ms"], abs=5e-4)
            assert m["cufft_ms"] == pytest.approx(rows[m["n"]]["cufft_ms"], abs=5e-4)
    json.dumps(r)  # campaign.json-ready


def test_floors_cli_model_only(capsys, tmp_path):
    assert main(["bench", "floors", "--model-only", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "native_fp64" in out and "RTX 5080" in out and "report:" in out
    data = json.loads((tmp_path / "campaign.json").read_text())
    assert data["floors"]["n"] == 1024
    assert data["floors"]["fused"]["counts"]["stages"] == [8, 8, 16]
    assert (tmp_path / "projection_1024.png").stat().st_size > 1000
    text = (tmp_path / "report.md").read_text()
    assert "## The fused fixed-point FFT model (n = 1024, fp64)" in text
    assert "| H200 SXM | 21.5 | 21.5 | 65.7 | 63.9 | 65.7 | tensor_int8 | 429 |" in text
    assert "- H200 SXM: **INT8 tensor cores-bound**: 66 ms" in text
    assert "| 512³ | 8·8·8 | 7.99 (int32) | 9.55 | 1.20 | 3.33 |" in text
    assert "unfused (Ozaki-II stages)" in text and "| B200 | 12.9 | 12.9 | 28.9 | n/a |" in text


def test_floors_lines_name_both_models():
    lines = campaign.floors_lines(floors_result(None))
    text = "\n".join(lines)
    assert "fused fixed-point pass, n = 1024 (radices 8·8·16" in text
    assert "H200 SXM" in text and "(tensor_int8)" in text and "unfused (Ozaki-II stages)" in text


def test_floors_from_before_the_fused_model(tmp_path, capsys):
    import argparse

    from ozfft.bench.campaign import run_all

    old = {"n": 512, "moduli": 16, "today": {}, "design": {}, "projections": []}
    text = write_report({"floors": old}, tmp_path).read_text()
    assert "predate the model of the fused fixed-point pass" in text
    # a resumed campaign recomputes them (model only) and keeps the other steps
    done = {"ceilings": {"gpu": "Earlier GPU"}, "floors": old, "fft": [], "gemm": []}
    done["ceilings"].update(
        hbm_Bps=4e12, int8_gemm_ops=1.4e15, int32_imad_ops=1.6e13, fp64_fma_ops=1.6e13
    )
    (tmp_path / "campaign.json").write_text(json.dumps(done))
    args = argparse.Namespace(out=tmp_path, restart=False, fft_sizes=[64], gemm_shapes=["64"])
    assert run_all(args) == 0
    assert capsys.readouterr().out.count("done earlier, kept") == 3
    data = json.loads((tmp_path / "campaign.json").read_text())
    assert data["floors"]["fused"]["counts"]["stages"] == [8, 8, 16]
    assert "meets" in data["floors"]
    assert "The fused fixed-point FFT model (n = 1024" in (tmp_path / "report.md").read_text()


def test_report_writer_on_synthetic_measurements(tmp_path):
    synthetic = {
        "ceilings": {
            "gpu": "Synthetic GPU",
            "hbm_Bps": 4e12,
            "int8_gemm_ops": 1.4e15,
            "fp8_gemm_flops": None,
            "int32_imad_ops": 1.6e13,
            "fp64_fma_ops": 3e13,
            "ozfft_residues_Bps": 1e12,
            "ozfft_phase_b_Bps": 2e12,
            "ozfft_phase_b_outputs_per_s": 3e10,
            "sass": {
                "phase_b_per_complex_output": {"total": 1300, "top": []},
                "phase_b_model": 1208,
            },
        },
        "floors": floors_result(None),
        "fft": [
            {
                "n": n,
                "ms": 10.0 * n / 64,
                "cufft_ms": 0.1 * n / 64,
                "hbm_TBps": 4.0,
                "rel_l2": 8e-17,
                "cufft_rel_l2": 3e-16,
            }
            for n in (64, 128)
        ],
        "gemm": [
            {
                "op": "dgemm",
                "m": 8192,
                "n": 8192,
                "k": 8192,
                "moduli": 16,
                "mode": "fast",
                "phases_ms": {"scaling": 2, "residues": 2, "phase_a": 12, "phase_b": 2.5},
            }
        ],
    }
    report = write_report(synthetic, tmp_path)
    text = report.read_text()
    assert "Synthetic GPU" in text and "1300 instructions" in text and "model counts 1208" in text
    # the result tables themselves, tolerant of records from before `case` existed
    assert fft_bench.HEADER in text and gemm_bench.HEADER in text
    assert "| fftn | 128x128x128 | 20.000 | 0.200 | 100.00 |" in text
    assert "| dgemm | 8192 | 8192 | 8192 | 16 | fast |" in text
    assert "| 2.00 | 2.00 | 12.00 | 2.50 |" in text
    for png in ("fft_bandwidth.png", "gemm_phases.png", "projection_1024.png"):
        assert (tmp_path / png).stat().st_size > 1000
        assert f"]({png})" in text
    assert math.isclose(json.loads((tmp_path / "campaign.json").read_text())["fft"][0]["ms"], 10.0)


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("cupy") is not None, reason="cupy is installed"
)
def test_gpu_campaigns_say_why_without_gpu(capsys):
    assert main(["bench", "floors"]) == 2
    assert "use --model-only" in capsys.readouterr().err
    assert main(["bench", "all", "--out", "/tmp/never"]) == 2
    assert main(["bench", "ceilings"]) == 2


def test_campaign_resumes_finished_steps(tmp_path, capsys):
    """Steps recorded in campaign.json are kept (no GPU needed when all are done)."""
    import argparse

    from ozfft.bench.campaign import run_all

    done = {
        "ceilings": {
            "gpu": "Earlier GPU",
            "hbm_Bps": 4e12,
            "int8_gemm_ops": 1.4e15,
            "fp8_gemm_flops": 1.3e15,
            "int32_imad_ops": 1.6e13,
            "fp64_fma_ops": 1.6e13,
            "ozfft_residues_Bps": 1.8e12,
            "ozfft_phase_b_Bps": 1.8e12,
            "ozfft_phase_b_outputs_per_s": 9e9,
        },
        "floors": floors_result(None),
        "fft": [],
        "gemm": [],
    }
    (tmp_path / "campaign.json").write_text(json.dumps(done))
    args = argparse.Namespace(out=tmp_path, restart=False, fft_sizes=[64], gemm_shapes=["64"])
    assert run_all(args) == 0
    out = capsys.readouterr().out
    assert out.count("done earlier, kept") == 4  # nothing re-measured, no GPU touched
    assert "Earlier GPU" in (tmp_path / "report.md").read_text()


def test_report_without_matplotlib_still_written(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    report = write_report({"floors": floors_result(None)}, tmp_path)
    assert "pip install matplotlib" in report.read_text()
    assert not list(tmp_path.glob("*.png"))


# -- the report's FFT and GEMM tables --------------------------------------------------


def test_report_shows_fft_and_gemm_tables(tmp_path):
    fft_records = [
        {
            "case": "rfftn",
            "op": "d2z_3d",
            "shape": [64, 64, 64],
            "n": 64,
            "ms": 2.0,
            "cufft_ms": 0.5,
            "ratio": 0.25,
            "roof_ms": 0.1,
            "hbm_TBps": 4.0,
            "rel_l2": 1.25e-16,
            "cufft_rel_l2": 3.5e-16,
            "correctly_rounded": 0.96875,
            "cufft_correctly_rounded": 0.5,
            "gpu": "Synthetic GPU",
        },
        {
            "case": "fft",
            "op": "z2z_1d",
            "shape": [2**24],
            "n": 2**24,
            "ms": 8.0,
            "cufft_ms": 1.0,
            "ratio": 0.125,
            "roof_ms": 0.2,
            "hbm_TBps": 4.0,
            "rel_l2": None,
            "cufft_rel_l2": None,
            "correctly_rounded": None,
            "cufft_correctly_rounded": None,
            "gpu": "Synthetic GPU",
        },
    ]
    gemm_records = [
        {
            "op": "zgemm",
            "m": 4096,
            "n": 4096,
            "k": 4096,
            "moduli": 16,
            "mode": "fast",
            "tflops": 12.5,
            "baseline_tflops": 50.0,
            "ratio": 0.25,
            "max_rel_err": 1.5e-16,
            "baseline_max_rel_err": 2.5e-15,
            "phases_ms": {"scaling": None, "residues": 1.5, "phase_a": 4.0, "phase_b": None},
            "gpu": "Synthetic GPU",
        }
    ]
    text = write_report({"fft": fft_records, "gemm": gemm_records}, tmp_path).read_text()
    assert "records in campaign.json" not in text
    assert (
        "| rfftn | 64x64x64 | 2.000 | 0.500 | 4.00 | 0.100 | 1.25e-16 | 3.50e-16 | "
        "0.9688 | 0.5000 |" in text
    )
    assert "| fft | 16777216 | 8.000 | 1.000 | 8.00 | 0.200 | n/a | n/a | n/a | n/a |" in text
    assert (
        "| zgemm | 4096 | 4096 | 4096 | 16 | fast | 12.5 | 50.0 | 0.25 | 1.50e-16 | 2.50e-15 | "
        "n/a | 1.50 | 4.00 | n/a |" in text
    )
    # the bandwidth plot is for 3-D c2c cubes only: none here
    assert not (tmp_path / "fft_bandwidth.png").exists()


# -- the long-double FFT reference -----------------------------------------------------

needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).nmant < 60, reason="long double is not wider than float64 here"
)


def _mp(v) -> mpmath.mpc:
    """A clongdouble or float value as an exact mpmath number."""
    re, im = (np.longdouble(v.real), np.longdouble(v.imag))
    return mpmath.mpc(
        mpmath.mpf(re.as_integer_ratio()[0]) / re.as_integer_ratio()[1],
        mpmath.mpf(im.as_integer_ratio()[0]) / im.as_integer_ratio()[1],
    )


def _exact_dft(x: np.ndarray, axes) -> np.ndarray:
    """The DFT X_k = sum_j x_j exp(-2 pi i jk/n) along ``axes``, term by term in 40-digit
    mpmath (an object array of mpc)."""

    def dft1(v):
        n = len(v)
        return np.array(
            [
                mpmath.fsum(
                    v[j] * mpmath.expjpi(mpmath.mpf(-2 * (j * k % n)) / n) for j in range(n)
                )
                for k in range(n)
            ],
            dtype=object,
        )

    out = np.vectorize(_mp, otypes=[object])(x)
    for axis in axes:
        out = np.apply_along_axis(dft1, axis, out)
    return out


def _mp_rel_l2(got: np.ndarray, exact: np.ndarray) -> float:
    diff = sum(abs(_mp(g) - e) ** 2 for g, e in zip(got.ravel(), exact.ravel(), strict=True))
    norm = sum(abs(e) ** 2 for e in exact.ravel())
    return float(mpmath.sqrt(diff / norm))


@needs_long_double
def test_long_double_fftn_against_exact_dft():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
    with mpmath.workdps(40):
        exact = _exact_dft(x, (0, 1, 2))
        ours = reference.long_double_fftn(x)
        assert ours.dtype == np.clongdouble
        # float64 rounding alone (~2**-53) would fail this; long double passes it
        assert _mp_rel_l2(ours, exact) < 2.0**-60
        assert _mp_rel_l2(np.fft.fftn(x), exact) > 2.0**-60  # the bound discriminates
        last_two = _exact_dft(x, (1, 2))
        assert _mp_rel_l2(reference.long_double_fftn(x, axes=(-2, -1)), last_two) < 2.0**-60


@needs_long_double
def test_long_double_rfftn_keeps_the_non_negative_frequencies():
    x = np.random.default_rng(6).standard_normal((4, 6))
    with mpmath.workdps(40):
        exact = _exact_dft(x, (0, 1))[:, :4]
        ours = reference.long_double_rfftn(x)
        assert ours.shape == (4, 4) == np.fft.rfftn(x).shape
        assert _mp_rel_l2(ours, exact) < 2.0**-60
    with pytest.raises(TypeError, match="needs real input"):
        reference.long_double_rfftn(x + 0j)


def test_relative_l2_error_by_hand():
    ref = np.array([3.0, 4.0], dtype=np.longdouble)
    assert reference.relative_l2_error(np.array([3.0, 4.5]), ref) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="shapes differ"):
        reference.relative_l2_error(np.ones(3), ref)


@needs_long_double
def test_correctly_rounded_fraction_on_a_constructed_case():
    one = np.longdouble(1)
    ulp = np.longdouble(2.0**-52)  # float64 spacing at 1
    ref = np.array(
        [
            one + ulp * 3 / 4,  # nearest float64: 1 + ulp (truncation would give 1)
            np.longdouble("0.1") - 1j * np.longdouble("0.3"),
            one + ulp / 4,  # nearest float64: 1
            np.longdouble(5),
        ],
        dtype=np.clongdouble,
    )
    assert ref[0].real != 1 + 2.0**-52  # the reference really is between float64s
    rounded = np.array([1 + 2.0**-52, 0.1 - 0.3j, 1.0, 5.0])
    assert reference.correctly_rounded_fraction(rounded, ref) == 1.0
    wrong_imag = rounded.copy()
    wrong_imag[1] = complex(0.1, np.nextafter(-0.3, 0.0))  # one ulp off in one part
    assert reference.correctly_rounded_fraction(wrong_imag, ref) == 0.75
    truncated = wrong_imag.copy()
    truncated[0] = 1.0  # faithful but not correctly rounded
    assert reference.correctly_rounded_fraction(truncated, ref) == 0.5
    # real arrays compare directly
    assert reference.correctly_rounded_fraction(np.array([1.0, 2.0]), ref[2:].real) == 0.5
    with pytest.raises(ValueError, match="shapes differ"):
        reference.correctly_rounded_fraction(rounded[:3], ref)
    with pytest.raises(TypeError, match="float64 or complex128"):
        reference.correctly_rounded_fraction(rounded.astype(np.complex64), ref)


# -- FFT campaign helpers (the GPU run itself is in device_run.sh) ----------------------


def test_fft_cases_shapes_and_reference_rule():
    cases = fft_bench.CASES
    assert set(cases) == {"fftn", "ifftn", "rfftn", "fft2", "fft"}
    assert fft_bench.case_shapes(cases["ifftn"], [8]) == [(8, 8, 8)]
    # the inverse case's long-double reference is numpy's ifftn (1/N included)
    x = np.random.default_rng(3).standard_normal((6, 5, 4)) + 1j
    ref = fft_bench._reference(cases["ifftn"], x)
    assert ref.dtype == np.clongdouble
    np.testing.assert_allclose(ref.astype(np.complex128), np.fft.ifftn(x), rtol=0, atol=1e-15)
    assert fft_bench.case_shapes(cases["fftn"], [16, 32]) == [(16, 16, 16), (32, 32, 32)]
    assert fft_bench.case_shapes(cases["fft2"]) == [(64, 1024, 1024)]
    assert fft_bench.case_shapes(cases["fft"]) == [(2**18,), (2**20,), (2**24,)]

    def wanted(case, shape):
        return fft_bench.reference_wanted(cases[case], shape, 128, 2**20)

    assert wanted("fftn", (128,) * 3) and not wanted("fftn", (256,) * 3)
    assert wanted("rfftn", (128,) * 3) and not wanted("fft2", (64, 1024, 1024))
    assert wanted("fft", (2**20,)) and not wanted("fft", (2**24,))
    # roof: one read and one write per transformed axis
    assert fft_bench.roof_ms(cases["fftn"], 3, 100, 100, 1e3) == pytest.approx(3 * 200)
    assert fft_bench.roof_ms(cases["fft2"], 3, 100, 100, 1e3) == pytest.approx(2 * 200)
    # rows of an FP8 Phase A name it; INT8 rows (and records from before phase_a) do not
    rec = {"case": "fftn", "shape": [8, 8, 8], "ms": 2.0, "cufft_ms": 1.0}
    assert fft_bench.row(rec).startswith("| fftn | 8x8x8 | 2.000 | 1.000 | 2.00 |")
    assert fft_bench.row(dict(rec, phase_a="int8")) == fft_bench.row(rec)
    assert fft_bench.row(dict(rec, phase_a="fp8")).startswith("| fftn (fp8) | 8x8x8 |")
    assert fft_bench.roof_ms(cases["fft"], 1, 100, 100, 1e3) == pytest.approx(200)


# -- phase tables from the profiling hook ----------------------------------------------


def test_run_and_save_writes_after_every_record(tmp_path, monkeypatch, capsys):
    """The loop the GPU campaigns share: header first, the results rewritten after each
    record (a cut-off run keeps what it measured), default folder from the first GPU."""
    from ozfft.bench.results import markdown_table, run_and_save, write_results

    monkeypatch.chdir(tmp_path)
    seen: list[int] = []

    def write(records: list[dict], out: Path) -> None:
        seen.append(len(records))
        write_results(records, out, "demo", markdown_table("| a |", [f"| {len(records)} |"]))

    def run(save):
        records = []
        for i in range(3):
            records.append({"gpu": "NVIDIA Demo 80GB", "i": i})
            save(records)
        return records

    assert run_and_save(None, "demo", "| a |", write, run) == 0
    out = Path("bench/results/nvidia-demo-80gb")
    assert seen == [1, 2, 3] and len(json.loads((out / "demo.json").read_text())) == 3
    assert (out / "demo.md").read_text() == "| a |\n|---|\n| 3 |\n"
    assert capsys.readouterr().out.splitlines() == [
        "| a |",
        f"wrote {out / 'demo.json'} and {out / 'demo.md'}",
    ]
    assert run_and_save(tmp_path / "x", "demo", "| a |", write, lambda save: []) == 0
    assert "wrote" not in capsys.readouterr().out and not (tmp_path / "x").exists()


def test_phase_table_from_synthetic_profiles():
    profiles = [
        PhaseProfile(ms={"residues": 2.0, "phase_b": 1.0, "transpose": 5.0}),
        PhaseProfile(ms={"residues": 4.0, "phase_b": 3.0}),
        PhaseProfile(ms={"residues": 9.0}),
    ]
    table = phase_table(profiles)
    assert table == {
        "scaling": None,
        "residues": 4.0,  # median of 2, 4, 9
        "phase_a": None,
        "phase_b": 2.0,  # median of the two profiles that report it
        "transpose": 5.0,
    }
    assert tuple(table)[:4] == PHASES
    assert phase_cells(table) == ["n/a", "4.00", "n/a", "2.00"]
    assert phase_table(PhaseProfile()) == dict.fromkeys(PHASES)
    row = gemm_bench.row({"op": "dgemm", "m": 8, "n": 8, "k": 8, "phases_ms": table})
    assert row.endswith("| n/a | 4.00 | n/a | 2.00 | n/a | n/a |")  # fused, plan: absent


def test_profile_call_reads_what_the_hook_reports():
    clock = HostClock()

    def work() -> None:
        for _ in range(2):  # a phase that repeats adds up
            with phase("phase_a", clock):
                time.sleep(0.002)

    table = profile_call(work, reps=3)
    assert table["phase_a"] is not None and table["phase_a"] >= 4.0
    assert table["scaling"] is table["residues"] is table["phase_b"] is None
    assert profile_call(lambda: None, reps=2) == dict.fromkeys(PHASES)


# -- no work at import time, one site that reaches into the engine ----------------------

BENCH_DIR = Path(__file__).resolve().parents[1] / "ozfft" / "bench"


def test_bench_modules_import_without_cupy_and_do_nothing():
    code = (
        "import sys, importlib, pkgutil\n"
        "sys.modules['cupy'] = None\n"  # any `import cupy` raises ImportError
        "import ozfft.bench\n"
        "names = [m.name for m in pkgutil.iter_modules(ozfft.bench.__path__)]\n"
        "for name in names:\n"
        "    importlib.import_module('ozfft.bench.' + name)\n"
        "assert 'ncu_probe' in names, names\n"
        "assert not [m for m in sys.modules if m.startswith('ozfft.engines.cuda')]\n"
        "from ozfft.bench import ncu_probe\n"
        "from ozfft.errors import DeviceUnavailableError\n"
        "try:\n"
        "    ncu_probe.main()\n"
        "except DeviceUnavailableError as exc:\n"
        "    assert 'cupy' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('ncu_probe.main ran without cupy')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_engine_internals_are_never_imported_by_the_bench():
    """No bench module imports ``ozfft.engines.cuda`` (the probes go through the CUDA
    engine's public kernel accessors) or touches private engine members."""
    sites = []
    for path in sorted(BENCH_DIR.glob("*.py")):
        tree = ast.parse(path.read_text())
        for func in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and "engines.cuda" in (node.module or ""):
                    sites.append((path.name, func.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.col_offset == 0:
                assert "engines.cuda" not in (node.module or ""), path.name
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("_gemm_s8", "phase_ms", "profile"), path.name
        assert "compute_shifts" not in path.read_text(), path.name
    assert sites == []
