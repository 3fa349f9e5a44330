"""The CUDA engine's FP8 Phase A (kernels/gemm/fp8_residues.cu, kernels/gemm/fp8_phase_a.cu):
exact at the k-block it uses, and bitwise equal to the NumPy engine given the same FP8
residue system (GPU tests, marked ``gpu``; they need compute capability 8.9 or later, except
the refusal test). The macro sets, the k-block bound and the device helpers of
kernels/common/ozaki_fp8.cuh (built for the host with g++) are checked without a GPU."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ozfft.engines.cuda.constants import (
    FP8_MAX_DIGITS,
    FP8_TILE_K,
    fp8_k_block,
    fp8_macros,
    fp8_pad_k,
    fp8_phase_b_macros,
)
from ozfft.engines.cuda.sources import kernel_dir
from ozfft.engines.numpy import phase_a as numpy_phase_a
from ozfft.engines.select import numpy_engine
from ozfft.ozaki.moduli import int_to_limbs
from ozfft.ozaki.residue_system import ResidueSystem, fp8_system, int8_system
from ozfft.reference import phi_matrix
from ozfft.scheme import gemm

SQUARES, CUBES = fp8_system(94), fp8_system(126)  # 11 squares; 7 cubes and 4 squares
SYSTEMS = pytest.mark.parametrize("system", [SQUARES, CUBES], ids=["squares", "cubes"])
CXX = shutil.which("g++") or shutil.which("c++")


def _single(base: int, digits: int) -> ResidueSystem:
    """One modulus ``base**digits`` (its own k-block: digits 2 -> 32736, 3 -> 21824)."""
    return ResidueSystem("fp8", (base,), (digits,), 16, 24)


def _largest(s: int, d: int) -> int:
    """A residue modulo s**d whose every digit is as large as base s allows: -16 ... -16, 16
    for s = 32 (products 256), h ... h (h = s // 2) for odd s (odd products h**2)."""
    if s % 2 == 0:
        return 16 * s ** (d - 1) - 16 * sum(s**j for j in range(d - 1))
    return (s // 2) * sum(s**j for j in range(d))


def _e4m3_value(b: np.ndarray) -> np.ndarray:
    """The value of e4m3 (OCP FP8 E4M3FN) bytes: sign, 4 exponent bits (bias 7), 3 mantissa
    bits; exponent 0 subnormal (the NaN pattern 0x7f / 0xff is never written here)."""
    b = np.asarray(b, np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e, f = (b >> 3) & 15, b & 7
    mag = np.where(e == 0, f / 8.0 * 2.0**-6, (1 + f / 8.0) * 2.0 ** (e - 7))
    assert not np.any((b & 0x7F) == 0x7F)
    return sign * mag


# -- without a GPU: macros, k-block, the digit helpers on the host ---------------------------


@pytest.mark.parametrize("system", [SQUARES, CUBES, fp8_system(64), _single(31, 1)])
def test_fp8_k_block_is_the_longest_exact_one(system):
    """The k-block is the longest multiple of the k-step whose sums stay below 2**24 for the
    system's longest digit count (one k-step more would not): the kernel's static_assert and
    ResidueSystem.max_k agree."""
    kb = fp8_k_block(system)
    d = max(system.digits)
    assert kb % FP8_TILE_K == 0 and kb <= system.max_k()
    assert 256 * d * kb < 2**24 <= 256 * d * (kb + FP8_TILE_K)
    macros = fp8_macros(system)
    assert int(macros["OZ_FP8_KBLOCK"]) == kb and int(macros["OZ_FP8_MAX_DIGITS"]) == d
    assert macros["OZ_MODULI"] == ",".join(map(str, system.moduli))
    assert macros["OZ_FP8_BASES"] == ",".join(map(str, system.bases))
    assert fp8_pad_k(1) == fp8_pad_k(32) == 32 and fp8_pad_k(33) == 64 and fp8_pad_k(0) == 0


@SYSTEMS
def test_fp8_phase_b_macros_hold_the_system(system):
    """Phase B's base-2**31 digits hold P and the weights, and are the system's; its moduli
    above 256 select full reductions; the INT8 sets' macros are a different, unchanged set
    (their cubins stay as they are)."""
    from ozfft.engines.cuda.constants import DIGIT_BITS, phase_b_macros

    for out_float in (False, True):
        macros = fp8_phase_b_macros(system, out_float=out_float)
        digits = int(macros["OZ_DIGITS"])
        assert system.product < 1 << (DIGIT_BITS * digits) <= system.product << DIGIT_BITS
        weights = [int(w) for w in macros["OZ_WEIGHT_DIGITS"].split(",")]
        for i, w in enumerate(system.weights):
            assert weights[i * digits : (i + 1) * digits] == int_to_limbs(w, DIGIT_BITS, digits)
        p_digits = [int(w) for w in macros["OZ_P_DIGITS"].split(",")]
        assert p_digits == int_to_limbs(system.product, DIGIT_BITS, digits)
        assert int(macros["OZ_MAX_MODULUS"]) == max(system.moduli) > 256
        assert ("OZ_OUT_FLOAT" in macros) == out_float
        assert macros["OZ_MODULI"] == ",".join(map(str, system.moduli))
    int8 = phase_b_macros(int8_system(16), out_float=False)
    assert int8["OZ_MODULI"] == ",".join(map(str, int8_system(16).moduli))


def test_fp8_macros_refuse_what_the_kernels_cannot_hold():
    with pytest.raises(ValueError, match="at most 3 digits"):
        fp8_macros(ResidueSystem("fp8", (7,), (4,), 16, 24))
    with pytest.raises(ValueError, match="24 exact bits"):
        fp8_macros(ResidueSystem("fp8", (7,), (2,), 16, 25))
    with pytest.raises(ValueError, match="not an FP8"):
        fp8_macros(ResidueSystem("int8", (7,), (1,), 128, 31))
    with pytest.raises(ValueError, match="base 34 has digits above 16"):
        fp8_macros(ResidueSystem("fp8", (34,), (2,), 16, 24))
    fp8_macros(ResidueSystem("fp8", (33,), (3,), 16, 24))  # m/2 = 16 (1 + 33 + 33**2): fits
    assert FP8_MAX_DIGITS == 3


@pytest.fixture(scope="module")
def host_fp8():
    """The host build of kernels/common/ozaki_fp8.cuh for a system (tests/host_harness_fp8.cpp)."""
    if CXX is None:
        pytest.skip("no host C++ compiler")
    libs: dict = {}

    def build(system: ResidueSystem, tmp: Path):
        if system not in libs:
            prologue = tmp / "prologue.h"
            prologue.write_text(fp8_macros(system).prologue)
            lib = tmp / "harness_fp8.so"
            src = Path(__file__).with_name("host_harness_fp8.cpp")
            subprocess.run(
                [CXX, "-O1", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", "-include",
                 str(prologue), f"-I{kernel_dir()}", str(src), "-o", str(lib)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            libs[system] = ctypes.CDLL(str(lib))
        return libs[system]

    return build


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


@pytest.mark.parametrize("system", [SQUARES, CUBES, _single(31, 1)], ids=["sq", "cu", "one"])
def test_fp8_digit_bytes_of_every_residue(host_fp8, system, tmp_path):
    """Every symmetric residue of every modulus: the kernels' e4m3 bytes decode to the digits
    of ResidueSystem.split_array (digits past d_i are +0)."""
    lib = host_fp8(system, tmp_path)
    d_max = max(system.digits)
    for i, m in enumerate(system.moduli):
        r = np.arange(-(m // 2), m // 2 + 1, dtype=np.int32)
        out = np.empty((r.size, d_max), np.uint8)
        lib.oz_host_fp8_digits(_ptr(r), ctypes.c_long(r.size), ctypes.c_int(i), _ptr(out))
        want = system.split_array(i, r)
        d = system.digits[i]
        np.testing.assert_array_equal(_e4m3_value(out[:, :d]).T, want)
        assert not out[:, d:].any()


@SYSTEMS
def test_fp8_kernel_residues_are_the_numpy_engines(host_fp8, system, tmp_path, rng):
    """The residue the FP8 kernel splits (ozaki_common.cuh's oz_residue with the system's
    2**24, 2**48 mod m_i) is the NumPy engine's, for |2**s x| up to 2**79."""
    from ozfft.engines.numpy.residues import residues as numpy_residues

    lib = host_fp8(system, tmp_path)
    n = 4000
    x = rng.standard_normal(n) * np.exp(rng.uniform(-30, 30, n))
    x[:5] = [0.0, -0.0, 5e-324, -1.5, 2.0**-1074]
    shifts = rng.integers(-100, 30, n).astype(np.int32)
    keep = np.abs(np.ldexp(x, shifts)) < 2.0**79
    x, shifts = np.ascontiguousarray(x[keep]), np.ascontiguousarray(shifts[keep])
    ref = numpy_residues(x[:, None], shifts.astype(np.int64), system).planes[:, :, 0]
    for i in range(system.count):
        out = np.empty(x.size, np.int32)
        lib.oz_host_fp8_residues(
            _ptr(x), _ptr(shifts), _ptr(out), ctypes.c_long(x.size), ctypes.c_int(i)
        )
        np.testing.assert_array_equal(out, ref[i])


# -- on a GPU -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def engine(cp):
    from ozfft.engines.base import compute_capability
    from ozfft.engines.select import cuda_engine

    major, minor = compute_capability()
    if (major, minor) < (8, 9):
        pytest.skip(f"no FP8 tensor cores (compute capability {major}.{minor})")
    return cuda_engine()


def _gpu_residues(engine, cp, x: np.ndarray, system):
    """Residue stack of integer-valued ``x`` (rows, k) on the GPU: shift 0 keeps it."""
    return engine.residues(cp.asarray(x, np.float64), cp.zeros(x.shape[0], cp.int32), system)


@pytest.mark.gpu
@pytest.mark.parametrize("base,digits", [(32, 2), (31, 2), (32, 3), (31, 3), (29, 3), (7, 3)])
def test_fp8_phase_a_is_exact_at_its_k_block(engine, cp, base, digits):
    """Worst-case digits (every digit product 256, or h**2 odd for odd bases), so every
    partial sum of P_t is as large as the k-block allows, for k from one k-step to 65537
    (several k-blocks): the GPU residues equal the exact product's modulo m. Rows and
    columns: monotone maximal sums, the same with one last product of 1 into P_1 (an odd sum
    just below the block's 2**24 bound), sums that rise and cancel back, and mixed signs."""
    system = _single(base, digits)
    m, kb = system.moduli[0], fp8_k_block(system)
    r = _largest(base, digits)
    assert np.abs(system.split_array(0, np.array(r))).min() >= base // 2
    for k in (32, 33, 1001, kb - 1, kb, kb + 1, 2 * kb + 7, 65536, 65537):
        a = np.full((4, k), r, np.int64)
        a[1, -1] = 1  # digits (1, 0, ...)
        a[2, k // 2 :] = -r  # rises, then falls back
        a[3, 1::2] = -r
        bt = np.full((5, k), -r, np.int64)
        bt[1] = r
        bt[2, -1] = base  # digits (0, 1, ...): with a[1, -1], P_1 gains 1
        bt[3, ::3] = r
        bt[4, k // 3 :] = r
        u = engine.modular_products(
            _gpu_residues(engine, cp, a, system), _gpu_residues(engine, cp, bt, system), system
        )
        exact = np.mod(a @ bt.T, m)  # |sums| < 65537 * (m / 2)**2 < 2**63
        np.testing.assert_array_equal(cp.asnumpy(u)[0], exact, err_msg=f"k = {k}")
        if k == 65536 and base > 8:  # the sums need the k-blocking: past 2**24 over all of k
            assert 2 * (base // 2) ** 2 * k > 2**24


@pytest.mark.gpu
@SYSTEMS
def test_fp8_residue_digit_planes_are_the_numpy_engines(engine, cp, system, rng):
    """engine.residues with an FP8 system: e4m3 digit planes (N, planes, D, ..., rows, kp)
    whose digits are split_array of the NumPy engine's residues (real and complex: re, im and
    the Karatsuba sum rmod(re + im)); the k padding and the digits past d_i are zero."""
    for dtype in (np.float64, np.complex128):
        x = phi_matrix(rng, (2, 9, 45), 4.0, dtype)
        shift = rng.integers(20, 60, (2, 9))
        got = engine.residues(cp.asarray(x), cp.asarray(shift), system)
        want = numpy_engine().residues(x, shift, system)
        nplanes, kp = (3 if dtype == np.complex128 else 1), fp8_pad_k(45)
        d_max = max(system.digits)
        assert got.is_complex == want.is_complex
        assert got.planes.shape == (system.count, nplanes, d_max, 2, 9, kp)
        planes = cp.asnumpy(got.planes)
        assert not planes[..., 45:].any()
        ref = want.planes if want.is_complex else want.planes[:, None]  # (N, planes, ...)
        if want.is_complex:  # the Karatsuba sum plane, as the NumPy Phase A forms it
            sums = np.stack([numpy_phase_a._reduced_sum(ref[i, 0], ref[i, 1], m)
                             for i, m in enumerate(system.moduli)])  # fmt: skip
            ref = np.concatenate([ref, sums[:, None]], axis=1)
        for i, d in enumerate(system.digits):
            for plane in range(nplanes):
                digits = system.split_array(i, ref[i, plane])
                np.testing.assert_array_equal(_e4m3_value(planes[i, plane, :d, ..., :45]), digits)
                assert not planes[i, plane, d:].any()


@pytest.mark.gpu
@SYSTEMS
@pytest.mark.parametrize("method", ["karatsuba", "4m"])
def test_fp8_modular_products_equal_numpy(engine, cp, system, method, rng):
    """Phase A alone: the residues u_i of batched real and complex products equal the NumPy
    engine's FP8 Phase A (odd m, n, k; k over several k-steps)."""
    for dtype in (np.float64, np.complex128):
        a = phi_matrix(rng, (3, 67, 301), 2.0, dtype)
        bt = phi_matrix(rng, (3, 45, 301), 2.0, dtype)
        sa, sb = gemm.compute_shifts(numpy_engine(), a, bt, system, "fast")
        ra, rb = (numpy_engine().residues(x, s, system) for x, s in ((a, sa), (bt, sb)))
        want = numpy_phase_a.modular_products(ra, rb, system, complex_method=method)
        ga = engine.residues(cp.asarray(a), cp.asarray(sa), system)
        gb = engine.residues(cp.asarray(bt), cp.asarray(sb), system)
        got = engine.modular_products(ga, gb, system, complex_method=method)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(cp.asnumpy(got), want)


def _both(engine, cp, a, b, system, **kw):
    want = gemm.emulated_matmul(numpy_engine(), a, b, system=system, **kw)
    got = gemm.emulated_matmul(engine, cp.asarray(a), cp.asarray(b), system=system, **kw)
    assert isinstance(got, cp.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    return cp.asnumpy(got), want


@pytest.mark.gpu
@SYSTEMS
@pytest.mark.parametrize(
    "dtype,out",
    [(np.float64, np.float64), (np.float64, np.float32),
     (np.complex128, np.complex128), (np.complex128, np.complex64)],
    ids=["d", "d->s", "z", "z->c"],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (67, 45, 33), (5, 300, 130), (130, 7, 1)])
def test_fp8_matmul_bitwise_equal_numpy(engine, cp, system, dtype, out, mode, shape, rng):
    """The whole pipeline (scaling, FP8 residues, FP8 Phase A, Phase B) on the GPU gives the
    NumPy engine's bits, for odd shapes (m, n, k not multiples of the 64 x 64 x 32 tile)."""
    m, k, n = shape
    a = phi_matrix(rng, (m, k), 1.0, dtype)
    b = phi_matrix(rng, (k, n), 1.0, dtype)
    for method in ("karatsuba", "4m") if np.dtype(dtype).kind == "c" else ("karatsuba",):
        got, want = _both(engine, cp, a, b, system, mode=mode, out_dtype=out, complex_method=method)
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@SYSTEMS
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fp8_matmul_over_several_k_blocks(engine, cp, system, dtype, rng):
    """k past two k-blocks (32736 for squares, 21824 with cubes): bitwise equal."""
    k = 2 * fp8_k_block(system) + 77
    a = phi_matrix(rng, (5, k), 0.5, dtype)
    b = phi_matrix(rng, (k, 7), 0.5, dtype)
    for mode in ("fast", "accurate"):
        got, want = _both(engine, cp, a, b, system, mode=mode, out_dtype=dtype)
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fp8_batched_stacked_looped_and_column_blocks(engine, cp, dtype, rng, monkeypatch):
    """A stack runs as one FP8 launch and one Phase-B launch; item by item and in column
    blocks of 256 (a small workspace) it gives the same bits, all equal to NumPy's."""
    from ozfft.engines.cuda.engine import CudaEngine

    system = CUBES
    a = phi_matrix(rng, (3, 19, 70), 1.0, dtype)
    b = phi_matrix(rng, (3, 70, 600), 1.0, dtype)
    got, want = _both(engine, cp, a, b, system, mode="fast", out_dtype=dtype)
    np.testing.assert_array_equal(got, want)
    monkeypatch.setattr(CudaEngine, "_stacked_fits", lambda self, *args: False)
    looped, _ = _both(engine, cp, a, b, system, mode="fast", out_dtype=dtype)
    np.testing.assert_array_equal(looped, want)
    monkeypatch.setattr(CudaEngine, "_block_budget", lambda self, *args: 1 << 20)
    ws = engine.gemm_workspace(3, 19, 600, 96, system.count, True, 3, False, dtype, 1 << 20)
    assert ws.col_block == 256
    blocked, _ = _both(engine, cp, a, b, system, mode="fast", out_dtype=dtype)
    np.testing.assert_array_equal(blocked, want)


@pytest.mark.gpu
def test_fp8_k_block_past_the_bound_does_not_compile(cp, monkeypatch, tmp_path):
    """The kernel re-checks the exactness bound: one k-step past the k-block is a compile
    error that names it (static_assert), not a silently inexact product."""
    from ozfft.engines.cuda import compiler
    from ozfft.errors import KernelCompileError

    monkeypatch.setenv("OZFFT_CACHE_DIR", str(tmp_path))
    macros = fp8_macros(CUBES)
    compiler.cubin_path("gemm/fp8_phase_a.cu", macros)
    too_long = macros | {"OZ_FP8_KBLOCK": str(fp8_k_block(CUBES) + FP8_TILE_K)}
    with pytest.raises(KernelCompileError, match="k-block"):
        compiler.cubin_path("gemm/fp8_phase_a.cu", too_long)


@pytest.mark.gpu
def test_fp8_needs_fp8_tensor_cores(cp, monkeypatch):
    """Below compute capability 8.9 an FP8 system is a clear error naming the device's
    capability (residues, exact_product, modular_products), before any kernel is built."""
    from ozfft.engines.cuda import engine as cuda_module
    from ozfft.engines.select import cuda_engine
    from ozfft.errors import DeviceUnavailableError

    monkeypatch.setattr(cuda_module, "compute_capability", lambda device_id=None: (8, 6))
    engine, system = cuda_engine(), SQUARES
    x, shift = cp.ones((4, 8)), cp.zeros(4, cp.int32)
    match = r"no FP8 tensor cores \(compute capability 8\.6 < 8\.9\)"
    with pytest.raises(DeviceUnavailableError, match=match):
        engine.residues(x, shift, system)
    with pytest.raises(DeviceUnavailableError, match=match):
        engine.exact_product(None, None, shift, shift, system, cp.float64)
    with pytest.raises(DeviceUnavailableError, match=match):
        engine.modular_products(None, None, system)
    with pytest.raises(DeviceUnavailableError, match=match):
        gemm.emulated_matmul(engine, x, x.T, mode="fast", out_dtype=np.float64, system=system)
    engine.residues(x, shift, int8_system(8))  # the INT8 Phase A needs no FP8


@pytest.mark.gpu
def test_fp8_stacks_of_the_wrong_kind_are_refused(engine, cp):
    """INT8 residue planes given with an FP8 system (and the other way round) are an error."""
    x, shift = cp.ones((4, 8)), cp.zeros(4, cp.int32)
    int8 = engine.residues(x, shift, int8_system(11))
    with pytest.raises(ValueError, match="not the FP8 digit planes"):
        engine.exact_product(int8, int8, shift, shift, SQUARES, cp.float64)
    fp8 = engine.residues(x, shift, SQUARES)
    got = engine.exact_product(fp8, fp8, shift, shift, SQUARES, cp.float64)
    np.testing.assert_array_equal(cp.asnumpy(got), np.full((4, 4), 8.0))
