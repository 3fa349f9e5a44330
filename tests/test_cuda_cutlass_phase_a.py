"""The CUTLASS Phase A (``kernels/gemm/modp_igemm.cu``): byte planes against exact integer
products mod p, and whole products against the NumPy engine and the cuBLAS INT32-plane
path (needs a Hopper GPU, CUTLASS's headers and nvcc; skipped elsewhere)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft.reference import phi_matrix

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def igemm():
    from ozfft.engines.cuda.cutlass_phase_a import modp_igemm, unavailable_reason

    try:
        device = cp.cuda.runtime.getDevice()
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device")
    reason = unavailable_reason(device)
    if reason is not None:
        pytest.skip(f"CUTLASS Phase A unavailable: {reason}")
    lib = modp_igemm(device)
    assert lib is not None, "available but not built (see the ozfft logger's warning)"
    return lib


def _products_mod_p(lib, a, bt, moduli, ldd):
    """Run the library on residue stacks ``a`` (count, m, kp), ``bt`` (count, n, kp) with
    ``ldd``-byte output rows; returns the byte planes (count, m, ldd) as numpy."""
    count, m, kp = a.shape
    n = bt.shape[1]
    da, dbt = cp.asarray(a), cp.asarray(bt)
    d = cp.full((count, m, ldd), 0xEE, cp.uint8)  # junk where nothing is stored
    from ozfft.engines.cuda.cutlass_phase_a import epilogue_table

    table = cp.asarray(epilogue_table(tuple(moduli)))
    device = cp.cuda.runtime.getDevice()
    stream = cp.cuda.get_current_stream().ptr
    work = lib.workspace_bytes(m, n, kp, count, device)
    scratch = cp.empty(work, cp.uint8)
    lib(da.data.ptr, kp, m * kp, dbt.data.ptr, kp, n * kp, d.data.ptr, ldd, m * ldd,
        table.data.ptr, m, n, kp, count, stream=stream, device=device,
        workspace=scratch.data.ptr, workspace_bytes=work)  # fmt: skip
    return cp.asnumpy(d)


@pytest.mark.parametrize(
    "m, n, kp",
    [(1, 16, 16), (128, 128, 128), (129, 144, 48), (300, 272, 80), (17, 384, 4096),
     (256, 16, 208), (64, 48, 512), (64, 48, 528), (64, 48, 65536)],
)  # fmt: skip
def test_byte_planes_are_the_products_mod_p(igemm, m, n, kp, rng):
    """Every stored byte is ``(A_l Bt_l^T) mod p_l`` of the exact integer product, for
    residues spanning [-128, 127] (sums of both signs; the largest |sums| of both
    epilogues, 2**23 at k = MODP_IGEMM_SHORT_K = 512 and 2**30 at k = 2**16, with every term
    (-128)(-128), and the first k past the short one), tile edges in m and n, k not a
    multiple of the 128-byte stage, and the power-of-two modulus 256; bytes past n are left
    alone."""
    from ozfft.ozaki.residue_system import int8_system

    moduli = int8_system(16).moduli[: 3 if kp > 4096 else 16]
    count = len(moduli)
    a = rng.integers(-128, 128, (count, m, kp), dtype=np.int8)
    bt = rng.integers(-128, 128, (count, n, kp), dtype=np.int8)
    if kp >= 512:  # the extreme sums, for 256 and for 255 (the tightest bound of both epilogues)
        a[:2] = -128
        bt[:2, : n // 2] = -128
        bt[:2, n // 2 :] = 127
    ldd = -(-n // 16) * 16 + 16
    got = _products_mod_p(igemm, a, bt, moduli, ldd)
    for i, p in enumerate(moduli):
        exact = a[i].astype(np.int64) @ bt[i].astype(np.int64).T
        np.testing.assert_array_equal(got[i, :, :n], exact % p, err_msg=f"modulus {p}")
    assert (got[:, :, n:] == 0xEE).all()


@pytest.mark.parametrize("kp", [256, 512])
def test_byte_planes_of_many_tiles_a_block(igemm, kp, rng):
    """Products of several hundred tiles, so that each persistent block takes many in turn
    (the short-k epilogue alternates two staging buffers between them), with a partial last
    row and column tile: every byte against the exact products mod p (binary64 products of
    the integer residues, exact below 2**53); the padding past n is left alone."""
    from ozfft.ozaki.residue_system import int8_system

    moduli = int8_system(16).moduli
    m, n = 1000, 1040
    a = rng.integers(-128, 128, (len(moduli), m, kp), dtype=np.int8)
    bt = rng.integers(-128, 128, (len(moduli), n, kp), dtype=np.int8)
    got = _products_mod_p(igemm, a, bt, moduli, n + 32)
    for i, p in enumerate(moduli):
        exact = a[i].astype(np.float64) @ bt[i].astype(np.float64).T
        np.testing.assert_array_equal(got[i, :, :n], exact % p, err_msg=f"modulus {p}")
    assert (got[:, :, n:] == 0xEE).all()


def test_misaligned_stride_is_an_error(igemm):
    """A row stride that TMA cannot take is refused with CUTLASS's status, not run."""
    a = cp.zeros((1, 8, 32), cp.int8)
    d = cp.zeros((1, 8, 16), cp.uint8)
    from ozfft.engines.cuda.cutlass_phase_a import epilogue_table

    table = cp.asarray(epilogue_table((251,)))
    device = cp.cuda.runtime.getDevice()
    with pytest.raises(RuntimeError, match=r"CUTLASS Phase A .* failed"):
        igemm(a.data.ptr, 24, 256, a.data.ptr, 32, 256, d.data.ptr, 16, 128, table.data.ptr,
              8, 8, 24, 1, stream=cp.cuda.get_current_stream().ptr, device=device)  # fmt: skip


def _count_byte_products(monkeypatch):
    """Count the CUDA engine's products whose Phase A ran on CUTLASS (byte planes)."""
    from ozfft.engines.cuda.engine import CudaEngine

    calls = []
    original = CudaEngine._cutlass_blocks

    def counted(self, *args, **kwargs):
        calls.append(args[1].shape)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CudaEngine, "_cutlass_blocks", counted)
    return calls


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
@pytest.mark.parametrize("shape", [(130, 100, 272), (7, 4096, 16), (1, 77, 128), (200, 65, 64)])
def test_byte_plane_products_bitwise(igemm, dtype, shape, rng, monkeypatch):
    """Products whose Phase A is the CUTLASS kernel give the NumPy engine's bits and those
    of the cuBLAS path with INT32 planes (``OZFFT_CUTLASS=0``), in both modes."""
    m, k, n = shape
    a = phi_matrix(rng, (m, k), 2.0, dtype)
    b = phi_matrix(rng, (k, n), 2.0, dtype)
    calls = _count_byte_products(monkeypatch)
    for kw in ({}, {"mode": "accurate"}, {"moduli": 9}):
        want = ozfft.matmul(a, b, **kw)
        got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b), **kw))
        np.testing.assert_array_equal(got, want)
        monkeypatch.setenv("OZFFT_CUTLASS", "0")
        staged = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b), **kw))
        monkeypatch.delenv("OZFFT_CUTLASS")
        np.testing.assert_array_equal(staged, want)
    assert len(calls) >= 3  # the byte planes ran (not the fused or stacked paths)


@pytest.mark.parametrize("method", ["gaussian", "karatsuba", "4m"])
def test_byte_planes_every_complex_method(igemm, method, rng, monkeypatch):
    """Each complex method's products (Gaussian T+ and T-, Karatsuba's three, the four
    products with cross pairs) reduced to bytes rebuild the NumPy engine's bits."""
    from ozfft.engines.select import cuda_engine, numpy_engine
    from ozfft.scheme.gemm import emulated_matmul

    a = phi_matrix(rng, (150, 200), 2.0, np.complex128)
    b = phi_matrix(rng, (200, 144), 2.0, np.complex128)
    calls = _count_byte_products(monkeypatch)
    for num_moduli in (2, 15, 20):
        kw = dict(num_moduli=num_moduli, mode="fast", out_dtype=np.complex128)
        want = emulated_matmul(numpy_engine(), a, b, complex_method="karatsuba", **kw)
        got = emulated_matmul(
            cuda_engine(), cp.asarray(a), cp.asarray(b), complex_method=method, **kw
        )
        np.testing.assert_array_equal(cp.asnumpy(got), want)
    assert len(calls) == 3


def test_byte_planes_in_column_blocks_and_items(igemm, monkeypatch, rng):
    """A workspace cap that cuts the byte planes into column blocks, and a stack whose
    items run one after another, give the NumPy engine's bits."""
    a = phi_matrix(rng, (300, 100), 1.0, np.complex128)
    b = phi_matrix(rng, (100, 1008), 1.0, np.complex128)
    want = ozfft.matmul(a, b)
    calls = _count_byte_products(monkeypatch)
    # ~18 moduli x 2-3 products x 300 rows of bytes: ~16 KB a column, 512-column blocks
    monkeypatch.setenv("OZFFT_WORKSPACE", str(9 << 20))
    got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b)))
    np.testing.assert_array_equal(got, want)
    assert len(calls) == 1, calls
    a3 = phi_matrix(rng, (3, 200, 96), 1.0)
    b3 = phi_matrix(rng, (3, 96, 896), 1.0)
    got = cp.asnumpy(ozfft.matmul(cp.asarray(a3), cp.asarray(b3), moduli=12))
    np.testing.assert_array_equal(got, ozfft.matmul(a3, b3, moduli=12))
    assert len(calls) == 2, calls


@pytest.mark.parametrize("shape", [(5, 1 << 16 | 1, 16), (100, 100, 257)])
def test_what_cutlass_cannot_take_stays_on_cublas(igemm, monkeypatch, rng, shape):
    """Past MODP_IGEMM_MAX_K (k-blocked sums) and where n is not a multiple of 16 the
    INT32-plane path runs, the same bits."""
    m, k, n = shape
    a = phi_matrix(rng, (m, k), 1.0)
    b = phi_matrix(rng, (k, n), 1.0)
    calls = _count_byte_products(monkeypatch)
    got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b)))
    np.testing.assert_array_equal(got, ozfft.matmul(a, b))
    assert calls == []


def test_runs_on_cupys_current_stream(igemm, rng, monkeypatch):
    """Phase A goes on cupy's current stream: on a non-blocking stream (no implicit
    ordering with the legacy default stream) Phase B, queued after it there, sees its
    planes, over repeated calls."""
    a = phi_matrix(rng, (1024, 512), 1.0)
    b = phi_matrix(rng, (512, 1024), 1.0)
    want = ozfft.matmul(a, b, moduli=14)
    calls = _count_byte_products(monkeypatch)
    da, db = cp.asarray(a), cp.asarray(b)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        outs = [ozfft.matmul(da, db, moduli=14) for _ in range(4)]
    stream.synchronize()
    for got in outs:
        np.testing.assert_array_equal(cp.asnumpy(got), want)
    assert len(calls) == 4


def test_runs_on_cupys_current_device(igemm, rng):
    """With two or more GPUs, a product on device 1 (cupy's current device) runs there and
    gives the NumPy engine's bits."""
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    a = phi_matrix(rng, (300, 200), 1.0, np.complex128)
    b = phi_matrix(rng, (200, 272), 1.0, np.complex128)
    with cp.cuda.Device(1):
        da, db = cp.asarray(a), cp.asarray(b)
        got = ozfft.matmul(da, db)
        assert got.device.id == 1
        got = cp.asnumpy(got)
    np.testing.assert_array_equal(got, ozfft.matmul(a, b))


@pytest.mark.parametrize("vec", [1, 2, 4, 8])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.complex64])
def test_phase_b_outputs_a_thread(igemm, vec, dtype, rng, monkeypatch):
    """Phase B on byte planes with 1, 2, 4 or 8 adjacent outputs a thread (one load of as
    many bytes a plane; ``OZ_PB_VEC``) gives the NumPy engine's bits, tile edges
    included."""
    from ozfft.engines.cuda import engine

    monkeypatch.setattr(engine, "_PB_VEC_REAL", vec)
    monkeypatch.setattr(engine, "_PB_VEC_COMPLEX", vec)
    monkeypatch.setattr(engine, "_PB_DP4A_COMPLEX", False)  # (else Gaussian: four, dp4a)
    a = phi_matrix(rng, (77, 130), 4.0, dtype)
    b = phi_matrix(rng, (130, 1040), 4.0, dtype)
    calls = _count_byte_products(monkeypatch)
    for kw in ({}, {"moduli": 20}):
        got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b), **kw))
        np.testing.assert_array_equal(got, ozfft.matmul(a, b, **kw))
    assert len(calls) >= 2  # (the default call may take several products)


def _recorded_kernels(monkeypatch) -> list[tuple[str, bool]]:
    """The CUDA engine's kernels as it fetches them: (name, whether ``OZ_PB_DP4A``)."""
    from ozfft.engines.cuda import engine

    kernels = []
    original = engine.get_function

    def recorded(source, name, macros):
        kernels.append((name, "OZ_PB_DP4A" in macros))
        return original(source, name, macros)

    monkeypatch.setattr(engine, "get_function", recorded)
    return kernels


#: per kind: the engine's switch, its outputs' dtypes, its byte-plane kernel
_DP4A_KINDS = {
    "real": ("_PB_DP4A", (np.float64, np.float32), "oz_reconstruct_real_vec"),
    "complex": ("_PB_DP4A_COMPLEX", (np.complex128, np.complex64), "oz_reconstruct_complex_vec"),
}


@pytest.mark.parametrize("kind", list(_DP4A_KINDS))
@pytest.mark.parametrize("dp4a", [True, False])
@pytest.mark.parametrize("moduli", [2, 5, 8, 13, 15, 16, 17, 18, 19])
def test_phase_b_dp4a_and_imad_wide(igemm, kind, dp4a, moduli, rng, monkeypatch):
    """Phase B on byte planes, four outputs a thread (complex with ``dp4a``: two without),
    with the weighting on ``dp4a`` (``OZ_PB_DP4A``) and on ``IMAD.WIDE``, binary64 and
    binary32 outputs: the NumPy engine's bits. Real: counts with padded quads, four and two
    outputs a weight. Complex, on Gaussian systems (2 to 21 Gaussian moduli for 2 to 19
    INT8 ones, 2 to 19 weight bytes): each modulus' ``t1 +- t2`` reduced into bytes before
    the ``dp4a``."""
    from ozfft.engines.cuda import engine

    switch, dtypes, kernel = _DP4A_KINDS[kind]
    monkeypatch.setattr(engine, "_PB_VEC_REAL", 4)
    monkeypatch.setattr(engine, switch, dp4a)
    calls = _count_byte_products(monkeypatch)
    kernels = _recorded_kernels(monkeypatch)
    for dtype in dtypes:
        a = phi_matrix(rng, (70, 96), 4.0, dtype)
        b = phi_matrix(rng, (96, 528), 4.0, dtype)
        got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b), moduli=moduli))
        np.testing.assert_array_equal(got, ozfft.matmul(a, b, moduli=moduli))
    assert len(calls) == 2
    assert kernels.count((kernel, dp4a)) == 2
    assert (kernel, not dp4a) not in kernels
