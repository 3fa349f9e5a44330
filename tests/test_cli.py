"""The ``ozfft`` command and configuration errors."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ozfft import config
from ozfft.check import run_gemm_check
from ozfft.cli import main


def test_check_runs_and_reports(capsys):
    assert main(["check", "--size", "48", "--fp32"]) == 0
    out = capsys.readouterr().out
    assert "engine: numpy" in out or "engine: cuda" in out
    for op in ("dgemm", "zgemm", "sgemm", "cgemm", "zfft3d"):
        assert op in out
    assert "FAIL" not in out


def test_check_result_compares_to_exact_reference():
    r = run_gemm_check(40, dtype=np.float64, samples=10)
    assert r.passed
    assert 0 <= r.error <= 2.0**-52 < r.native_error  # ozfft beats native float64 here


def test_check_flags_too_few_moduli():
    r = run_gemm_check(40, dtype=np.float64, moduli=6, samples=10)
    assert not r.passed and r.error > 1e-6


def test_bad_size(capsys):
    assert main(["check", "--size", "0"]) == 2
    assert "--size must be >= 1" in capsys.readouterr().err


def test_engine_env(monkeypatch):
    monkeypatch.setenv("OZFFT_ENGINE", "tpu")
    with pytest.raises(ValueError, match="OZFFT_ENGINE must be 'numpy' or 'cuda', not 'tpu'"):
        config.forced_engine()


def test_chunk_env_and_result_independent_of_chunking(monkeypatch, rng):
    import ozfft

    a = rng.standard_normal((30, 20))
    b = rng.standard_normal((20, 17))
    ref = ozfft.matmul(a, b)
    monkeypatch.setenv("OZFFT_CHUNK", "7")
    np.testing.assert_array_equal(ozfft.matmul(a, b), ref)
    monkeypatch.setenv("OZFFT_CHUNK", "0")
    with pytest.raises(ValueError, match="OZFFT_CHUNK must be a positive integer"):
        ozfft.matmul(a, b)


@pytest.mark.parametrize(
    ("name", "switch", "bad"),
    [
        ("OZFFT_FUSED_SMALL", "fused_small_products", "yes"),
        ("OZFFT_SLICES", "small_product_slices", "on"),
        ("OZFFT_CUTLASS", "cutlass_phase_a", "off"),
    ],
)
def test_switch_envs_are_validated(monkeypatch, name, switch, bad):
    """The on/off variables: on when unset, off with 0, anything but 0 or 1 an error."""
    from ozfft import config

    read = getattr(config, switch)
    monkeypatch.delenv(name, raising=False)
    assert read()
    monkeypatch.setenv(name, "0")
    assert not read()
    monkeypatch.setenv(name, bad)
    with pytest.raises(ValueError, match=f"{name} must be 0 or 1, not '{bad}'"):
        read()


def test_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("OZFFT_CACHE_DIR", str(tmp_path))
    assert config.cache_dir() == tmp_path
    monkeypatch.delenv("OZFFT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert config.cache_dir() == tmp_path / "ozfft"


def test_workspace_env(monkeypatch):
    monkeypatch.setenv("OZFFT_WORKSPACE", "-5")
    with pytest.raises(ValueError, match="OZFFT_WORKSPACE must be a positive number of bytes"):
        config.workspace_limit()
    monkeypatch.setenv("OZFFT_WORKSPACE", "4096")
    assert config.workspace_limit() == 4096
    monkeypatch.delenv("OZFFT_WORKSPACE")
    assert config.workspace_limit() is None


def test_bench_gemm_shapes_are_validated(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "gemm", "--shapes", "12x0x4"])
    assert info.value.code == 2
    assert "shape must be N, MxNxK or BxMxNxK" in capsys.readouterr().err
    from ozfft.bench.gemm import parse_moduli, parse_shape

    assert parse_shape("64") == (64, 64, 64) and parse_shape("8x4x2") == (8, 4, 2)
    assert parse_shape("1000x64x32x16") == (1000, 64, 32, 16)
    assert parse_moduli("15") == 15 and parse_moduli("Guaranteed") is None
    with pytest.raises(SystemExit):
        main(["bench", "gemm", "--moduli", "fifteen"])
    assert "moduli are a count or 'guaranteed'" in capsys.readouterr().err


def test_bench_gemm_takes_phase_a(capsys):
    from ozfft.bench.gemm import HEADER, row
    from ozfft.cli import build_parser

    assert build_parser().parse_args(["bench", "gemm"]).phase_a == [None]
    args = build_parser().parse_args(["bench", "gemm", "--phase-a", "fp8", "int8"])
    assert args.phase_a == ["fp8", "int8"]
    with pytest.raises(SystemExit):
        main(["bench", "gemm", "--phase-a", "int4"])
    assert "invalid choice: 'int4'" in capsys.readouterr().err
    rec = {"op": "dgemm", "m": 8, "n": 8, "k": 8, "moduli": 15, "mode": "fast"}
    assert row(rec).startswith("| dgemm | 8 |") and row(dict(rec, phase_a="int8")) == row(rec)
    assert row(dict(rec, phase_a="fp8")).startswith("| dgemm (fp8) | 8 |")
    stacked = dict(rec, items=1000, moduli=16, guaranteed=True, plan="16")
    assert row(stacked).startswith("| dgemm | 1000 x 8 | 8 | 8 | 16, guaranteed | fast |")
    assert row(dict(rec, phases_ms={"guarantee": 3.25})).endswith("| 3.25 |")
    fused = row(dict(rec, phases_ms={"fused": 0.21, "guarantee": 3.25}))
    assert fused.endswith("| n/a | n/a | n/a | 0.21 | 3.25 |")  # residues, A, B, fused, plan
    assert row(rec).count("|") == HEADER.count("|")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed")
def test_bench_gemm_without_gpu_says_why(capsys):
    assert main(["bench", "gemm", "--shapes", "64"]) == 2
    assert "ozfft bench gemm: the CUDA engine needs cupy" in capsys.readouterr().err


def test_fft_check_against_long_double():
    from ozfft.check import run_fft_check

    r = run_fft_check(12)
    assert r.passed and 0 < r.error < 1.5 * r.native_error
    assert r.shape == "12x12x12" and "clongdouble" in r.reference


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed")
def test_bench_fft_without_gpu_says_why(capsys):
    assert main(["bench", "fft", "--sizes", "16"]) == 2
    assert "ozfft bench fft: the CUDA engine needs cupy" in capsys.readouterr().err


def test_bench_numpy_gemm_smoke(capsys, tmp_path):
    """`ozfft bench numpy-gemm` runs on the CPU and writes its JSON and table."""
    from ozfft import GemmOptions
    from ozfft.bench.numpy_gemm import HEADER
    from ozfft.bench.phases import PHASES

    argv = ["bench", "numpy-gemm", "--sizes", "24", "32", "--repeats", "1", "--modes", "fast"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert HEADER in out and "wrote" in out
    records = json.loads((tmp_path / "numpy_gemm.json").read_text())
    count = GemmOptions(mode="fast").num_moduli  # N numpy DGEMMs: Phase A's floor
    assert [(r["m"], r["mode"], r["moduli"]) for r in records] == [
        (24, "fast", count),
        (32, "fast", count),
    ]
    for r in records:
        assert r["ozfft_ms"] > 0 and r["n_native_ms"] > 0
        assert r["ratio_to_n_native"] == pytest.approx(r["ozfft_ms"] / r["n_native_ms"])
        assert tuple(r["phases_ms"])[:4] == PHASES  # measured or None, never missing
    table = (tmp_path / "numpy_gemm.md").read_text().splitlines()
    assert table[0] == HEADER and len(table) == 4
    assert table[2].startswith(f"| 24 | fast | {count} |")


def test_bench_numpy_gemm_rejects_bad_sizes(capsys, tmp_path):
    assert main(["bench", "numpy-gemm", "--sizes", "0", "--out", str(tmp_path)]) == 2
    assert "must be >= 1" in capsys.readouterr().err
    assert not (tmp_path / "numpy_gemm.json").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--cases", "dct"], "invalid choice: 'dct'"),
        (["--cases", "fft2", "--fft2-shapes", "1024"], "shape must be like 64x1024x1024"),
        (["--fft2-shapes", "64x0x8"], "shape must be like 64x1024x1024"),
        (["--phase-a", "fp4"], "invalid choice: 'fp4'"),
    ],
)
def test_bench_fft_arguments_are_validated(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(["bench", "fft", *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_bench_fft_accepts_the_campaign_table_options():
    from ozfft.cli import build_parser

    cases = ["--cases", "fftn", "rfftn", "fft2", "fft", "--sizes", "64", "128"]
    shapes = ["--fft2-shapes", "64x1024x1024", "--lengths", "262144", "1048576"]
    args = build_parser().parse_args(["bench", "fft", *cases, *shapes])
    assert args.cases == ["fftn", "rfftn", "fft2", "fft"] and args.sizes == [64, 128]
    assert args.fft2_shapes == [(64, 1024, 1024)] and args.lengths == [2**18, 2**20]
    assert args.max_error_size == 128 and args.max_error_length == 2**20
    assert args.phase_a == [None]  # OZFFT_PHASE_A, else auto
    args = build_parser().parse_args(["bench", "fft", "--phase-a", "int8", "fp8"])
    assert args.phase_a == ["int8", "fp8"]


def _run_module(module: str, *argv: str) -> subprocess.CompletedProcess:
    """``python -m <module> <argv>`` in a fresh interpreter in which ``import cupy`` fails."""
    code = (
        "import runpy, sys\n"
        "sys.modules['cupy'] = None\n"
        f"sys.argv = [{module!r}, *{list(argv)!r}]\n"
        f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


@pytest.mark.parametrize("campaign", ["fft", "gemm"])
def test_bench_module_main_says_why_without_gpu_as_the_cli_does(campaign, capsys, monkeypatch):
    """``python -m ozfft.bench.<campaign>`` runs the module's own main(): the same check
    and the same message as ``ozfft bench <campaign>`` (no detour through ozfft.cli)."""
    done = _run_module(f"ozfft.bench.{campaign}", "--seed", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"ozfft bench {campaign}: the CUDA engine needs cupy")
    assert "ozfft.cli" not in done.stderr and done.stdout == ""
    from ozfft.engines.select import cuda_engine

    cuda_engine.cache_clear()  # on a GPU machine an engine may already be cached
    monkeypatch.setitem(sys.modules, "cupy", None)
    try:
        assert main(["bench", campaign, "--seed", "1"]) == 2
    finally:
        cuda_engine.cache_clear()  # the next caller builds a real engine again
    assert capsys.readouterr().err == done.stderr


def test_bench_numpy_gemm_module_main_runs(tmp_path):
    argv = ["--sizes", "16", "--repeats", "1", "--modes", "fast", "--out", str(tmp_path)]
    done = _run_module("ozfft.bench.numpy_gemm", *argv)
    assert done.returncode == 0, done.stderr
    assert f"wrote {tmp_path / 'numpy_gemm.json'}" in done.stdout
    assert [r["m"] for r in json.loads((tmp_path / "numpy_gemm.json").read_text())] == [16]


# -- errors, help and defaults -----------------------------------------------------------


def test_bare_command_prints_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ozfft") and "check" in out and "bench" in out
    assert main(["bench"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ozfft bench") and "numpy-gemm" in out


@pytest.mark.parametrize(
    "argv, defaults",
    [
        (["check", "--help"], ["(default: 512)", "(default: fast)", "(default: 32)"]),
        (["bench", "numpy-gemm", "--help"], ["default: 0"]),
        (["bench", "all", "--help"], ["(default: [64, 128, 256, 512])"]),
    ],
)
def test_help_shows_defaults(capsys, argv, defaults):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for text in defaults:
        assert text in out, text


@pytest.mark.parametrize(
    "argv, start",
    [
        (["check", "--size", "x"], "ozfft check: error: argument --size: invalid int value"),
        (["nope"], "ozfft: error: argument COMMAND: invalid choice: 'nope'"),
        (["bench", "gemm", "--ops", "hgemm"], "ozfft bench gemm: error: argument --ops"),
    ],
)
def test_argument_errors_are_one_line(capsys, argv, start):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(start) and err.count("\n") == 1 and "usage:" not in err


def test_ozfft_errors_are_one_line(capsys, monkeypatch):
    import ozfft.cli
    from ozfft.errors import KernelCompileError

    def broken(args):
        raise KernelCompileError("gemm/phase_b.cu", "sm_90", "line 1: bad\nline 2: worse", None)

    monkeypatch.setattr(ozfft.cli, "_cmd_check", broken)
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ozfft: error: NVRTC could not compile kernel 'gemm/phase_b.cu'")
    assert err.count("\n") == 1 and "more lines" in err and "Traceback" not in err


def test_environment_errors_are_one_line_without_traceback():
    """A bad OZFFT_* value through the real entry point: one line, exit status 1."""
    env = {**os.environ, "OZFFT_ENGINE": "tpu"}
    done = subprocess.run(
        [sys.executable, "-m", "ozfft.cli", "check", "--size", "4"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == "ozfft: error: OZFFT_ENGINE must be 'numpy' or 'cuda', not 'tpu'\n"


# -- ozfft bench distributed -----------------------------------------------------------


def test_bench_distributed_is_listed_and_has_help(capsys):
    assert main(["bench"]) == 0
    assert "distributed" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["bench", "distributed", "--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: ozfft bench distributed")
    for text in ("mpiexec", "--weak WEAK", "(default: 512)", "(default: [1024])", "--largest"):
        assert text in out, text


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed")
def test_bench_distributed_without_gpu_says_why(capsys):
    pytest.importorskip("mpi4py")
    assert main(["bench", "distributed", "--weak", "8", "--strong"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ozfft bench distributed: the CUDA engine needs cupy")


def test_bench_distributed_runs_under_mpiexec_on_the_numpy_engine(tmp_path):
    """``mpiexec -n 4 ozfft bench distributed --engine numpy`` at tiny sizes over groups
    of 1 and 4 ranks, in a fresh folder: the default results folder, a record per case
    and group, the pocketfft slab transform as the independent reference, the model's
    bytes and the efficiencies."""
    pytest.importorskip("mpi4py")
    from .test_distributed import _mpiexec, mpi_env

    command = [_mpiexec(), "-n", "4", sys.executable, "-m", "ozfft.cli", "bench", "distributed"]
    argv = ["--engine", "numpy", "--weak", "8", "--balanced", "--strong", "12", "--largest", "16"]
    proc = subprocess.run(
        [*command, *argv, "--ranks", "1", "4", "--reps", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=mpi_env(),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = tmp_path / "bench" / "results" / f"cpu-{os.cpu_count() or 1}core-x4"
    result = json.loads((folder / "distributed.json").read_text())
    assert (result["world"], result["engine"]) == (4, "numpy")
    records = result["records"]
    got = [(r["case"], r["ranks"], tuple(r["shape"])) for r in records]
    assert got == [
        ("weak", 1, (8, 8, 8)),
        ("strong", 1, (12, 12, 12)),
        ("weak", 4, (32, 8, 8)),
        ("weak-balanced", 4, (16, 16, 8)),
        ("strong", 4, (12, 12, 12)),
        ("largest", 4, (16, 16, 16)),
    ]
    for r in records:
        assert "skipped" not in r
        assert 0 < r["relative_difference"] < 1e-14  # against numpy.fft's slab transform
        assert r["ozfft_ms"] > 0 and r["native_ms"] > 0 and r["exchange_ms"] >= 0
        assert ("ozfft_local_ms" in r) == (r["case"] != "largest")
    one = {r["case"]: r for r in records if r["ranks"] == 1}
    assert one["weak"]["bitwise_fftn"] and one["strong"]["bitwise_fftn"]
    # each rank sends all of its block but its own piece (complex128): (8, 8, 8) less
    # (8, 2, 8); (4, 16, 8) less (4, 4, 8); (3, 12, 12) less (3, 3, 12); (4, 16, 16) less
    # (4, 4, 16); nothing on one rank
    sent = [r["exchange_bytes"] for r in records]
    assert sent == [0, 0, 8 * 6 * 8 * 16, 4 * 12 * 8 * 16, 3 * 9 * 12 * 16, 4 * 12 * 16 * 16]
    weak4, balanced4, strong4 = records[2], records[3], records[4]
    for key in ("ozfft", "native"):
        t1 = one["weak"][f"{key}_ms"]
        assert weak4["efficiency"][key] == pytest.approx(t1 / weak4[f"{key}_ms"])
        assert balanced4["efficiency"][key] == pytest.approx(t1 / balanced4[f"{key}_ms"])
        t1, t4 = one["strong"][f"{key}_ms"], strong4[f"{key}_ms"]
        assert strong4["efficiency"][key] == pytest.approx(t1 / (4 * t4))
    assert weak4["efficiency"]["ozfft_vs_fftn"] == pytest.approx(
        one["weak"]["fftn_ms"] / weak4["ozfft_ms"]
    )
    table = (folder / "distributed.md").read_text()
    assert "| largest | 4 | 16×16×16 |" in table and "| weak-balanced | 4 | 16×16×8 |" in table
    assert "bitwise equal to ozfft.fftn" in table


def test_bench_distributed_balanced_shapes_keep_n_cubed_per_rank():
    from ozfft.distributed.bench import balanced_shape

    assert balanced_shape(512, 1) == (512, 512, 512)
    assert balanced_shape(512, 2) == (1024, 512, 512)
    assert balanced_shape(512, 4) == (1024, 1024, 512)
    assert balanced_shape(512, 8) == (1024, 1024, 1024)
    assert balanced_shape(64, 12) == (192, 128, 128)  # 3 first, then 2, 2
    for g in range(1, 33):
        shape = balanced_shape(16, g)
        assert shape[0] * shape[1] * shape[2] == 16**3 * g and max(shape) <= 16 * max(2, g)


def test_cutlass_dir_env(monkeypatch, tmp_path):
    from ozfft import config

    monkeypatch.delenv("OZFFT_CUTLASS_DIR", raising=False)
    assert config.cutlass_include() is None
    monkeypatch.setenv("OZFFT_CUTLASS_DIR", str(tmp_path))
    assert config.cutlass_include() == tmp_path


def test_product_switches_are_what_small_products_read(monkeypatch):
    """config.product_switches (the key of matmul's prepared products) holds the raw value
    of every variable that the readers choosing a small product's path consult, and a
    change of any of them changes it."""
    import os

    from ozfft import config

    read_names, environ = set(), os.environ

    class Recording(dict):
        def get(self, name, default=None):
            read_names.add(name)
            return environ.get(name, default)

    monkeypatch.setattr(config.os, "environ", Recording())
    for reader in (config.phase_a_default, config.fused_small_products,
                   config.small_product_slices):  # fmt: skip
        reader()
    monkeypatch.undo()
    assert read_names == set(config._PRODUCT_SWITCHES)
    for name in read_names:
        monkeypatch.delenv(name, raising=False)
    before = config.product_switches()
    assert before == (None,) * len(read_names)
    for name, value in (("OZFFT_PHASE_A", "int8"), ("OZFFT_FUSED_SMALL", "0"),
                        ("OZFFT_SLICES", "1")):  # fmt: skip
        monkeypatch.setenv(name, value)
        after = config.product_switches()
        assert after != before and value in after
        before = after
