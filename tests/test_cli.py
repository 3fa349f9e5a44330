"""The ``ozfft`` command and configuration errors."""

from __future__ import annotations

import importlib.util

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
    assert "shape must be N or MxNxK" in capsys.readouterr().err


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
