"""Building and caching the CUTLASS Phase A library (``ozfft/engines/cuda/cutlass_phase_a.py``)
with a stand-in nvcc: no GPU or CUDA toolkit needed."""

from __future__ import annotations

import logging
import os
import stat

import numpy as np
import pytest

from ozfft.engines.cuda import cutlass_phase_a as cpa
from ozfft.errors import KernelCompileError


@pytest.fixture()
def fake_cutlass(tmp_path, monkeypatch):
    """A CUTLASS include folder (``OZFFT_CUTLASS_DIR``) with the two headers the loader
    reads."""
    include = tmp_path / "include"
    (include / "cutlass").mkdir(parents=True)
    (include / "cutlass" / "cutlass.h").write_text("// stand-in\n")
    (include / "cutlass" / "version.h").write_text("#define CUTLASS_MAJOR 4\n")
    monkeypatch.setenv("OZFFT_CUTLASS_DIR", str(include))
    return include


def _fake_nvcc(tmp_path, monkeypatch, *, fail: bool = False):
    """A stand-in nvcc that answers --version, counts its builds in ``calls`` and writes
    ``-o``'s file (or fails with a message on stderr)."""
    calls = tmp_path / "calls"
    script = tmp_path / "nvcc"
    body = (
        "echo 'modp_igemm.cu(1): error: stand-in failure' >&2; exit 2"
        if fail
        else (
            'while [ "$#" -gt 0 ]; do if [ "$1" = -o ]; then out="$2"; fi; shift; done\n'
            'printf ELF > "$out"'
        )
    )
    lines = [
        "#!/bin/sh",
        'if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0"; exit 0; fi',
        f"echo x >> {calls}",
        body,
    ]
    script.write_text("\n".join(lines) + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(cpa, "_nvcc", lambda: str(script))
    cpa._nvcc_version.cache_clear()
    return calls


def test_include_dir_from_env(fake_cutlass, monkeypatch, tmp_path):
    assert cpa.cutlass_include_dir() == fake_cutlass
    monkeypatch.setenv("OZFFT_CUTLASS_DIR", str(tmp_path / "nowhere"))
    assert cpa.cutlass_include_dir() is None


def test_switch_off_is_the_reason(monkeypatch):
    monkeypatch.setenv("OZFFT_CUTLASS", "0")
    assert cpa.unavailable_reason(0) == "OZFFT_CUTLASS=0"
    assert cpa.modp_igemm(0) is None
    monkeypatch.setenv("OZFFT_CUTLASS", "yes")
    with pytest.raises(ValueError, match="OZFFT_CUTLASS must be 0 or 1, not 'yes'"):
        cpa.unavailable_reason(0)


def test_built_once_then_cached(fake_cutlass, tmp_path, monkeypatch):
    """The library is built once per key, written atomically with its sha256, and a
    damaged copy is built again (with a warning)."""
    calls = _fake_nvcc(tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    path = cpa.library_path(cache)
    assert path.read_bytes() == b"ELF"
    assert path.name.startswith("gemm-modp_igemm-sm_90a-") and path.suffix == ".so"
    assert cpa.library_path(cache) == path
    assert calls.read_text().count("x") == 1
    assert not [p for p in os.listdir(cache) if p.startswith((".tmp-", ".build-"))]
    path.write_bytes(b"damaged")
    assert cpa.library_path(cache) == path and path.read_bytes() == b"ELF"
    assert calls.read_text().count("x") == 2


def test_key_follows_cutlass_version(fake_cutlass, tmp_path, monkeypatch):
    """Another CUTLASS version header is another library."""
    _fake_nvcc(tmp_path, monkeypatch)
    first = cpa.library_path(tmp_path / "cache")
    (fake_cutlass / "cutlass" / "version.h").write_text("#define CUTLASS_MAJOR 5\n")
    assert cpa.library_path(tmp_path / "cache") != first


def test_nvcc_failure_is_a_compile_error(fake_cutlass, tmp_path, monkeypatch, caplog):
    """nvcc's log reaches the error; the engine's entry point logs it and returns None."""
    _fake_nvcc(tmp_path, monkeypatch, fail=True)
    with pytest.raises(KernelCompileError, match="nvcc could not compile") as info:
        cpa.library_path(tmp_path / "cache")
    assert "stand-in failure" in info.value.log and info.value.compiler == "nvcc"
    assert not list((tmp_path / "cache").glob("*.so"))
    monkeypatch.setattr(cpa, "unavailable_reason", lambda device: None)
    monkeypatch.setenv("OZFFT_CACHE_DIR", str(tmp_path / "cache"))
    cpa._device_igemm.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="ozfft"):
            assert cpa.modp_igemm(0) is None
        assert "could not be built; using cuBLAS" in caplog.text
    finally:
        cpa._device_igemm.cache_clear()


def test_flags_keep_wgmma_unserialized(fake_cutlass):
    """-DNDEBUG (device asserts are calls, which serialize wgmma) and the sm_90a target
    (wgmma needs the arch-specific one)."""
    flags = cpa.nvcc_flags(fake_cutlass)
    assert "-DNDEBUG" in flags and "-gencode=arch=compute_90a,code=sm_90a" in flags
    assert f"-I{fake_cutlass}" in flags


def _epilogue_mod(v, p, magic):
    """The epilogue's reduction (kernels/gemm/modp_igemm.cu, OzReduction) in uint64
    arithmetic: shift = ceil(log2 p) - 1, q(u) = umulhi(u, magic) >> shift, lift = p
    q(2**30 + p - 1), u = v + lift as uint32, r = u - q(u) p as uint32."""
    shift = np.uint64((p - 1).bit_length() - 1)

    def quotient(u):
        return ((u * np.uint64(magic)) >> np.uint64(32)) >> shift

    lift = int(quotient(np.uint64((1 << 30) + p - 1))) * p
    u = (v.astype(np.int64) + lift).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    return (u + quotient(u) * np.uint64((1 << 32) - p)) & np.uint64(0xFFFFFFFF)


@pytest.mark.parametrize("p", [2, 3, 5, 13, 17, 64, 65, 127, 128, 129, 173, 193, 251, 255, 256])
def test_epilogue_reduction_formula(p, rng):
    """For every |v| <= 2**30 (the ends, the multiples of p near them and 10**6 random
    sums) the epilogue's lift-multiply-high-shift-subtract gives v mod p."""
    (magic,) = cpa.modulus_magics((p,))
    edge = 1 << 30
    v = np.concatenate([
        np.arange(-edge, -edge + 600), np.arange(edge - 600, edge + 1), np.arange(-600, 600),
        rng.integers(-edge, edge + 1, 10**6),
    ])  # fmt: skip
    np.testing.assert_array_equal(_epilogue_mod(v, p, magic), np.mod(v, p))


def test_epilogue_quotient_is_exact_for_every_modulus():
    """The bound behind the reduction, for every modulus the kernel takes: magic < 2**32
    and u (magic p - 2**(31 + c)) < 2**(31 + c) for the largest u = 2**31 + p - 1, so
    floor(u magic / 2**(31 + c)) = floor(u / p) for every u in [0, 2**31 + p) (checked in
    exact integers at the largest u and at the multiples of p below it)."""
    magics = cpa.modulus_magics(tuple(cpa.MODP_IGEMM_MODULI))
    for p, magic in zip(cpa.MODP_IGEMM_MODULI, magics, strict=True):
        c = (p - 1).bit_length()
        assert 1 << 31 <= magic < 1 << 32
        error = magic * p - (1 << (31 + c))
        u_max = (1 << 31) + p - 1
        assert 0 <= error < p and u_max * error < 1 << (31 + c)
        top = u_max - u_max % p
        for u in (u_max, top, top - 1, 0, p - 1, p):
            assert (u * magic) >> (31 + c) == u // p


def test_epilogue_table_holds_the_magics_as_int32_bits():
    table = cpa.epilogue_table((256, 251, 197, 2))
    assert table.dtype == np.int32 and table.shape == (2, 4)
    assert table[0].tolist() == [256, 251, 197, 2]
    assert table[1].view(np.uint32).tolist() == cpa.modulus_magics((256, 251, 197, 2))


def test_moduli_outside_the_epilogue_range_are_refused():
    with pytest.raises(ValueError, match=r"moduli in \[2, 256\]"):
        cpa.modulus_magics((256, 257))


def test_library_path_without_cutlass_is_an_error(monkeypatch, tmp_path):
    """Asked to build with no CUTLASS headers found: an error naming what it needs."""
    monkeypatch.setenv("OZFFT_CUTLASS_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(RuntimeError, match="needs CUTLASS's headers and nvcc"):
        cpa.library_path(tmp_path / "cache")


def test_each_unavailable_reason_says_what_to_do(fake_cutlass, tmp_path, monkeypatch):
    """Not Hopper, no headers, no nvcc: each reason names the remedy (the device's
    capability stands in for a GPU)."""
    from ozfft.engines import base

    monkeypatch.delenv("OZFFT_CUTLASS", raising=False)
    monkeypatch.setattr(base, "compute_capability", lambda device=None: (8, 0))
    assert "compute capability 9.0 only" in cpa.unavailable_reason(0)
    monkeypatch.setattr(base, "compute_capability", lambda device=None: (9, 0))
    _fake_nvcc(tmp_path, monkeypatch)
    assert cpa.unavailable_reason(0) is None
    monkeypatch.setattr(cpa, "_nvcc", lambda: None)
    assert "nvcc was not found" in cpa.unavailable_reason(0)
    monkeypatch.setenv("OZFFT_CUTLASS_DIR", str(tmp_path / "nowhere"))
    reason = cpa.unavailable_reason(0)
    assert "pip install 'ozfft[cutlass]'" in reason and "OZFFT_CUTLASS_DIR" in reason
