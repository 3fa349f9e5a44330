"""Kernel sources ship with the package; the compile-cache key covers what changes a
cubin; missing GPU pieces give errors that say what to install (no GPU needed)."""

from __future__ import annotations

import importlib.util

import pytest

from ozfft import DeviceUnavailableError
from ozfft.engines.cuda import compiler
from ozfft.engines.cuda.sources import kernel_dir, kernel_files


def test_kernel_sources_present():
    names = {p.name for p in kernel_files()}
    assert {"ozaki_common.cuh", "scaling.cu", "residues.cu", "phase_b.cu"} <= names
    assert kernel_dir().is_dir()


def test_cache_key_covers_source_macros_arch_and_nvrtc():
    base = compiler.cache_key("phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.0")
    assert base == compiler.cache_key("phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.0")
    variants = [
        compiler.cache_key("residues.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.0"),
        compiler.cache_key("phase_b.cu", {"OZ_NUM_MODULI": "15"}, "sm_90", "13.0"),
        compiler.cache_key(
            "phase_b.cu", {"OZ_NUM_MODULI": "16", "OZ_OUT_FLOAT": "1"}, "sm_90", "13.0"
        ),
        compiler.cache_key("phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_100", "13.0"),
        compiler.cache_key("phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.1"),
    ]
    assert len({base, *variants}) == 6


def test_cache_key_covers_headers(monkeypatch, tmp_path):
    for path in kernel_files():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(compiler, "kernel_files", lambda: sorted(tmp_path.iterdir()))
    before = compiler.cache_key("phase_b.cu", {}, "sm_90", "13.0")
    header = tmp_path / "ozaki_common.cuh"
    header.write_text(header.read_text() + "\n// edited\n")
    assert compiler.cache_key("phase_b.cu", {}, "sm_90", "13.0") != before


def test_atomic_write(tmp_path):
    target = tmp_path / "sub" / "x.cubin"
    compiler._atomic_write(target, b"abc")
    assert target.read_bytes() == b"abc"
    assert [p.name for p in target.parent.iterdir()] == ["x.cubin"]


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed")
def test_no_cupy_says_what_to_install(monkeypatch):
    from ozfft.engines import select

    select.cuda_engine.cache_clear()
    with pytest.raises(DeviceUnavailableError, match=r"pip install 'ozfft\[cuda\]'"):
        select.cuda_engine()
    monkeypatch.setenv("OZFFT_ENGINE", "cuda")
    with pytest.raises(DeviceUnavailableError, match="needs cupy"):
        select.best_engine_name()
    monkeypatch.setenv("OZFFT_ENGINE", "numpy")
    assert select.best_engine_name() == "numpy"
