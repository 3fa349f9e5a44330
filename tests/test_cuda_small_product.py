"""The fused small-product kernel (k <= 64, ``kernels/gemm/small_product.cu``): the bits of
the NumPy engine and of the staged CUDA path, for every shape edge (needs a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft.profiling import profile_phases
from ozfft.reference import phi_matrix

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
#: (batch, m, k, n): one tile, partial tiles, several tiles each way, k = 1, the largest k;
#: items of at most 32 (16) rows and columns, two (four) to a block, odd counts among them
SHAPES = [(5, 64, 64, 64), (3, 37, 50, 29), (1, 130, 64, 70), (2, 1, 1, 1), (4, 65, 63, 129),
          (7, 32, 64, 32), (5, 17, 33, 32), (9, 16, 40, 11), (3, 3, 64, 16)]  # fmt: skip


def _engines():
    from ozfft.engines.select import cuda_engine, numpy_engine

    return numpy_engine(), cuda_engine()


def _gpu_call(a, b, **kw):
    """``ozfft.matmul`` on the GPU with its phase profile (compiled outside it)."""
    da, db = cp.asarray(a), cp.asarray(b)
    ozfft.matmul(da, db, **kw)
    with profile_phases() as prof:
        got = ozfft.matmul(da, db, **kw)
    return cp.asnumpy(got), prof


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"moduli": 14}, {"moduli": 8, "mode": "accurate"}])
def test_fused_bits_are_the_numpy_engines(shape, dtype, kw, rng):
    batch, m, k, n = shape
    a = phi_matrix(rng, (batch, m, k), 1.0, dtype)
    b = phi_matrix(rng, (batch, k, n), 1.0, dtype)
    got, prof = _gpu_call(a, b, **kw)
    assert "fused" in prof.ms and "phase_a" not in prof.ms  # the fused kernel ran
    np.testing.assert_array_equal(got, ozfft.matmul(a, b, **kw))


@pytest.mark.parametrize("moduli", [2, 5, 13, 16, 19, 20])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fused_every_moduli_count_and_the_staged_bits(moduli, dtype, rng, monkeypatch):
    """Every moduli count (one to several shared-memory chunks of moduli; 20 complex moduli
    have no Gaussian system and stage), against the NumPy engine and OZFFT_FUSED_SMALL=0."""
    a = phi_matrix(rng, (6, 45, 64), 3.0, dtype)
    b = phi_matrix(rng, (6, 64, 71), 3.0, dtype)
    got, prof = _gpu_call(a, b, moduli=moduli)
    fused = not (dtype == np.complex128 and moduli == 20)
    assert ("fused" in prof.ms) == fused
    np.testing.assert_array_equal(got, ozfft.matmul(a, b, moduli=moduli))
    monkeypatch.setenv("OZFFT_FUSED_SMALL", "0")
    staged, prof = _gpu_call(a, b, moduli=moduli)
    assert "fused" not in prof.ms and "phase_a" in prof.ms
    np.testing.assert_array_equal(staged, got)


@pytest.mark.parametrize("rounding", ["trunc", "nearest"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fused_product_is_residues_then_exact_product(rounding, dtype, rng):
    """Engine level, both roundings of the scaled integers (row maxima scaled to 2**48:
    the other entries keep fractions, so nearest and trunc differ, and |A' B'^T| stays
    far below P / 2 = 2**109), against the NumPy engine's staged product."""
    from ozfft.ozaki.residue_system import int8_system
    from ozfft.scheme.gemm import gaussian_system_for

    host, gpu = _engines()
    moduli = int8_system(14)
    if dtype == np.complex128:
        moduli = gaussian_system_for(moduli)
    a = phi_matrix(rng, (3, 40, 33), 2.0, dtype)
    bt = phi_matrix(rng, (3, 50, 33), 2.0, dtype)
    sa = (48 - np.frexp(np.abs(a).max(axis=-1))[1]).astype(np.int64)
    sb = (48 - np.frexp(np.abs(bt).max(axis=-1))[1]).astype(np.int64)
    method = "gaussian" if dtype == np.complex128 else "karatsuba"

    def staged(rule):
        return host.exact_product(
            host.residues(a, sa, moduli, rule),
            host.residues(bt, sb, moduli, rule),
            sa,
            sb,
            moduli,
            np.float64 if dtype == np.float64 else np.complex128,
            complex_method=method,
        )

    want = staged(rounding)
    assert (want != staged("trunc" if rounding == "nearest" else "nearest")).any()
    got = gpu.fused_product(
        cp.asarray(a),
        cp.asarray(bt),
        cp.asarray(sa),
        cp.asarray(sb),
        moduli,
        want.dtype,
        rounding=rounding,
    )
    assert got is not None
    np.testing.assert_array_equal(cp.asnumpy(got), want)


@pytest.mark.parametrize("m, grid_z", [(40, 4), (9, 1)])  # one item a block; four
def test_fused_stack_past_the_grid_limit(m, grid_z, rng, monkeypatch):
    """A stack launches in cuts of _GRID_Z blocks (grid z) of one item, or of four items of
    at most 16 rows and columns: cuts inside the stack, and a last block short of items,
    give the same bits."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    a = phi_matrix(rng, (11, m, 16), 1.0, np.complex128)
    b = phi_matrix(rng, (11, 16, 7), 1.0, np.complex128)
    want = ozfft.matmul(a, b, moduli=12)
    monkeypatch.setattr(cuda_engine_module, "_GRID_Z", grid_z)
    got, prof = _gpu_call(a, b, moduli=12)
    assert prof.calls["fused"] == 3  # 4 + 4 + 3 items
    np.testing.assert_array_equal(got, want)


def test_fused_declines_what_it_cannot_read(rng):
    """The seam stages (returns None) for empty products, strided views and operands that
    are not float64 / complex128 rows, instead of reading them as prepared rows."""
    from ozfft.ozaki.residue_system import int8_system

    _, gpu = _engines()
    moduli = int8_system(10)
    x = cp.asarray(phi_matrix(rng, (2, 5, 40), 1.0))  # k = 40: the kernel's
    bt = x[:, :3].copy()
    wide = cp.asarray(phi_matrix(rng, (2, 5, 70), 1.0))
    view = wide[..., :40]  # rows 70 apart: not C-contiguous
    assert view.shape == x.shape and not view.flags.c_contiguous

    def fused(a, b):
        return gpu.fused_fast_product(a, b, 60, moduli, np.float64, rounding="nearest")

    assert fused(view, bt) is None
    assert fused(x[:, :0], bt) is None  # m = 0
    assert fused(x.astype(cp.float32), bt.astype(cp.float32)) is None
    got = fused(x, bt)  # the control: the same call on prepared rows runs
    assert got is not None and got.shape == (2, 5, 3)
    assert ozfft.matmul(cp.zeros((0, 5, 8)), cp.zeros((0, 8, 3)), moduli=10).shape == (0, 5, 3)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("m, n", [(70, 130), (20, 30)])  # several tiles; two items a block
def test_fused_non_finite_as_staged(dtype, m, n, rng, monkeypatch):
    """NaN and Inf entries (counted by the kernel that computes the shifts, each once) are
    refused with the staged path's message: the operand (A first) and the count."""
    a = phi_matrix(rng, (3, m, 8), 1.0, dtype)
    b = phi_matrix(rng, (3, 8, n), 1.0, dtype)
    a[1, 2, 3] = np.nan
    a[2, m - 1, 0] = np.inf
    b[0, 0, n - 1] = np.nan
    for x, y, operand, count in ((a, b, "a", 2), (np.nan_to_num(a), b, "b", 1)):
        for fused in ("1", "0"):
            monkeypatch.setenv("OZFFT_FUSED_SMALL", fused)
            with profile_phases() as prof, pytest.raises(ozfft.NonFiniteInputError) as info:
                ozfft.matmul(cp.asarray(x), cp.asarray(y), moduli=10)
            assert (info.value.operand, info.value.count) == (operand, count)
            assert ("fused" in prof.ms) == (fused == "1")  # the kernel counted them


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_counted_product_leaves_non_finite_to_the_caller(dtype, rng):
    """``counted=True`` (the plan probe has counted NaN and Inf): the product is queued and
    returned without reading its own count, so NaN input raises nothing here; the same
    call without it raises the count, and on finite input both give the same bits."""
    from ozfft.ozaki.residue_system import int8_system
    from ozfft.scheme.gemm import gaussian_system_for

    _, gpu = _engines()
    moduli = int8_system(10)
    if dtype == np.complex128:
        moduli = gaussian_system_for(moduli)
    a = cp.asarray(phi_matrix(rng, (3, 20, 40), 1.0, dtype))
    bt = cp.asarray(phi_matrix(rng, (3, 12, 40), 1.0, dtype))

    def fused(x, counted):
        return gpu.fused_fast_product(x, bt, 60, moduli, dtype, rounding="nearest", counted=counted)

    np.testing.assert_array_equal(cp.asnumpy(fused(a, True)), cp.asnumpy(fused(a, False)))
    a[1, 2, 3] = np.nan
    assert fused(a, True) is not None
    with pytest.raises(ozfft.NonFiniteInputError) as info:
        fused(a, False)
    assert (info.value.operand, info.value.count) == ("a", 1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fused_shifts_on_extreme_rows(dtype, rng):
    """The kernel's own fast-mode shifts (OZ_SP_SHIFTS) on rows of zeros, subnormals,
    huge entries, wide exponent ranges and single entries: the NumPy engine's bits."""
    tiny, huge = 5e-324, 1.5e308
    a = phi_matrix(rng, (2, 70, 33), 4.0, dtype)
    b = phi_matrix(rng, (2, 33, 66), 4.0, dtype)
    a[0, 0] = 0
    a[0, 1] = tiny * rng.integers(-9, 10, 33)
    a[0, 2, :5] = [huge, -huge / 3, 1e-300, 0, 2.5]
    a[1, 5] = 0
    a[1, 5, 7] = -3.0
    b[0, :, 0] = 0
    b[0, :, 1] = tiny * rng.integers(-9, 10, 33)
    b[1, :, 65] = 1e-310
    b[1, 3, 64] = 1e300
    want = [ozfft.matmul(a, b, moduli=n) for n in (6, 14, 20)]
    for n, w in zip((6, 14, 20), want, strict=True):
        got, prof = _gpu_call(a, b, moduli=n)
        assert set(prof.ms) == {"fused"} or (dtype == np.complex128 and n == 20)
        np.testing.assert_array_equal(got, w)


def test_k_past_the_kernel_stages(rng):
    a = cp.asarray(phi_matrix(rng, (2, 10, 65), 1.0))
    b = cp.asarray(phi_matrix(rng, (2, 65, 10), 1.0))
    with profile_phases() as prof:
        ozfft.matmul(a, b, moduli=10)
    assert "fused" not in prof.ms and "phase_a" in prof.ms


def test_large_outputs_stage(rng, monkeypatch):
    """Past _SP_MAX_OUTPUTS outputs (x planes) the product stages, with the same bits."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    a = phi_matrix(rng, (3, 40, 30), 1.0, np.complex128)
    b = phi_matrix(rng, (3, 30, 50), 1.0, np.complex128)
    fused, prof = _gpu_call(a, b, moduli=11)
    assert "fused" in prof.ms
    monkeypatch.setattr(cuda_engine_module, "_SP_MAX_OUTPUTS", 2 * 3 * 40 * 50 - 1)
    ozfft.linalg._forget_prepared()  # (kept per signature: planned again with the limit)
    staged, prof = _gpu_call(a, b, moduli=11)
    assert "fused" not in prof.ms and "phase_a" in prof.ms
    np.testing.assert_array_equal(staged, fused)


def test_more_row_tiles_than_grid_y_stage(rng, monkeypatch):
    """Grid y holds at most _GRID_Z row tiles: a product with more stages, same bits."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    a = phi_matrix(rng, (130, 20), 1.0)
    b = phi_matrix(rng, (20, 9), 1.0)
    want = ozfft.matmul(a, b, moduli=9)
    monkeypatch.setattr(cuda_engine_module, "_GRID_Z", 2)  # 3 row tiles of 64
    got, prof = _gpu_call(a, b, moduli=9)
    assert "fused" not in prof.ms and "phase_a" in prof.ms
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "kw", [{}, {"moduli": 2}, {"moduli": 9}, {"moduli": 14}, {"moduli": 16}, {"moduli": 18}]
)
@pytest.mark.parametrize("shape", [(5, 64, 64, 64), (3, 37, 50, 29), (1, 130, 64, 70),
                                   (7, 32, 64, 32), (9, 16, 40, 11), (2, 1, 1, 1),
                                   (2, 64, 33, 97)])  # fmt: skip
@pytest.mark.parametrize("dtype", DTYPES)
def test_slices_are_the_residues_bits(kw, shape, dtype, rng, monkeypatch):
    """Fast-mode products through exact base-256 slices (the default where the digits fit
    the kernel: real CRT budgets up to 126 bits, 8 digits; complex up to 142, 9 digits from
    a two-word split, one item per block) and through residues and the CRT
    (OZFFT_SLICES=0): the same bits, and the NumPy engine's; with explicit moduli also on
    rows of zeros, subnormals, huge entries and wide ranges."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    batch, m, k, n = shape
    is_complex = np.dtype(dtype).kind == "c"
    phi = 4.0 if kw else 1.0  # (the default plan: one product on 16 moduli, 8 for float32)
    a = phi_matrix(rng, (batch, m, k), phi, dtype)
    b = phi_matrix(rng, (batch, k, n), phi, dtype)
    if kw and m > 3 and n > 3:
        real = np.finfo(dtype).dtype
        tiny, huge = np.finfo(real).smallest_subnormal, np.finfo(real).max / 4
        a[0, 0] = 0
        a[0, 1] = tiny * rng.integers(-9, 10, k)
        a[0, 2, :2] = [huge, -huge / 3]
        b[-1, :, 1] = tiny * rng.integers(-9, 10, k)
        if is_complex:
            a[0, 3, :2] = [huge * 1j, -huge / 3 + huge / 5 * 1j]
            b[-1, :, 2] = tiny * rng.integers(-9, 10, k) * 1j
    used, given = [], []
    choose = cuda_engine_module.small_product_slices
    monkeypatch.setattr(
        cuda_engine_module,
        "small_product_slices",
        lambda *args: used.append(choose(*args)) or used[-1],
    )
    run = cuda_engine_module.CudaEngine._run_small_product
    plans = []

    def spy(self, plan, a, bt, shifts, check, *, shifts_at=None):  # (every small product
        given.append(shifts is not None or shifts_at is not None)  # runs here)
        plans.append(plan)
        return run(self, plan, a, bt, shifts, check, shifts_at=shifts_at)

    monkeypatch.setattr(cuda_engine_module.CudaEngine, "_run_small_product", spy)
    got, prof = _gpu_call(a, b, **kw)
    assert "fused" in prof.ms
    # the default plan's probe forms the shifts for the product (explicit moduli: the kernel)
    if kw or k > 1:
        assert given and any(given) == (not kw)
    packed = max(m, n) <= 32  # several items per block: complex ones take residues
    fits = is_complex or kw.get("moduli") != 18  # real past 126 bits: residues
    if (kw or k > 1) and not (is_complex and packed):
        assert used and all((s is not None) == fits for s in used)
    else:  # k = 1: the default plan gives the kernel its shifts (exact entries): residues
        assert not used
    monkeypatch.setenv("OZFFT_SLICES", "0")
    used.clear()
    sliced = plans[-1]
    residues, prof = _gpu_call(a, b, **kw)
    assert "fused" in prof.ms and not used
    assert plans[-1] is not sliced  # the variable is part of the signature: planned again
    np.testing.assert_array_equal(got, residues)
    np.testing.assert_array_equal(got, ozfft.matmul(a, b, **kw))


@pytest.mark.parametrize("per_block", [2, 3])
@pytest.mark.parametrize("shape", [(5, 64, 64, 64), (3, 130, 64, 70), (2, 64, 64, 160),
                                   (4, 37, 50, 29), (3, 64, 33, 97)])  # fmt: skip
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_slices_several_column_tiles_a_block(per_block, shape, dtype, rng, monkeypatch):
    """The complex slices kernel with a block taking several column tiles (A's slices, shifts
    and row sums formed once, each tile's B and rounding in turn; the default where a stack
    has blocks to spare, forced here on small stacks): the NumPy engine's bits for the
    default plan (the probe's shifts), explicit moduli (shifts formed in the kernel, 8 and 9
    digits), whole and partial tiles, and A's NaN and Inf counted once."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    taken = []
    monkeypatch.setattr(
        cuda_engine_module,
        "_complex_tiles_per_block",
        lambda *args: taken.append(args) or per_block,
    )
    batch, m, k, n = shape
    a = phi_matrix(rng, (batch, m, k), 1.0, dtype)
    b = phi_matrix(rng, (batch, k, n), 1.0, dtype)
    for kw in ({}, {"moduli": 14}, {"moduli": 18}):
        got, prof = _gpu_call(a, b, **kw)
        assert "fused" in prof.ms
        np.testing.assert_array_equal(got, ozfft.matmul(a, b, **kw))
    assert taken and all(args[2] == -(-n // 32) for args in taken)
    a[batch - 1, m - 1, 0] = np.inf
    a[0, 0, k - 1] = np.nan
    with pytest.raises(ozfft.NonFiniteInputError) as info:
        ozfft.matmul(cp.asarray(a), cp.asarray(b), moduli=14)
    assert (info.value.operand, info.value.count) == ("a", 2)


@pytest.mark.parametrize("shape", [(5, 64, 64, 64), (3, 130, 64, 70), (4, 37, 50, 29),
                                   (2, 64, 33, 97), (1, 40, 3, 45), (1, 70, 64, 40)])  # fmt: skip
@pytest.mark.parametrize("dtype", DTYPES)
def test_slices_read_b_in_place(shape, dtype, rng, monkeypatch):
    """With explicit moduli the slices kernels read B itself (OZ_SP_B_COLUMNS: its columns'
    statistics and digits, no transposed copy in front of them): the NumPy engine's bits on
    whole and partial tiles (k < 64, columns past n, 2-D operands), for 7 and 8 digits,
    with zero, subnormal and huge columns; a B that is not C-contiguous is prepared
    instead, with the same bits. NaN and Inf entries of B are counted once each."""
    from ozfft.engines.cuda import engine as cuda_engine_module

    prepared = []
    prepare = cuda_engine_module.CudaEngine.prepare_operand

    def spy(self, x):  # (A arrives C-contiguous; B^T as a view unless read in place)
        prepared.append(x.flags.c_contiguous)
        return prepare(self, x)

    monkeypatch.setattr(cuda_engine_module.CudaEngine, "prepare_operand", spy)
    batch, m, k, n = shape
    a = phi_matrix(rng, (batch, m, k), 3.0, dtype)
    b = phi_matrix(rng, (batch, k, n), 3.0, dtype)
    real = np.finfo(dtype).dtype
    b[0, :, 0] = 0
    b[-1, :, 1] = np.finfo(real).smallest_subnormal * rng.integers(-9, 10, k)
    if np.dtype(dtype).kind == "c":
        b[-1, :, 1] *= 1j
    b[-1, 0, 2] = np.finfo(real).max / 4
    if batch == 1:  # 2-D operands
        a, b = a[0], b[0]
    for moduli in (14, 16):  # 7 and 8 digits
        prepared.clear()
        got, prof = _gpu_call(a, b, moduli=moduli)
        assert "fused" in prof.ms and all(prepared)  # B was read in place
        np.testing.assert_array_equal(got, ozfft.matmul(a, b, moduli=moduli))
    bad = b.copy()
    first, last = ((), ()) if b.ndim == 2 else ((0,), (batch - 1,))
    bad[(*first, k - 1, n - 1)] = np.inf
    bad[(*last, 0, 0)] = np.nan
    with profile_phases() as prof, pytest.raises(ozfft.NonFiniteInputError) as info:
        ozfft.matmul(cp.asarray(a), cp.asarray(bad), moduli=14)
    assert (info.value.operand, info.value.count) == ("b", 2) and "fused" in prof.ms
    # a B that is every other column of a wider array (binary64: no widening copy)
    wider = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    a, b = a.astype(wider), b.astype(wider)
    wide = np.zeros((*b.shape[:-1], 2 * n), wider)
    wide[..., ::2] = b
    strided = cp.asarray(wide)[..., ::2]
    ozfft.matmul(cp.asarray(a), strided, moduli=14)  # (compiled outside the count)
    prepared.clear()
    got = cp.asnumpy(ozfft.matmul(cp.asarray(a), strided, moduli=14))
    assert not all(prepared)
    np.testing.assert_array_equal(got, ozfft.matmul(a, b, moduli=14))


def test_engine_reads_b_in_place_only_where_it_may(rng, monkeypatch):
    """Engine level: the transposed view of a C-contiguous B (complex and real, one item a
    block) is read in place and gives the bits of its prepared rows; a stack of items of at
    most 32 rows and columns (several a block) has the view prepared, same bits."""
    from ozfft.engines.cuda import engine as cuda_engine_module
    from ozfft.ozaki.residue_system import int8_system
    from ozfft.scheme.gemm import gaussian_system_for

    _, gpu = _engines()
    prepared = []
    prepare = cuda_engine_module.CudaEngine.prepare_operand

    def spy(self, x):
        prepared.append(x.shape)
        return prepare(self, x)

    monkeypatch.setattr(cuda_engine_module.CudaEngine, "prepare_operand", spy)
    for dtype, m, n in ((np.complex128, 70, 50), (np.float64, 70, 50), (np.float64, 20, 12)):
        moduli = int8_system(14)
        if dtype == np.complex128:
            moduli = gaussian_system_for(moduli)
        a = cp.asarray(phi_matrix(rng, (3, m, 64), 1.0, dtype))
        b = cp.asarray(phi_matrix(rng, (3, 64, n), 1.0, dtype))
        view = b.swapaxes(-1, -2)
        assert not view.flags.c_contiguous
        prepared.clear()
        got = gpu.fused_fast_product(a, view, 110, moduli, dtype, rounding="nearest")
        assert got is not None
        assert prepared == ([] if m > 32 else [view.shape])  # read in place, or prepared
        rows = cp.ascontiguousarray(view)
        want = gpu.fused_fast_product(a, rows, 110, moduli, dtype, rounding="nearest")
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want))


#: signatures of the prepared-call tests: operand shapes and B's layout ("c": C-contiguous,
#: "transposed": a transposed view whose Bt is C-contiguous, "strided": every other column)
PREPARED_SIGNATURES = [
    ((4, 64, 64), (4, 64, 64), "c"), ((2, 3, 37, 50), (2, 3, 50, 29), "c"),
    ((70, 40), (40, 45), "c"), ((70, 40), (45, 40), "transposed"),
    ((3, 20, 12), (3, 12, 9), "c"), ((3, 64, 33), (3, 33, 97), "strided"),
]  # fmt: skip


def _laid_out_operands(rng, a_shape, b_shape, b_layout, dtype, phi):
    """``(a, b, da, db)``: phi-matrices on the host and on the device, B laid out as
    ``b_layout`` says (the host copy the same view where it is transposed)."""
    a = phi_matrix(rng, a_shape, phi, dtype)
    b = phi_matrix(rng, b_shape, phi, dtype)
    da, db = cp.asarray(a), cp.asarray(b)
    if b_layout == "transposed":  # B = a transposed view (its Bt is C-contiguous)
        b, db = b.T, db.T
    elif b_layout == "strided":  # every other column of a wider array
        wide = cp.zeros((*b.shape[:-1], 2 * b.shape[-1]), dtype)
        wide[..., ::2] = db
        db = wide[..., ::2]
    return a, b, da, db


def _count_validations(monkeypatch, device_only: bool = True) -> list:
    """The validations (``linalg._prepare``) of the calls that follow, one entry each
    (``device_only``: of the device calls; the NumPy engine's, the references, not)."""
    from ozfft import linalg

    validated = []
    prepare = linalg._prepare

    def counted(a, b):
        validated.extend([1] if isinstance(a, cp.ndarray) or not device_only else [])
        return prepare(a, b)

    monkeypatch.setattr(linalg, "_prepare", counted)
    return validated


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape, b_shape, b_layout", PREPARED_SIGNATURES)
def test_explicit_calls_prepared_per_signature(a_shape, b_shape, b_layout, dtype, rng, monkeypatch):
    """An explicit-count call on device operands is validated and planned once per
    signature (ozfft.linalg._prepared_product): later calls only allocate, launch and read
    (binary32 operands converted first), with the bits of the NumPy engine on new values of
    the same layout, their own NaN/Inf test, and a new plan where a variable (OZFFT_SLICES)
    or the layout changes."""
    validated = _count_validations(monkeypatch)

    def operands():
        return _laid_out_operands(rng, a_shape, b_shape, b_layout, dtype, 2.0)

    for _ in range(3):
        a, b, da, db = operands()
        got = ozfft.matmul(da, db, moduli=14)
        assert got.shape == np.matmul(a, b).shape and got.dtype == dtype
        np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b, moduli=14))
        assert len(validated) == 1  # the first call of the signature only
    a, b, da, db = operands()
    da[(0,) * (da.ndim - 2) + (1, 2)] = np.nan  # the count is read on every call
    with pytest.raises(ozfft.NonFiniteInputError) as info:
        ozfft.matmul(da, db, moduli=14)
    assert (info.value.operand, info.value.count) == ("a", 1) and len(validated) == 1
    da[(0,) * (da.ndim - 2) + (1, 2)] = 0
    db[(0,) * (db.ndim - 2) + (0, 1)] = np.inf  # the counts start from zero again
    db[(-1,) * (db.ndim - 2) + (2, 0)] = -np.inf
    with pytest.raises(ozfft.NonFiniteInputError) as info:
        ozfft.matmul(da, db, moduli=14)
    assert (info.value.operand, info.value.count) == ("b", 2) and len(validated) == 1
    a, b, da, db = operands()  # finite operands after the errors: no error, the same bits
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.matmul(da, db, moduli=14)), ozfft.matmul(a, b, moduli=14)
    )
    assert len(validated) == 1
    monkeypatch.setenv("OZFFT_SLICES", "0")  # residues: a new plan, the same bits
    a, b, da, db = operands()
    with profile_phases() as prof:
        got = ozfft.matmul(da, db, moduli=14)
    assert "fused" in prof.ms and len(validated) == 2
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b, moduli=14))
    other = cp.ascontiguousarray(db) if b_layout != "c" else cp.asfortranarray(db)
    got = ozfft.matmul(da, other, moduli=14)  # another layout of B: another signature
    assert len(validated) == 3
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b, moduli=14))
    for other in ({"moduli": 15}, {"moduli": 14, "mode": "accurate"}):
        ozfft.matmul(da, db, **other)  # other options: other signatures
    assert len(validated) == 5
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.matmul(da, db, moduli=14, mode="accurate")),
        ozfft.matmul(a, b, moduli=14, mode="accurate"),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape, b_shape, b_layout", PREPARED_SIGNATURES)
def test_default_calls_prepared_per_signature(a_shape, b_shape, b_layout, dtype, rng, monkeypatch):
    """A default-count call on device operands is validated and planned once per signature
    (ozfft.linalg._guaranteed_product): later calls queue the one-pass probe and the product
    and read the probe. Where the probe proves the default count the general decision does
    not run; where it does not (wide ranges), the decision runs from that same probe (one
    probe a call). Every call has the NumPy engine's bits; NaN and Inf are raised (A first,
    exact counts) on later calls of the signature."""
    from ozfft import linalg
    from ozfft.engines.cuda import engine as cuda_engine_module

    validated = _count_validations(monkeypatch)
    decided, probes = [], []
    decide = linalg.guaranteed_matmul
    queue_probe = cuda_engine_module.CudaEngine._queue_probe

    def counted_decision(engine, *args, **kwargs):
        decided.extend([] if engine.xp is np else [kwargs.get("probed") is not None])
        return decide(engine, *args, **kwargs)

    def counted_probe(self, *args, **kwargs):
        pending, shifts_at = queue_probe(self, *args, **kwargs)
        probes.append(pending)
        return pending, shifts_at

    monkeypatch.setattr(linalg, "guaranteed_matmul", counted_decision)
    monkeypatch.setattr(cuda_engine_module.CudaEngine, "_queue_probe", counted_probe)
    # a C-contiguous B (binary32 operands: their binary64 copies are) of items the slices
    # kernel takes one a block (more than 32 rows or columns) is read in place by the probe
    # and the product: the probe writes no Bt rows
    c_order = b_layout == "c" or dtype in (np.float32, np.complex64)
    shared_b = c_order and max(a_shape[-2], b_shape[-1]) > 32

    def operands(phi):
        return _laid_out_operands(rng, a_shape, b_shape, b_layout, dtype, phi)

    for phi in (0.5, 0.5, 8.0, 0.5, 8.0):  # (8: wide ranges, which the test does not prove)
        a, b, da, db = operands(phi)
        plan = linalg.matmul_plan(a, b)  # the NumPy engine's decision
        proved = plan.reason == "default moduli proved (tiled bound)"
        assert proved == (phi == 0.5)
        decided.clear(), probes.clear()
        got = ozfft.matmul(da, db)
        assert got.shape == np.matmul(a, b).shape and got.dtype == dtype
        np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b))
        assert len(validated) == 1  # the first call of the signature only
        assert decided == ([] if proved else [True]) and len(probes) == 1
        assert (probes[0].bt is None) == shared_b
    a, b, da, db = operands(0.5)
    da[(0,) * (da.ndim - 2) + (1, 2)] = np.nan
    with pytest.raises(ozfft.NonFiniteInputError) as info:
        ozfft.matmul(da, db)
    assert (info.value.operand, info.value.count) == ("a", 1) and len(validated) == 1
    da[(0,) * (da.ndim - 2) + (1, 2)] = 0
    db[(0,) * (db.ndim - 2) + (0, 1)] = np.inf
    db[(-1,) * (db.ndim - 2) + (2, 0)] = -np.inf
    with pytest.raises(ozfft.NonFiniteInputError) as info:
        ozfft.matmul(da, db)
    assert (info.value.operand, info.value.count) == ("b", 2) and len(validated) == 1
    a, b, da, db = operands(0.5)  # finite operands after the errors: the same bits
    with profile_phases() as prof:
        got = ozfft.matmul(da, db)
    assert {"guarantee", "fused"} <= set(prof.ms) and len(validated) == 1
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b))
    monkeypatch.setenv("OZFFT_SLICES", "0")  # residues: a new signature, the same bits
    np.testing.assert_array_equal(cp.asnumpy(ozfft.matmul(da, db)), ozfft.matmul(a, b))
    assert len(validated) == 2
    got = ozfft.matmul(da, db, precision="fp32")  # other options: another signature
    assert len(validated) == 3
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b, precision="fp32"))
    ozfft.matmul(da, db, precision="fp32")  # (prepared as well: not validated again)
    assert len(validated) == 3
    if np.dtype(dtype).char in "dD":  # near overflow: the product rounded apart, decided
        # from the same probe (the NumPy engine's bits)
        a, b, da, db = operands(0.5)
        big = 2.0**510
        decided.clear()
        with np.errstate(over="ignore", invalid="ignore"):
            want = ozfft.matmul(a * big, b * big)
        got = ozfft.matmul(da * big, db * big)
        assert decided == [True]
        np.testing.assert_array_equal(cp.asnumpy(got), want)


@pytest.mark.parametrize("kw", [{"moduli": 12}, {}])
def test_calls_that_are_not_prepared(kw, rng, monkeypatch):
    """Calls the prepared path leaves to the general one, with an explicit count and with
    the default one: numpy operands, out=, mixed dtypes, broadcast batches, and (default
    count) a product past the speculative work; each validated on every call, each the
    NumPy engine's bits."""
    from ozfft import linalg
    from ozfft.scheme import gemm

    validated = _count_validations(monkeypatch, device_only=False)
    a = phi_matrix(rng, (2, 20, 16), 1.0)
    b = phi_matrix(rng, (2, 16, 12), 1.0)
    da, db = cp.asarray(a), cp.asarray(b)
    a32 = a.astype(np.float32)
    calls = [  # (the call, the NumPy engine's result of it)
        (lambda: ozfft.matmul(a, b, **kw), lambda: ozfft.matmul(a, b, **kw)),
        (
            lambda: ozfft.matmul(da, db, cp.empty((2, 20, 12)), **kw),
            lambda: ozfft.matmul(a, b, **kw),
        ),
        (
            lambda: ozfft.matmul(cp.asarray(a32), db, **kw),
            lambda: ozfft.matmul(a32, b, **kw),
        ),
        (lambda: ozfft.matmul(da, db[:1], **kw), lambda: ozfft.matmul(a, b[:1], **kw)),
    ]
    if not kw:  # the default count's product queued before the probe's answer: at most
        # _SPECULATE_WORK (batch m n k); past it, the general path
        monkeypatch.setattr(gemm, "_SPECULATE_WORK", 2 * 20 * 12 * 16 - 1)
        calls.append((lambda: ozfft.matmul(da, db), lambda: ozfft.matmul(a, b)))
    for call, reference in calls:
        want = reference()
        validated.clear()
        first, second = call(), call()
        assert len(validated) >= 2  # (a first call that only declines validates once more)
        for got in (first, second):
            np.testing.assert_array_equal(np.asarray(cp.asnumpy(got)), want)
    moduli = kw.get("moduli")
    assert linalg._prepared_product(a, b, "fp64", moduli, "fast", None) is None  # numpy: never


def test_flagged_counts_read_and_recover():
    """engines/cuda/flags.py FlaggedCounts: a call that counted reads its counts and leaves
    them zero; a call interrupted between its launch and its read (its counts and flag
    set, never read) leaves nothing behind for the next call."""
    from ozfft.engines.cuda.flags import FlaggedCounts

    kept = FlaggedCounts(cp)

    def counts(ptr):  # as the kernel sees them: 4 counts, then the flag's address
        memory = cp.cuda.UnownedMemory(ptr, 40, kept)
        return cp.ndarray((5,), cp.uint64, cp.cuda.MemoryPointer(memory, 0))

    device = counts(kept.arm())
    assert kept.read() is None  # nothing counted
    device = counts(kept.arm())
    device[1], device[2] = 3, 5  # as oz_sp_count: the counts, then the flag
    kept._flag[0] = 1
    np.testing.assert_array_equal(kept.read(), [0, 3, 5, 0])
    assert not device[:4].any()
    device = counts(kept.arm())
    device[0] = 7
    kept._flag[0] = 1  # ... and this call never reads (interrupted)
    device = counts(kept.arm())
    assert not device[:4].any() and kept.read() is None
    assert int(device[4]) != 0  # (the flag's address stays)
