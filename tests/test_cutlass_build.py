"""Building and caching the CUTLASS Phase A library (``ozfft/engines/cuda/cutlass_phase_a.py``)
with a stand-in nvcc: no GPU or CUDA toolkit needed."""

from __future__ import annotations

import logging
import os
import re
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


def _short_epilogue_mod(v, p, c, lift_c):
    """The short-k epilogue's remainder (kernels/gemm/modp_igemm.cu, OzFastModP) in uint64
    arithmetic: w = (c v + lift_c) mod 2**32, r = umulhi(w, p)."""
    w = (v.astype(np.int64).astype(np.uint64) * np.uint64(c) + np.uint64(lift_c)) & np.uint64(
        0xFFFFFFFF
    )
    return (w * np.uint64(p)) >> np.uint64(32)


@pytest.mark.parametrize("p", [2, 3, 5, 13, 17, 64, 65, 97, 127, 128, 129, 241, 251, 255, 256])
def test_short_epilogue_remainder_formula(p, rng):
    """For every |v| <= 2**23 (sums of at most MODP_IGEMM_SHORT_K products of residues in
    [-128, 128]: the ends, the multiples of p near them and 10**6 random sums) the
    two-instruction remainder gives v mod p."""
    assert cpa.MODP_IGEMM_SHORT_SUM == 1 << 23
    (c,), (lift_c,) = cpa.remainder_constants((p,))
    edge = 1 << 23
    v = np.concatenate([
        np.arange(-edge, -edge + 600), np.arange(edge - 600, edge + 1), np.arange(-600, 600),
        rng.integers(-edge, edge + 1, 10**6),
    ])  # fmt: skip
    np.testing.assert_array_equal(_short_epilogue_mod(v, p, c, lift_c), np.mod(v, p))


@pytest.mark.parametrize("p", [255, 251, 256, 97])
def test_short_epilogue_remainder_is_exact_on_every_sum(p):
    """Every sum the short kernel can meet, |v| <= 2**23, for three moduli (all 2**24 + 1)."""
    (c,), (lift_c,) = cpa.remainder_constants((p,))
    v = np.arange(-(1 << 23), (1 << 23) + 1, dtype=np.int64)
    assert np.array_equal(_short_epilogue_mod(v, p, c, lift_c), np.mod(v, p))


def test_short_epilogue_pair_is_two_remainders_for_every_modulus(rng):
    """The tile-store epilogue packs two sums as (v0 mod p) | (v1 mod p) << 8, taking the
    second from umulhi(w1, 256 p) & 0xff00 (kernels/gemm/modp_igemm.cu, OzShortReduction::
    pair): for every modulus from 2 to 256, on the ends of |v| <= 2**23, the multiples of p
    near 0 and 2**14 random sums, that is 256 (v1 mod p) (p << 8 fits 32 bits)."""
    moduli = tuple(cpa.MODP_IGEMM_MODULI)
    cs, lift_cs = cpa.remainder_constants(moduli)
    edge = 1 << 23
    v = np.concatenate([
        np.arange(-edge, -edge + 300), np.arange(edge - 300, edge + 1), np.arange(-300, 300),
        rng.integers(-edge, edge + 1, 1 << 14),
    ])  # fmt: skip
    for p, c, lift_c in zip(moduli, cs, lift_cs, strict=True):
        w = (v.astype(np.uint64) * np.uint64(c) + np.uint64(lift_c)) & np.uint64(0xFFFFFFFF)
        high = ((w * np.uint64(p << 8)) >> np.uint64(32)) & np.uint64(0xFF00)
        np.testing.assert_array_equal(high, np.mod(v, p) << 8, err_msg=f"modulus {p}")


def test_short_epilogue_bound_holds_for_every_modulus():
    """The bound behind the remainder for every modulus the kernel takes: with c =
    (2**32 + e) / p, w = (c u) mod 2**32 gives umulhi(w, p) = u mod p when e (u + p) <
    2**32; u = v + lift lies in [0, 2**24 + p) for |v| <= 2**23, since lift = p ceil(2**23 /
    p) is in [2**23, 2**23 + p); and (c lift) mod 2**32 is what the table holds."""
    moduli = tuple(cpa.MODP_IGEMM_MODULI)
    cs, lift_cs = cpa.remainder_constants(moduli)
    for p, c, lift_c in zip(moduli, cs, lift_cs, strict=True):
        e = c * p - (1 << 32)
        lift = p * -(-(1 << 23) // p)
        assert 0 <= e < p and c < 1 << 32 and 1 << 23 <= lift < (1 << 23) + p
        u_max = (1 << 23) + lift
        assert e * (u_max + p) < 1 << 32
        assert lift_c == (c * lift) % (1 << 32)


def test_epilogue_table_holds_the_constants_as_int32_bits():
    """The table's rows, as bits, against values worked out by hand: magic(255) =
    ceil(2**39 / 255), magic(2) = magic(256) = 2**31; c(255) = ceil(2**32 / 255), and c
    lift = 16843010 * 255 * 32897 mod 2**32 (lift = 255 ceil(2**23 / 255))."""
    table = cpa.epilogue_table((256, 255, 2))
    assert table.dtype == np.int32 and table.shape == (4, 3)
    bits = table.view(np.uint32)
    assert bits[0].tolist() == [256, 255, 2]
    assert bits[1].tolist() == [2**31, 2155905153, 2**31]
    assert bits[2].tolist() == [2**24, 16843010, 2**31]
    assert bits[3].tolist() == [0, 8355838, 0]


def test_short_k_is_the_sources_own():
    """MODP_IGEMM_SHORT_K is the kernel source's OZ_MODP_SHORT_K (the host's lift and the
    device's dispatch rest on the same bound)."""
    from ozfft.engines.cuda.sources import kernel_dir

    source = (kernel_dir() / cpa.MODP_IGEMM_SOURCE).read_text()
    (value,) = re.findall(r"^#define OZ_MODP_SHORT_K (\d+)$", source, flags=re.M)
    assert int(value) == cpa.MODP_IGEMM_SHORT_K


def test_moduli_outside_the_epilogue_range_are_refused():
    for constants in (cpa.modulus_magics, cpa.remainder_constants, cpa.epilogue_table):
        with pytest.raises(ValueError, match=r"moduli in \[2, 256\]"):
            constants((256, 257))


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
