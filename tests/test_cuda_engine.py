"""CUDA engine: bit-identical to the NumPy engine, errors, cache (needs a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft.reference import phi_matrix

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _both(a, b, **kw):
    want = ozfft.matmul(a, b, **kw)
    got = ozfft.matmul(cp.asarray(a), cp.asarray(b), **kw)
    assert isinstance(got, cp.ndarray)
    assert got.dtype == want.dtype and got.shape == want.shape
    return cp.asnumpy(got), want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize(
    "shape",
    [(1, 1, 1), (17, 33, 5), (5, 1, 9), (64, 64, 64), (1000, 3, 7), (3, 5000, 2), (40, 250, 1)],
)
def test_bitwise_identical_to_numpy_engine(dtype, mode, shape, rng):
    m, k, n = shape
    a = phi_matrix(rng, (m, k), 1.0, dtype)
    b = phi_matrix(rng, (k, n), 1.0, dtype)
    got, want = _both(a, b, mode=mode)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("moduli", [2, 5, 8, 13, 14, 16, 18, 20])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_every_moduli_count(moduli, dtype, rng):
    a = phi_matrix(rng, (23, 70), 2.0, dtype)
    b = phi_matrix(rng, (70, 19), 2.0, dtype)
    for mode in ("fast", "accurate"):
        got, want = _both(a, b, moduli=moduli, mode=mode)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_precision_and_1d_and_batched(precision, rng):
    a = phi_matrix(rng, (2, 3, 20, 30), 0.5)
    b = phi_matrix(rng, (3, 30, 10), 0.5)
    got, want = _both(a, b, precision=precision)
    np.testing.assert_array_equal(got, want)
    v = phi_matrix(rng, (30,), 0.5)
    got, want = _both(v, b[0], precision=precision)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_stacked_products_bitwise(dtype, rng, monkeypatch):
    """A stack of products runs as strided-batched GEMMs and one Phase-B launch per
    65535 items: the same bits as the NumPy engine, and as the item-by-item loop."""
    from ozfft.engines.cuda.engine import CudaEngine

    a = phi_matrix(rng, (7, 33, 20), 1.0, dtype)
    b = phi_matrix(rng, (7, 20, 18), 1.0, dtype)
    monkeypatch.setenv("OZFFT_FUSED_SMALL", "0")  # k = 20 would run fused
    for kw in ({}, {"mode": "accurate"}, {"moduli": 14}):
        got, want = _both(a, b, **kw)
        np.testing.assert_array_equal(got, want)
    monkeypatch.setattr(CudaEngine, "_stacked_fits", lambda self, *args: False)
    looped, _ = _both(a, b)
    np.testing.assert_array_equal(looped, ozfft.matmul(a, b))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_stacked_phase_a_in_cut_calls(dtype, rng, monkeypatch):
    """A stack's moduli x products x items run as one strided-batched GEMM, cut into calls
    of at most _GEMM_BATCH products: cuts that fall inside a modulus's or product's items
    give the same bits."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    a = phi_matrix(rng, (9, 21, 40), 1.0, dtype)
    b = phi_matrix(rng, (9, 40, 13), 1.0, dtype)
    monkeypatch.setenv("OZFFT_FUSED_SMALL", "0")  # k = 40 would run fused
    want = ozfft.matmul(a, b, moduli=13)
    for cut in (7, 9, 65535):
        monkeypatch.setattr(cuda_engine_module, "_GEMM_BATCH", cut)
        got = ozfft.matmul(cp.asarray(a), cp.asarray(b), moduli=13)
        np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_large_k_is_blocked_exactly(rng):
    """k > 2**16 splits Phase A into INT32-safe blocks, accumulated mod p."""
    a = phi_matrix(rng, (3, 70001), 0.5, np.complex128)
    b = phi_matrix(rng, (70001, 4), 0.5, np.complex128)
    got, want = _both(a, b)
    np.testing.assert_array_equal(got, want)
    ar = phi_matrix(rng, (2, 140000), 1.0)
    br = phi_matrix(rng, (140000, 3), 1.0)
    got, want = _both(ar, br, mode="accurate")
    np.testing.assert_array_equal(got, want)


def test_column_blocks_match(monkeypatch, rng):
    a = phi_matrix(rng, (300, 100), 1.0, np.complex128)
    b = phi_matrix(rng, (100, 1000), 1.0, np.complex128)
    want = ozfft.matmul(a, b)
    # 18 Gaussian moduli x 2 products of 300 rows: 768-column blocks, two of them
    monkeypatch.setenv("OZFFT_WORKSPACE", str(40 << 20))
    got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("width", [700, 1024, 1025, 5000, 16384, 16385, 40000])
def test_row_stats_kernels_match_numpy_engine(width, rng):
    """Short rows (a block per row's width), rows held in registers (up to 16 values per
    thread of 1024) and streamed rows (wider) give the NumPy engine's row exponents and
    sums of squares bit for bit: wide exponent spreads, zeros, subnormals, a zero row."""
    from ozfft.engines.numpy.scaling import row_stats as numpy_row_stats
    from ozfft.engines.select import cuda_engine

    rows = 7
    x = rng.standard_normal((rows, width)) * np.exp(rng.uniform(-40, 40, (rows, width)))
    x[1, ::3] = 0.0
    x[2, : width // 2] = rng.integers(1, 2**52, width // 2) * 2.0**-1074
    x[3] = 0.0
    x[4, -1] = 1e300  # the row's largest entry is its last
    st = cuda_engine().row_stats(cp.asarray(x), "a", need_sumsq=True)
    want_exp, want_sumsq = numpy_row_stats(x, "a", need_sumsq=True)
    np.testing.assert_array_equal(cp.asnumpy(st.max_exp), want_exp)
    np.testing.assert_array_equal(cp.asnumpy(st.sumsq), want_sumsq)


@pytest.mark.parametrize(
    "dtype, m, n, k",
    [(np.float64, 300, 77, 256), (np.complex128, 40, 90, 700), (np.float64, 5, 9, 3)],
)
def test_fast_stats_of_both_operands_in_one_launch(dtype, m, n, k, rng):
    """The CUDA engine's one-launch statistics and shifts of A and Bt (streamed rows of 256,
    rows of 1400 doubles held in registers, short rows; m != n) are the NumPy engine's
    row_stats and fast_shift bit for bit: wide exponent spreads, zeros, subnormals, a zero
    row in each operand."""
    from ozfft.engines.numpy import NumpyEngine
    from ozfft.engines.select import cuda_engine

    def operand(rows):
        x = rng.standard_normal((rows, k)) * np.exp(rng.uniform(-40, 40, (rows, k)))
        if dtype == np.complex128:
            x = x + 1j * rng.standard_normal((rows, k))
        x[0, ::3] = 0.0
        x[-1] = 0.0
        x[rows // 2, : k // 2] = rng.integers(1, 2**52, k // 2) * 2.0**-1074
        return x

    a, bt = operand(m), operand(n)
    budget = 121
    got = cuda_engine().fast_stats(cp.asarray(a), cp.asarray(bt), budget, defer_check=True)
    want = NumpyEngine().fast_stats(a, bt, budget)
    got[0].check_finite()
    # one pass: Bt's exponents and shifts follow A's in the same allocation
    assert got[1].max_exp.data.ptr == got[0].max_exp.data.ptr + 4 * m
    assert got[3].data.ptr == got[2].data.ptr + 4 * m
    for g, w in zip(got, want, strict=True):
        if hasattr(w, "max_exp"):
            np.testing.assert_array_equal(cp.asnumpy(g.max_exp), w.max_exp)
            np.testing.assert_array_equal(cp.asnumpy(g.sumsq), w.sumsq)
        else:
            np.testing.assert_array_equal(cp.asnumpy(g), w)


def test_fast_stats_name_the_operand_with_nan_or_inf(rng):
    """One read for both operands' counts: A's NaN or Inf are raised before Bt's, Bt's alone
    name Bt."""
    from ozfft.engines.select import cuda_engine

    a, bt = rng.standard_normal((6, 256)), rng.standard_normal((7, 256))
    bt[3, 5] = np.nan
    sa, _, _, _ = cuda_engine().fast_stats(cp.asarray(a), cp.asarray(bt), 100, defer_check=True)
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'b'.*1 non-finite.*NaN"):
        sa.check_finite()
    a[0, 0], a[1, 1] = np.inf, np.nan
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'a'.*2 non-finite.*NaN and Inf"):
        cuda_engine().fast_stats(cp.asarray(a), cp.asarray(bt), 100)


def test_workspace_too_small_states_bytes(monkeypatch):
    monkeypatch.setenv("OZFFT_WORKSPACE", "1000")
    a = cp.ones((512, 512))
    with pytest.raises(ozfft.DeviceMemoryError, match=r"needs \d+ bytes"):
        ozfft.matmul(a, a)


def test_out_of_memory_states_bytes():
    pool = cp.get_default_memory_pool()
    a = cp.ones((2048, 2048))
    old = pool.get_limit()
    pool.set_limit(size=a.nbytes * 3)
    try:
        with pytest.raises(ozfft.DeviceMemoryError, match=r"needs \d+ bytes") as info:
            ozfft.matmul(a, a)
        assert info.value.needed_bytes > 0
    finally:
        pool.set_limit(size=old)


@pytest.mark.parametrize("kw", [{}, {"moduli": 15}, {"moduli": 15, "mode": "accurate"}])
def test_non_finite_on_gpu_names_operand(kw):
    """The plan's path checks the statistics before deciding; the explicit ``moduli=``
    path defers the check until the residues are queued: the same errors either way,
    and the engine is usable after them."""
    a = cp.ones((40, 50))
    b = cp.ones((50, 30))
    b[1, 1] = cp.nan
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'b'.*1 non-finite.*NaN"):
        ozfft.matmul(a, b, **kw)
    a[3, 7] = -cp.inf
    a[4, 7] = cp.nan
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'a'.*2 non-finite.*NaN and Inf"):
        ozfft.matmul(a, b, **kw)
    got = ozfft.matmul(cp.ones((40, 50)), cp.ones((50, 30)), **kw)
    np.testing.assert_array_equal(cp.asnumpy(got), np.full((40, 30), 50.0))


def test_runs_on_current_stream(rng):
    a = phi_matrix(rng, (50, 60), 1.0)
    b = phi_matrix(rng, (60, 40), 1.0)
    want = ozfft.matmul(a, b)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        got = ozfft.matmul(cp.asarray(a), cp.asarray(b))
    stream.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_mixed_devices_rejected():
    with pytest.raises(TypeError, match="mix cupy and host arrays"):
        ozfft.matmul(cp.ones((2, 2)), np.ones((2, 2)))


def test_kernel_cache_written_and_reused(monkeypatch, tmp_path):
    import stat

    from ozfft.engines.cuda import compiler

    cache = tmp_path / "cache"
    monkeypatch.setenv("OZFFT_CACHE_DIR", str(cache))
    compiler.load_module.cache_clear()
    try:
        a = cp.ones((8, 8))
        np.testing.assert_array_equal(
            cp.asnumpy(ozfft.matmul(a, a, moduli=3)), np.full((8, 8), 8.0)
        )
        assert stat.S_IMODE(cache.stat().st_mode) == 0o700
        cubins = sorted(p.name for p in cache.glob("*.cubin"))
        # k = 8: the fused small-product kernel (gemm/small_product.cu)
        assert any(name.startswith("gemm-small_product-sm_") for name in cubins)
        assert all((cache / f"{name}.sha256").is_file() for name in cubins)
        assert not list(cache.glob(".tmp-*"))
        stamps = {p: p.stat().st_mtime_ns for p in cache.glob("*.cubin")}
        compiler.load_module.cache_clear()
        ozfft.matmul(a, a, moduli=3)
        assert {p: p.stat().st_mtime_ns for p in cache.glob("*.cubin")} == stamps
    finally:
        compiler.load_module.cache_clear()


def test_damaged_cubin_recompiled_and_loadable(monkeypatch, tmp_path):
    from ozfft.engines.cuda import compiler
    from ozfft.engines.cuda.constants import NO_MACROS

    monkeypatch.setenv("OZFFT_CACHE_DIR", str(tmp_path))
    path = compiler.cubin_path("probes/ceilings.cu", NO_MACROS)
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    assert compiler.cubin_path("probes/ceilings.cu") == path
    assert path.read_bytes() == good
    cp.RawModule(path=str(path)).get_function("oz_probe_imad")


def test_bench_names_of_kernels_still_resolve(monkeypatch, tmp_path):
    """ozfft bench passes bare file names ("ceilings.cu"); they name one area's file."""
    from ozfft.engines.cuda import compiler

    monkeypatch.setenv("OZFFT_CACHE_DIR", str(tmp_path))
    assert compiler.cubin_path("ceilings.cu") == compiler.cubin_path("probes/ceilings.cu")
    compiler.get_function("ceilings.cu", "oz_probe_dfma")


def test_nvrtc_error_raises_kernel_compile_error(monkeypatch, tmp_path):
    from ozfft.engines.cuda import compiler

    monkeypatch.setenv("OZFFT_CACHE_DIR", str(tmp_path))
    with pytest.raises(ozfft.errors.KernelCompileError, match="error") as info:
        compiler.cubin_path("gemm/phase_b.cu", {"OZ_NUM_MODULI": "2"})  # no OZ_MODULI
    assert info.value.dump_path is not None and info.value.dump_path.is_file()
    assert str(info.value.dump_path) in str(info.value)


def test_profiling_reports_every_phase():
    from ozfft.profiling import profile_phases

    a = cp.asarray(phi_matrix(np.random.default_rng(1), (300, 200), 1.0, np.complex128))
    ozfft.matmul(a, a.T)  # compile outside the profile
    with profile_phases() as prof:
        ozfft.matmul(a, a.T)
    assert {"scaling", "residues", "phase_a", "phase_b"} <= set(prof.ms)
    assert all(ms > 0 for ms in prof.ms.values())
    assert prof.calls["residues"] == 2 and prof.calls["phase_a"] == prof.calls["phase_b"]


def test_engine_gemm_workspace():
    from ozfft.engines.select import cuda_engine

    engine = cuda_engine()
    ws = engine.gemm_workspace(1, 64, 64, 64, 8, False, 1, False, np.float64)
    assert ws.col_block == 64 and ws.kp == 64
    assert not hasattr(engine, "plan") and not hasattr(engine, "phase_ms")
    assert engine.device_key() == ("cuda", cp.cuda.Device().id)


def test_cuda_engine_takes_an_fp8_residue_system_with_fp8_tensor_cores():
    """Given an FP8 system (moduli above 256, digit products), residues and exact_product
    run the FP8 Phase A (tests/test_cuda_fp8_gemm.py) where the GPU has FP8 tensor cores
    (compute capability 8.9 on) and say it has none before; the FFT's integer residues
    stay INT8 and refuse it instead of computing with INT8 rules."""
    from ozfft.engines.base import compute_capability
    from ozfft.engines.select import cuda_engine
    from ozfft.ozaki.residue_system import fp8_system

    engine, system = cuda_engine(), fp8_system(94)
    x = cp.ones((4, 8))
    shift = cp.zeros(4, cp.int32)
    if compute_capability() < (8, 9):
        with pytest.raises(ozfft.errors.DeviceUnavailableError, match="no FP8"):
            engine.residues(x, shift, system)
        with pytest.raises(ozfft.errors.DeviceUnavailableError, match="no FP8"):
            engine.exact_product(None, None, shift, shift, system, cp.float64)
    else:
        r = engine.residues(x, shift, system)
        got = engine.exact_product(r, r, shift, shift, system, cp.float64)
        np.testing.assert_array_equal(cp.asnumpy(got), np.full((4, 4), 8.0))
    ones = np.ones((2, 3), np.int64)
    with pytest.raises(
        NotImplementedError,
        match=r"integer residues .* are INT8 only; 'fp8' runs there on the NumPy engine",
    ):
        engine.integer_residues(ones, ones, system)


@pytest.mark.parametrize("method", ["gaussian", "karatsuba", "4m"])
@pytest.mark.parametrize("num_moduli", [2, 8, 15, 16, 19, 20])
@pytest.mark.parametrize("out_dtype", [np.complex128, np.complex64])
def test_complex_methods_bitwise_on_gpu(method, num_moduli, out_dtype, rng):
    """Each complex method (Gaussian: two INT8 products per modulus on its own moduli,
    kernels/gemm/residues.cu oz_residues_gaussian and phase_b.cu) gives the NumPy engine's
    bits, and all give one result."""
    from ozfft.engines.select import cuda_engine, numpy_engine
    from ozfft.scheme.gemm import emulated_matmul

    a = phi_matrix(rng, (2, 37, 150), 2.0, np.complex128)
    b = phi_matrix(rng, (2, 150, 29), 2.0, np.complex128)
    kw = dict(num_moduli=num_moduli, mode="fast", out_dtype=out_dtype)
    want = emulated_matmul(numpy_engine(), a, b, complex_method="karatsuba", **kw)
    got = emulated_matmul(
        cuda_engine(),
        cp.asarray(a),
        cp.asarray(b),
        complex_method=method,
        **kw,
    )
    np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_gaussian_residue_planes_on_gpu(rng):
    """The CUDA engine's Gaussian planes are rmod(re +- j im) of the NumPy engine's
    symmetric residues (re, im)."""
    from ozfft.engines.select import cuda_engine, numpy_engine
    from ozfft.ozaki.residue_system import gaussian_system

    system = gaussian_system(117)
    x = phi_matrix(rng, (13, 70), 3.0, np.complex128)
    # every row scaled to |2**s x| ~ 2**78, as large as the scaling makes it: |R + j I|
    # reaches ~2**46 in the kernel's reduction (its bound is 2**47)
    top = np.maximum(np.abs(x.real), np.abs(x.imag)).max(axis=1)
    shift = (78 - np.frexp(top)[1]).astype(np.int64)
    want = numpy_engine().residues(x, shift, system).planes.astype(np.int64)  # (N, 2, 13, 70)
    got = cuda_engine().residues(cp.asarray(x), cp.asarray(shift), system)
    planes = cp.asnumpy(got.planes).astype(np.int64)
    assert planes.shape == (system.count, 2, 13, 80)  # k padded to 16
    assert not planes[..., 70:].any()
    for i, (p, (j, _, _)) in enumerate(zip(system.moduli, system.roots, strict=True)):
        for sign, plane in ((1, 0), (-1, 1)):
            expected = (want[i, 0] + sign * j * want[i, 1] + p // 2) % p - p // 2
            np.testing.assert_array_equal(planes[i, plane, :, :70], expected)


@pytest.mark.parametrize("rounding", ["trunc", "nearest"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_residue_planes_on_gpu_both_roundings(rounding, dtype, rng):
    """kernels/gemm/residues.cu (real and Karatsuba planes) gives the NumPy engine's
    residues of the same scaled integers under each rounding rule, ties and the 64
    threshold included (and the rules differ on these inputs)."""
    from ozfft.engines.select import cuda_engine, numpy_engine
    from ozfft.ozaki.residue_system import int8_system

    moduli = int8_system(16)
    x = phi_matrix(rng, (11, 96), 3.0, dtype)
    shift = rng.integers(-10, 60, 11)
    # row 0: scaled values on ties and around 64 (shift 0)
    ties = np.array([0.5, 1.5, 2.5, 63.5, 64.5, 65.5, -64.5, -63.5, 127.5, 64.0, 63.99])
    x[0, : ties.size] = ties * (1 + 1j if np.dtype(dtype).kind == "c" else 1)
    shift[0] = 0
    want = numpy_engine().residues(x, shift, moduli, rounding).planes.astype(np.int64)
    swapped = "trunc" if rounding == "nearest" else "nearest"
    assert (numpy_engine().residues(x, shift, moduli, swapped).planes != want).any()
    got = cuda_engine().residues(cp.asarray(x), cp.asarray(shift), moduli, rounding)
    planes = cp.asnumpy(got.planes).astype(np.int64)[..., :96]
    p = np.array(moduli.moduli)[:, None, None]
    if np.dtype(dtype).kind == "c":  # CUDA: (re, im, rmod(re + im)); NumPy: (re, im)
        np.testing.assert_array_equal((planes[:, :2] - want) % p[:, None], 0)
        np.testing.assert_array_equal((planes[:, 2] - want[:, 0] - want[:, 1]) % p, 0)
    else:
        np.testing.assert_array_equal((planes[:, 0] - want) % p, 0)


def test_fast_shift_kernel_is_the_rule(rng):
    """CudaEngine.fast_shift and norm1_exponent_fast (one oz_row_rule launch each) give the
    integers of the rules in ozfft.ozaki.scaling, for one budget and for a tuple of them
    (stacked)."""
    from ozfft.engines.select import cuda_engine, numpy_engine
    from ozfft.ozaki.residue_system import int8_system
    from ozfft.ozaki.scaling import ZERO_ROW_EXP

    sumsq = rng.integers(0, 2**62, (3, 70)).astype(np.int64)
    sumsq[0, :6] = [0, 1, 2, 3, 4, 2**61]
    max_exp = rng.integers(-1100, 1030, (3, 70)).astype(np.int64)
    max_exp[0, 0] = ZERO_ROW_EXP
    engine, ref = cuda_engine(), numpy_engine()
    budgets = tuple(int8_system(n).budget_bits for n in range(14, 21))
    for budget in (int8_system(16).budget_bits, budgets):
        got = engine.fast_shift(cp.asarray(max_exp), cp.asarray(sumsq), budget)
        np.testing.assert_array_equal(cp.asnumpy(got), ref.fast_shift(max_exp, sumsq, budget))
    assert engine.fast_shift(cp.asarray(max_exp), cp.asarray(sumsq), budgets).shape == (7, 3, 70)
    for terms in (1, 64, 2**17 + 1):
        got = engine.norm1_exponent_fast(cp.asarray(max_exp), cp.asarray(sumsq), terms)
        want = ref.norm1_exponent_fast(max_exp, sumsq, terms)
        np.testing.assert_array_equal(cp.asnumpy(got), want)


@pytest.mark.parametrize(
    "shape", [(37, 29), (70, 2000), (3, 16, 300), (2, 5, 1, 40), (1, 1), (65535 * 64 + 100, 2)]
)
def test_scaled_minima_kernel_is_the_rule(shape, rng):
    """CudaEngine.scaled_minima (gemm/guarantee.cu: one read of g, a thread per column over
    blocks of rows, minima merged with atomicMin on the bits) gives the NumPy engine's
    row and column minima of g scaled by powers of two, for stacks, rows not a multiple of
    the block's 64, more row blocks than a grid dimension holds, several column tiles, zeros
    in g and scales from 2**-960 to 2**960."""
    from ozfft.engines.select import cuda_engine, numpy_engine

    *batch, m, n = shape
    g = np.floor(rng.uniform(0, 2.0**53, shape) * rng.choice([0, 1, 1e-9], shape))
    rs = np.ldexp(1.0, rng.integers(-960, 961, (*batch, m)))
    cs = np.ldexp(1.0, rng.integers(-960, 961, (*batch, n)))
    want = numpy_engine().scaled_minima(g, rs, cs)
    got = cuda_engine().scaled_minima(cp.asarray(g), cp.asarray(rs), cp.asarray(cs))
    for x, y in zip(got, want, strict=True):
        assert x.shape == y.shape
        np.testing.assert_array_equal(cp.asnumpy(x), y)


@pytest.mark.parametrize(
    "shape, dtype",
    [
        ((37, 29), np.float64),
        ((300, 2000), np.float64),
        ((3, 16, 300), np.complex128),
        ((2, 5, 1, 40), np.float64),
        ((1, 1), np.complex128),
        ((5000, 3), np.float64),
    ],
)
@pytest.mark.parametrize("salt", [0, 1])
def test_column_hash_kernel_is_the_rule(shape, dtype, salt, rng):
    """CudaEngine.column_hash (gemm/guarantee.cu: a thread per word column, chunks of rows,
    partial sums merged with atomicAdd modulo 2**64) gives the NumPy engine's hash bit for
    bit: stacks, complex words, columns not a multiple of the block, many row chunks,
    signed zeros, NaN and subnormal patterns."""
    from ozfft.engines.select import cuda_engine, numpy_engine

    x = phi_matrix(rng, shape, 4.0, dtype)
    flat = x.reshape(-1)
    flat[::7] = -0.0
    flat[1::11] = 5e-324
    flat[2::13] = np.nan
    want = numpy_engine().column_hash(x, salt)
    got = cuda_engine().column_hash(cp.asarray(x), salt)
    assert got.dtype == want.dtype == np.uint64
    np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_integer_residues_refuse_a_gaussian_system():
    """The FFT stage path's integer residues are Karatsuba planes (re, im, re + im): a
    Gaussian system, whose products read rmod(re +- j im), is refused by name."""
    from ozfft.engines.select import cuda_engine
    from ozfft.ozaki.residue_system import gaussian_system

    re = np.arange(6).reshape(2, 3)
    with pytest.raises(ValueError, match="Karatsuba planes: not for a Gaussian system"):
        cuda_engine().integer_residues(re, re, gaussian_system(40))


@pytest.mark.parametrize(
    ("src", "dst"),
    [(np.float32, np.float64), (np.complex64, np.complex128), (np.float64, np.float32),
     (np.complex128, np.complex64)],
)  # fmt: skip
def test_astype_keeps_binary32_subnormals(src, dst, rng):
    """CudaEngine.astype converts like numpy, subnormals of binary32 included (cupy's own
    conversion flushes them to zero), rounding once to nearest even when narrowing, and
    overflowing to inf; strided input is fine."""
    from ozfft.engines.select import cuda_engine

    f32 = np.finfo(np.float32)
    values = np.concatenate(
        [
            f32.smallest_subnormal * rng.integers(-(2**23), 2**23, 500),
            [f32.smallest_subnormal, -f32.smallest_subnormal / 2 * 3, f32.tiny, 0.0, -0.0],
            rng.standard_normal(500) * np.exp(rng.uniform(-100, 100, 500)),
            [3.5e38, -1e300, np.inf, -np.inf],
        ]
    )
    if np.dtype(src).kind == "c":  # (parts set apart: 1j * inf would make a NaN)
        parts = np.empty(values.size, np.complex128)
        parts.real, parts.imag = values, values[::-1]
        values = parts
    with np.errstate(over="ignore"):
        x = values.astype(src)
        want = x[::2].astype(dst)
    got = cuda_engine().astype(cp.asarray(x)[::2], dst)
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(cp.asnumpy(got), want)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("kw", [{}, {"moduli": 9}])
def test_binary32_subnormal_operands_and_results(dtype, kw, rng):
    """float32/complex64 products whose operands or results are binary32 subnormals: the
    NumPy engine's bits (before, cupy's conversions flushed them to zero)."""
    tiny = np.finfo(np.float32).smallest_subnormal
    a = phi_matrix(rng, (3, 20, 24), 1.0, dtype)
    b = phi_matrix(rng, (3, 24, 18), 1.0, dtype)
    a[0, 1] = tiny * rng.integers(-9, 10, 24)
    a[1] *= np.float32(1e-41)
    b[2, :, 3] = tiny * 3
    got, want = _both(a, b, **kw)
    assert np.count_nonzero(want[0, 1]) > 0 and np.count_nonzero(want[1]) > 0
    np.testing.assert_array_equal(got, want)


def test_out_bool_and_vectors_as_cupy_has_them(rng):
    """cupy operands: ``out`` a cupy array of the result's shape (written, returned; a
    numpy ``out`` refused), ``bool @ bool`` a cupy bool array, 1-D @ 1-D a 0-d cupy array
    (cupy's matmul has no scalars): the NumPy engine's values."""
    a = phi_matrix(rng, (3, 7, 40), 1.0)
    b = phi_matrix(rng, (40, 5), 1.0)
    da, db = cp.asarray(a), cp.asarray(b)
    want = ozfft.matmul(a, b, moduli=13)
    out = cp.full((3, 7, 5), cp.nan, cp.complex128)
    assert ozfft.matmul(da, db, out, moduli=13) is out
    np.testing.assert_array_equal(cp.asnumpy(out), want.astype(np.complex128))
    with pytest.raises(TypeError, match="cupy array"):
        ozfft.matmul(da, db, out=np.zeros((3, 7, 5)))
    bits = rng.integers(0, 2, (2, 6, 9)).astype(bool), rng.integers(0, 2, (9, 3)).astype(bool)
    got = ozfft.matmul(*(cp.asarray(x) for x in bits))
    assert isinstance(got, cp.ndarray) and got.dtype == cp.bool_
    np.testing.assert_array_equal(cp.asnumpy(got), np.matmul(*bits))
    v = phi_matrix(rng, (40,), 1.0)
    dot = ozfft.matmul(cp.asarray(v), cp.asarray(v))
    assert isinstance(dot, cp.ndarray) and dot.shape == ()
    assert float(dot) == ozfft.matmul(v, v)
