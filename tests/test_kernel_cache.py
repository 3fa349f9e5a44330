"""Kernel sources ship with the package, one folder per area; the compile-cache key of a
source covers exactly its own include closure and what else changes a cubin; cached
cubins are verified and recompiled when damaged; NVRTC failures and missing GPU pieces
give errors that say what happened (no GPU needed: NVRTC is replaced by a fake)."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ozfft import DeviceUnavailableError, OzfftError
from ozfft.engines.cuda import compiler
from ozfft.engines.cuda.constants import (
    NO_MACROS,
    Macros,
    moduli_macros,
    phase_b_macros,
    scaling_macros,
)
from ozfft.engines.cuda.sources import (
    include_closure,
    kernel_dir,
    kernel_files,
    resolve_source,
    source_stem,
)
from ozfft.errors import KernelCompileError
from ozfft.ozaki.moduli import INT8_MODULI
from ozfft.ozaki.residue_system import ResidueSystem, gaussian_system, int8_system

# -- the shipped tree ----------------------------------------------------------------


def _rel(paths, root):
    return {p.relative_to(root).as_posix() for p in paths}


def test_kernel_sources_present_by_area():
    root = kernel_dir()
    names = _rel(kernel_files(), root)
    assert {
        "common/ozaki_common.cuh",
        "gemm/scaling.cu",
        "gemm/residues.cu",
        "gemm/phase_b.cu",
        "probes/ceilings.cu",
    } <= names
    assert not list(root.glob("*.cu")) and not list(root.glob("*.cuh"))  # all in areas


def test_shipped_include_closures():
    common = "common/ozaki_common.cuh"
    assert include_closure("gemm/residues.cu") == (common, "gemm/residues.cu")
    scaling = "gemm/scaling.cu"
    assert include_closure(scaling) == ("common/block_reduce.cuh", common, scaling)
    assert include_closure("gemm/guarantee.cu") == (common, "gemm/guarantee.cu")
    assert include_closure("gemm/phase_b.cu") == (
        common,
        "gemm/output_format.cuh",
        "gemm/phase_b.cu",
        "gemm/phase_b_bytes.cuh",  # (included under OZ_PB_DP4A: in the key)
    )
    rows = "gemm/warp_row_stats.cuh"
    small = "gemm/small_product.cu"
    carry = "gemm/diagonal_carry.cuh"  # (included under OZ_SP_COMPLEX_SLICES: in the key)
    assert include_closure(small) == (common, carry, "gemm/output_format.cuh", small, rows)
    assert include_closure("gemm/plan_probe.cu") == (common, "gemm/plan_probe.cu", rows)
    assert include_closure("probes/ceilings.cu") == ("probes/ceilings.cu",)


def test_bare_names_resolve_to_their_area():
    """Bench code still passes "ceilings.cu"/"phase_b.cu": unique names keep working."""
    assert resolve_source("ceilings.cu") == "probes/ceilings.cu"
    assert resolve_source("phase_b.cu") == "gemm/phase_b.cu"
    assert resolve_source("gemm/phase_b.cu") == "gemm/phase_b.cu"
    assert resolve_source("gemm/./phase_b.cu") == "gemm/phase_b.cu"
    with pytest.raises(FileNotFoundError, match=r"nothing\.cu"):
        resolve_source("nothing.cu")
    with pytest.raises(ValueError, match="not a path inside"):
        resolve_source("../pyproject.toml")


def test_ambiguous_bare_name_is_refused(tmp_path):
    for area in ("gemm", "fft", "common"):
        (tmp_path / area).mkdir()
        (tmp_path / area / "stage.cu").write_text("// x\n")
    with pytest.raises(ValueError, match="ambiguous"):
        resolve_source("stage.cu", tmp_path)
    assert resolve_source("fft/stage.cu", tmp_path) == "fft/stage.cu"


def test_cache_file_stem_keeps_the_area():
    assert source_stem("gemm/phase_b.cu") == "gemm-phase_b"
    assert source_stem("probes/ceilings.cu") == "probes-ceilings"


# -- cache key -----------------------------------------------------------------------


def test_cache_key_covers_source_macros_arch_and_nvrtc():
    key = compiler.cache_key
    base = key("gemm/phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.0")
    assert base == key("gemm/phase_b.cu", Macros({"OZ_NUM_MODULI": "16"}), "sm_90", "13.0")
    assert base == key("phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.0")  # same file
    variants = [
        key("gemm/residues.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.0"),
        key("gemm/phase_b.cu", {"OZ_NUM_MODULI": "15"}, "sm_90", "13.0"),
        key("gemm/phase_b.cu", {"OZ_NUM_MODULI": "16", "OZ_OUT_FLOAT": "1"}, "sm_90", "13.0"),
        key("gemm/phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_100", "13.0"),
        key("gemm/phase_b.cu", {"OZ_NUM_MODULI": "16"}, "sm_90", "13.1"),
    ]
    assert len({base, *variants}) == 6


def test_cache_key_covers_ozfft_version(monkeypatch):
    before = compiler.cache_key("gemm/phase_b.cu", {}, "sm_90", "13.0")
    monkeypatch.setattr(compiler, "__version__", "0.0.0+other")
    assert compiler.cache_key("gemm/phase_b.cu", {}, "sm_90", "13.0") != before


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def kernel_tree(tmp_path):
    """A small kernels folder: areas, a header including a sibling, an fft area."""
    root = tmp_path / "kernels"
    _write(root, "common/base.cuh", "#pragma once\n#define BASE 1\n")
    _write(root, "common/extra.cuh", '#pragma once\n#include "base.cuh"\n')  # sibling
    _write(root, "gemm/x.cu", '#include "common/extra.cuh"\nextern "C" void x() {}\n')
    _write(root, "gemm/y.cu", '  #  include "common/base.cuh"\n// #include "fft/tw.cuh"x\n')
    _write(root, "fft/tw.cuh", "#pragma once\n")
    _write(root, "fft/z.cu", '#include "common/base.cuh"\n#include "fft/tw.cuh"\n')
    _write(root, "probes/p.cu", '#include <cuda_fp16.h>\n#include "not_ours.h"\n')
    return root


SOURCES = ("gemm/x.cu", "gemm/y.cu", "fft/z.cu", "probes/p.cu")


def _keys(root: Path) -> dict[str, str]:
    return {s: compiler.cache_key(s, NO_MACROS, "sm_90", "13.0", root=root) for s in SOURCES}


def test_include_closure_follows_headers(kernel_tree):
    assert include_closure("gemm/x.cu", kernel_tree) == (
        "common/base.cuh",
        "common/extra.cuh",
        "gemm/x.cu",
    )
    # a commented-out include is not an include
    assert include_closure("gemm/y.cu", kernel_tree) == ("common/base.cuh", "gemm/y.cu")
    assert include_closure("fft/z.cu", kernel_tree) == (
        "common/base.cuh",
        "fft/tw.cuh",
        "fft/z.cu",
    )
    assert include_closure("probes/p.cu", kernel_tree) == ("probes/p.cu",)


@pytest.mark.parametrize(
    ("edited", "changed"),
    [
        ("common/base.cuh", {"gemm/x.cu", "gemm/y.cu", "fft/z.cu"}),
        ("common/extra.cuh", {"gemm/x.cu"}),
        ("fft/tw.cuh", {"fft/z.cu"}),
        ("probes/p.cu", {"probes/p.cu"}),
        ("gemm/y.cu", {"gemm/y.cu"}),
    ],
)
def test_editing_a_file_changes_exactly_the_keys_that_include_it(kernel_tree, edited, changed):
    before = _keys(kernel_tree)
    path = kernel_tree / edited
    path.write_text(path.read_text() + "// edited\n")
    after = _keys(kernel_tree)
    assert {s for s in SOURCES if before[s] != after[s]} == changed


def test_unrelated_new_file_keeps_every_key(kernel_tree):
    before = _keys(kernel_tree)
    _write(kernel_tree, "fft/new_stage.cu", '#include "common/base.cuh"\n')
    assert _keys(kernel_tree) == before


def test_shipped_probe_edit_leaves_gemm_keys(tmp_path):
    """A change to probes/ceilings.cu must not recompile gemm/phase_b.cu, and back."""
    root = tmp_path / "kernels"
    shutil.copytree(kernel_dir(), root)
    macros = phase_b_macros(int8_system(8), out_float=False)

    def keys():
        return (
            compiler.cache_key("gemm/phase_b.cu", macros, "sm_90", "13.0", root=root),
            compiler.cache_key("probes/ceilings.cu", NO_MACROS, "sm_90", "13.0", root=root),
        )

    gemm, probe = keys()
    with open(root / "probes/ceilings.cu", "a") as f:
        f.write("// faster probe\n")
    gemm2, probe2 = keys()
    assert gemm2 == gemm and probe2 != probe
    with open(root / "common/ozaki_common.cuh", "a") as f:
        f.write("// edited\n")
    gemm3, probe3 = keys()
    assert gemm3 != gemm2 and probe3 == probe2


# -- cache files: verification, damage, directory mode ---------------------------------


class FakeNvrtc:
    """Stands in for NVRTC: records each compile, returns bytes naming the input."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, text: str, name: str, arch: str, root: Path) -> bytes:
        self.calls.append((name, arch))
        return f"cubin of {name} for {arch}\n{text}".encode()


@pytest.fixture
def fake_nvrtc(monkeypatch):
    fake = FakeNvrtc()
    monkeypatch.setattr(compiler, "_nvrtc_compile", fake)
    return fake


def _cubin(kernel_tree, cache, source="gemm/x.cu", macros=NO_MACROS):
    return compiler.cached_cubin(
        source, macros, "sm_90", nvrtc="13.0", root=kernel_tree, directory=cache
    )


def test_cubin_compiled_once_with_checksum(kernel_tree, tmp_path, fake_nvrtc):
    cache = tmp_path / "cache"
    path = _cubin(kernel_tree, cache)
    assert path.name.startswith("gemm-x-sm_90-") and path.suffix == ".cubin"
    digest = path.with_name(path.name + ".sha256")
    assert digest.read_text().strip() == hashlib.sha256(path.read_bytes()).hexdigest()
    assert _cubin(kernel_tree, cache) == path
    assert fake_nvrtc.calls == [("gemm/x.cu", "sm_90")]
    assert not list(cache.glob(".tmp-*"))
    # one file per source path, never shared between areas
    other = _cubin(kernel_tree, cache, "fft/z.cu")
    assert other.name.startswith("fft-z-sm_90-") and other != path


def test_cubin_built_from_prologue_and_source(kernel_tree, tmp_path, fake_nvrtc):
    path = _cubin(kernel_tree, tmp_path, macros={"OZ_B": "2", "OZ_A": "1"})
    text = path.read_bytes().decode().split("\n", 1)[1]
    assert text == "#define OZ_A 1\n#define OZ_B 2\n" + (kernel_tree / "gemm/x.cu").read_text()


@pytest.mark.parametrize("damage", ["flip", "truncate", "no_checksum", "bad_checksum"])
def test_damaged_cubin_is_recompiled(kernel_tree, tmp_path, fake_nvrtc, caplog, damage):
    path = _cubin(kernel_tree, tmp_path)
    good = path.read_bytes()
    digest = path.with_name(path.name + ".sha256")
    if damage == "flip":
        path.write_bytes(bytes([good[0] ^ 1]) + good[1:])
    elif damage == "truncate":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "no_checksum":
        digest.unlink()
    else:
        digest.write_text("0" * 64 + "\n")
    with caplog.at_level(logging.WARNING, logger="ozfft"):
        again = _cubin(kernel_tree, tmp_path)
    assert again == path and path.read_bytes() == good
    assert digest.read_text().strip() == hashlib.sha256(good).hexdigest()
    assert len(fake_nvrtc.calls) == 2
    assert "compiling it again" in caplog.text and path.name in caplog.text
    assert compiler.verify_cubin(path) is None


def test_cache_dir_created_private(tmp_path, fake_nvrtc, kernel_tree):
    old = os.umask(0o022)
    try:
        cache = tmp_path / "a" / "cache"
        _cubin(kernel_tree, cache)
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        assert stat.S_IMODE(compiler.ensure_cache_dir(tmp_path / "b").stat().st_mode) == 0o700
    finally:
        os.umask(old)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_open_cache_dir_of_ours_is_tightened(tmp_path, caplog):
    cache = tmp_path / "shared"
    cache.mkdir()
    os.chmod(cache, 0o777)
    with caplog.at_level(logging.WARNING, logger="ozfft"):
        compiler.ensure_cache_dir(cache)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert "writable by group/others" in caplog.text
    os.chmod(cache, 0o750)  # readable by the group, writable by no one else: left alone
    compiler.ensure_cache_dir(cache)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o750


def test_atomic_write(tmp_path):
    target = tmp_path / "sub" / "x.cubin"
    compiler._atomic_write(target, b"abc")
    assert target.read_bytes() == b"abc"
    assert [p.name for p in target.parent.iterdir()] == ["x.cubin"]


# -- compile errors ------------------------------------------------------------------

NVRTC_LOG = 'gemm/x.cu(2): error: identifier "oops" is undefined\n1 error detected'


def test_compile_error_shows_log_and_dump(kernel_tree, tmp_path, monkeypatch):
    def failing(text, name, arch, root):
        raise RuntimeError(f"NVRTC_ERROR_COMPILATION (6), compilation log:\n\n{NVRTC_LOG}")

    monkeypatch.setattr(compiler, "_nvrtc_compile", failing)
    macros = Macros({"OZ_NUM_MODULI": "4"})
    with pytest.raises(KernelCompileError) as info:
        _cubin(kernel_tree, tmp_path, macros=macros)
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, OzfftError)
    assert NVRTC_LOG in str(err) and "gemm/x.cu" in str(err) and "sm_90" in str(err)
    dump = Path(err.dump_path)
    assert str(dump) in str(err)
    assert dump.parent == tmp_path and dump.name.startswith("failed-gemm-x-")
    assert dump.read_text() == macros.prologue + (kernel_tree / "gemm/x.cu").read_text()
    assert not list(tmp_path.glob("*.cubin"))  # nothing cached


def test_missing_toolkit_is_not_a_compile_error(kernel_tree, tmp_path, monkeypatch):
    def missing(text, name, arch, root):
        raise DeviceUnavailableError("install cuda-python")

    monkeypatch.setattr(compiler, "_nvrtc_compile", missing)
    with pytest.raises(DeviceUnavailableError, match="install cuda-python") as info:
        _cubin(kernel_tree, tmp_path)
    assert not isinstance(info.value, KernelCompileError)
    assert not list(tmp_path.glob("failed-*"))


@pytest.mark.skipif(importlib.util.find_spec("cuda") is not None, reason="cuda-python present")
def test_real_compile_without_cuda_python_says_what_to_install(kernel_tree, tmp_path):
    with pytest.raises(DeviceUnavailableError, match=r"pip install 'ozfft\[cuda\]'"):
        _cubin(kernel_tree, tmp_path)


# -- macros ----------------------------------------------------------------------------


def test_macro_sets_are_built_once():
    assert scaling_macros() is scaling_macros()
    a = moduli_macros(int8_system(16), with_limbs=True)
    equal = ResidueSystem("int8", INT8_MODULI[:16], (1,) * 16, 128, 31)  # not the cached one
    assert equal is not int8_system(16)
    assert a is moduli_macros(equal, with_limbs=True)  # keyed on equal moduli
    assert a is not moduli_macros(int8_system(16), with_limbs=False)
    assert a is not moduli_macros(int8_system(15), with_limbs=True)
    single = phase_b_macros(int8_system(16), out_float=True)
    assert single is phase_b_macros(int8_system(16), out_float=True)
    assert phase_b_macros(int8_system(16), out_float=False) is a
    assert dict(single) == {**a, "OZ_OUT_FLOAT": "1"}
    # a Gaussian system of as many moduli is another set, with its roots and inverses
    gauss = gaussian_system(int8_system(15).budget_bits)
    assert gauss.count == 16
    g = moduli_macros(gauss, with_limbs=True)
    assert g is not a and "OZ_GAUSSIAN" in g and "OZ_GAUSSIAN" not in a
    assert g["OZ_MODULI"].startswith("241,233,229,221") and g["OZ_NUM_MODULI"] == "16"
    j, inv2, inv2j = gauss.roots[0]
    assert g["OZ_GAUSS_ROOT"].split(",")[0] == f"({j})" and g["OZ_GAUSS_INV2"].startswith(
        f"{inv2},"
    )
    assert g["OZ_GAUSS_INV2J"].startswith(f"{inv2j},")


def test_macros_are_immutable_sorted_and_hashable():
    m = Macros({"OZ_B": "2", "OZ_A": "1"})
    assert m.pairs == (("OZ_A", "1"), ("OZ_B", "2"))
    assert m.prologue == "#define OZ_A 1\n#define OZ_B 2\n"
    assert m == {"OZ_A": "1", "OZ_B": "2"} and hash(m) == hash(Macros(m.pairs))
    with pytest.raises(TypeError):
        m["OZ_C"] = "3"  # type: ignore[index]
    assert (m | {"OZ_A": "9"})["OZ_A"] == "9" and m["OZ_A"] == "1"
    assert ({"OZ_C": "3"} | m).pairs[-1] == ("OZ_C", "3")
    assert ({"OZ_A": "9", "OZ_C": "3"} | m)["OZ_A"] == "1"  # the right operand wins
    # a union is built once per pair of operands: the same object on every launch path call
    assert (m | {"OZ_A": "9"}) is (m | {"OZ_A": "9"}) is (m | Macros({"OZ_A": "9"}))
    assert (m | {"OZ_A": 9}) == (m | {"OZ_A": "9"})
    assert repr(m) == "Macros({'OZ_A': '1', 'OZ_B': '2'})"
    with pytest.raises(ValueError, match="defined twice"):
        m | {1: "x", "1": "y"}  # names as strings: the same macro twice
    assert moduli_macros(int8_system(4), with_limbs=False)["OZ_MODULI"] == "256,255,253,251"


def test_get_function_passes_cached_macros_unchanged(monkeypatch):
    seen = []

    class Module:
        def get_function(self, name):
            return name

    def load_module(source, macros, device_id):
        seen.append((source, macros, device_id))
        return Module()

    fake_cupy = SimpleNamespace(cuda=SimpleNamespace(Device=lambda: SimpleNamespace(id=3)))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(compiler, "load_module", load_module)
    macros = phase_b_macros(int8_system(8), out_float=False)
    assert compiler.get_function("gemm/phase_b.cu", "oz_reconstruct_real", macros) == (
        "oz_reconstruct_real"
    )
    assert seen[0][1] is macros and seen[0][2] == 3
    compiler.get_function("probes/ceilings.cu", "oz_probe_imad", {"OZ_X": "1"})
    assert isinstance(seen[1][1], Macros) and seen[1][1] == {"OZ_X": "1"}


# -- CUDA engine pieces that need no GPU -----------------------------------------------


def test_cuda_event_clock_records_on_current_stream_and_waits():
    from ozfft.engines.cuda.engine import CudaEventClock

    log = []

    class Event:
        def record(self, stream):
            log.append(("record", stream))

        def synchronize(self):
            log.append(("sync", self))

    fake = SimpleNamespace(
        cuda=SimpleNamespace(
            Event=Event,
            get_current_stream=lambda: "current-stream",
            get_elapsed_time=lambda start, stop: 2.5,
        )
    )
    clock = CudaEventClock(fake)
    start, stop = clock.mark(), clock.mark()
    assert log == [("record", "current-stream"), ("record", "current-stream")]
    assert clock.elapsed_ms(start, stop) == 2.5
    assert log[-1] == ("sync", stop)


def test_cublas_enum_names():
    """The literals passed to cublasGemmEx, by the names of CUDA's headers."""
    from ozfft.engines.cuda import engine

    assert (engine.CUDA_R_8I, engine.CUDA_R_32I, engine.CUBLAS_GEMM_DEFAULT) == (3, 10, -1)


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


@pytest.mark.parametrize(
    "text, expected",
    [
        ("80", (8, 0)),
        ("89", (8, 9)),
        ("90", (9, 0)),
        ("100", (10, 0)),
        ("103", (10, 3)),
        ("120", (12, 0)),
    ],
)
def test_compute_capability_strings_of_every_generation(text, expected):
    """cupy reports the capability as one string; Blackwell's "100" and "120" have three
    digits, so the minor version is the last digit (and the kernels' arch is sm_100, ...)."""
    from ozfft.engines.select import parse_compute_capability

    assert parse_compute_capability(text) == expected


@pytest.mark.parametrize("text", ["", "9", "9.0", "sm_90", None])
def test_compute_capability_rejects_what_is_not_one(text):
    from ozfft.engines.select import parse_compute_capability

    with pytest.raises(ValueError, match="not a compute capability"):
        parse_compute_capability(text)
