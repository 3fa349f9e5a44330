"""Benchmark campaign pieces that need no GPU: model arithmetic against hand-computed
cases, the floors CLI in model-only mode, and the report writer on synthetic data."""

from __future__ import annotations

import json
import math

import pytest

from ozfft.bench import model
from ozfft.bench.campaign import floors_result
from ozfft.bench.report import write_report
from ozfft.cli import main


def test_native_floor_matches_seed_004():
    # 5 log2(1024) = 50 flops per element and pass over 32 bytes: 1.5625 x B_HBM
    assert model.floors(1024)["native_fp64"] == pytest.approx(1.5625)


def test_pass_counts_by_hand():
    c = model.fft_pass_counts(1024, 16)
    assert c.stages == [1024]
    assert c.tc_ops == 3 * 16 * 2 * 1024  # Karatsuba: 3 INT8 GEMMs per modulus, k = 1024
    assert c.fp64_ops == 16 + 16 * 19
    # Phase B: N = 16 moduli, L = 5 limbs of 32 bits (16 * 256 * P < 2**160)
    assert model._limbs32(16) == 5
    assert model.phase_b_instructions(16) == 16 * 43 + 2 * (2 * 16 * 5 + 22 * 5 + 266)
    assert model.phase_b_instructions(16) == 1760  # ncu on an H200: 1761 executed
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
    assert meets["tensor_int8 (32x32 stages)"] == (1e15 >= r["design"]["tensor_int8"] * 1e12)
    assert meets["int32 (32x32 stages)"] == (1e14 >= r["design"]["int32"] * 1e12)
    assert meets["native_fp64"] == (2e12 >= r["design"]["native_fp64"] * 1e12)


def test_floors_cli_model_only(capsys, tmp_path):
    assert main(["bench", "floors", "--model-only", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "native_fp64" in out and "RTX 5080" in out and "report:" in out
    data = json.loads((tmp_path / "campaign.json").read_text())
    assert data["floors"]["n"] == 1024
    assert (tmp_path / "projection_1024.png").stat().st_size > 1000


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
