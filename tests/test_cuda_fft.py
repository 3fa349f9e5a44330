"""CUDA FFT: bit-identical to the NumPy engine (needs a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")


def _pair(rng, shape, real=False):
    x = rng.standard_normal(shape)
    if not real:
        x = x + 1j * rng.standard_normal(shape)
    return x, cp.asarray(x)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 65, 97, 128, 512, 1000, 1042, 4096])
def test_fft_1d_bitwise(n, rng):
    x, d = _pair(rng, (3, n))
    for name in ("fft", "ifft"):
        got = getattr(ozfft, name)(d)
        assert isinstance(got, cp.ndarray)
        np.testing.assert_array_equal(cp.asnumpy(got), getattr(ozfft, name)(x))


@pytest.mark.parametrize("shape", [(12, 10, 14), (7, 11, 13), (32, 32, 32), (5, 130)])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fftn_family_bitwise(shape, norm, rng):
    x, d = _pair(rng, shape)
    for name in ("fftn", "ifftn"):
        np.testing.assert_array_equal(
            cp.asnumpy(getattr(ozfft, name)(d, norm=norm)), getattr(ozfft, name)(x, norm=norm)
        )
    xr, dr = _pair(rng, shape, real=True)
    spec = ozfft.rfftn(xr, norm=norm)
    np.testing.assert_array_equal(cp.asnumpy(ozfft.rfftn(dr, norm=norm)), spec)
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.irfftn(cp.asarray(spec), s=shape, axes=range(len(shape)), norm=norm)),
        ozfft.irfftn(spec, s=shape, axes=range(len(shape)), norm=norm),
    )


def test_fp32_and_axes(rng):
    x, d = _pair(rng, (16, 24, 6))
    kw = {"axes": (0, 1), "s": (20, 24), "precision": "fp32"}
    got = ozfft.fftn(d.astype(cp.complex64), **kw)
    assert got.dtype == cp.complex64
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.fftn(x.astype(np.complex64), **kw))


def test_gpu_non_finite():
    d = cp.ones(16, complex)
    d[2] = cp.inf
    with pytest.raises(ozfft.NonFiniteInputError, match=r"operand 'x'.*Inf"):
        ozfft.fft(d)


NON_FINITE_CALLS = {
    # the first pass raises the device flag: one-pass (contiguous and strided axis, a
    # partial block of lines), carried runs, real input, four-step
    "fft": (lambda d: ozfft.fft(d), (9, 64)),
    "fft strided": (lambda d: ozfft.fft(d, axis=0), (64, 9)),
    "fftn": (lambda d: ozfft.fftn(d), (8, 12, 16)),
    "ifftn": (lambda d: ozfft.ifftn(d), (8, 12, 16)),
    "rfftn": (lambda d: ozfft.rfftn(d.real), (8, 12, 16)),
    "four-step": (lambda d: ozfft.fft(d), (2, 4096)),
    # no flag: isfinite when the call ends (a cropped input, the Ozaki-II scheme, c2r)
    "cropped": (lambda d: ozfft.fft(d, n=40), (3, 64)),
    "moduli": (lambda d: ozfft.fft(d, moduli=8), (3, 64)),
    "irfft": (lambda d: ozfft.irfft(d), (3, 33)),
}


@pytest.mark.parametrize("call", sorted(NON_FINITE_CALLS))
@pytest.mark.parametrize("value", [np.nan, -np.inf])
def test_gpu_non_finite_every_path(call, value, rng):
    f, shape = NON_FINITE_CALLS[call]
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    flat = x.reshape(-1)
    position = 7 if call != "cropped" else 5  # inside what the transform reads
    flat[position] = complex(value, 0.0)  # the real part: rfftn reads only that
    kind = "NaN" if np.isnan(value) else "Inf"
    with pytest.raises(ozfft.NonFiniteInputError, match=rf"contains 1 non-finite.*{kind}"):
        f(cp.asarray(x))
    flat[position] = 1.0  # the flag is per call: the same path on finite data runs
    np.testing.assert_array_equal(cp.asnumpy(f(cp.asarray(x))), f(x))


# -- the fused fixed-point pass (engines/cuda/fft.py, kernels/fft/fixed_pass.cu) --------

FIXED_LENGTHS = [2, 3, 5, 8, 12, 16, 30, 31, 48, 64, 100, 128, 210, 256, 343, 512, 1000, 1024]


@pytest.mark.parametrize("n", FIXED_LENGTHS)
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_fused_1d_bitwise(n, precision, rng):
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    assert get_plan(n, FFTOptions(precision=precision)).scheme == "fixed"
    x, d = _pair(rng, (9, n))  # 9 lines: one full block of 8 and a partial one
    x[3] *= 2.0**-600
    x[5] = 0
    d = cp.asarray(x)
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.fft(d, precision=precision)), ozfft.fft(x, precision=precision)
    )


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(64, 64, 64), (12, 30, 20), (5, 256, 3)])
def test_fused_every_axis_and_order(shape, order, rng):
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    x = np.asarray(x, order=order)
    d = cp.asarray(x, order=order)
    for axis in range(3):
        np.testing.assert_array_equal(cp.asnumpy(ozfft.fft(d, axis=axis)), ozfft.fft(x, axis=axis))
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fftn(d)), ozfft.fftn(x))
    strided = d[:, ::2]  # non-contiguous input
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fftn(strided)), ozfft.fftn(x[:, ::2]))


@pytest.mark.parametrize("axes", [None, (2, 0, 1), (1, 2, 0), (0, 2), (2, 0), (1, 1, 0)])
def test_carried_passes_bitwise(axes, rng):
    """Runs of fused axes hand fixed point on (either order of the previous axis, repeated
    axes breaking the run): GPU and NumPy engines give the same bits."""
    x = rng.standard_normal((12, 16, 10)) + 1j * rng.standard_normal((12, 16, 10))
    x[3] *= 2.0**-300
    x[5, 2] = 0
    x[7, :, 4] = 5e-324
    d = cp.asarray(x)
    for f in (ozfft.fftn, ozfft.ifftn):
        np.testing.assert_array_equal(cp.asnumpy(f(d, axes=axes)), f(x, axes=axes))
    for norm in ("ortho", "forward"):
        np.testing.assert_array_equal(
            cp.asnumpy(ozfft.ifftn(d, axes=axes, norm=norm)), ozfft.ifftn(x, axes=axes, norm=norm)
        )
    r = x.real.copy()
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.rfftn(cp.asarray(r), axes=axes)), ozfft.rfftn(r, axes=axes)
    )
    spec = ozfft.rfftn(r)
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.irfftn(cp.asarray(spec), s=r.shape, axes=range(r.ndim))),
        ozfft.irfftn(spec, s=r.shape, axes=range(r.ndim)),
    )


def test_carried_passes_4d_and_fp32(rng):
    x = rng.standard_normal((3, 8, 6, 5)) + 1j * rng.standard_normal((3, 8, 6, 5))
    d = cp.asarray(x)
    for precision in ("fp64", "fp32"):
        np.testing.assert_array_equal(
            cp.asnumpy(ozfft.fftn(d, precision=precision)), ozfft.fftn(x, precision=precision)
        )
    f = np.asfortranarray(x)
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fftn(cp.asarray(f, order="F"))), ozfft.fftn(f))


def test_fused_extreme_values():
    x = np.zeros((4, 64), complex)
    x[0] = 5e-324
    x[1, 3] = -1e308
    x[2] = 1e-310 * (1 + 1j)
    x[3, ::2] = 1e300
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fft(cp.asarray(x))), ozfft.fft(x))


def test_fused_kernel_has_no_fp64_arithmetic():
    """The per-axis kernel's SASS: integer and tensor-core work only (conversions at the
    edges are integer bit assembly too)."""
    import re
    import shutil
    import subprocess

    from ozfft.engines.cuda.compiler import cubin_path
    from ozfft.engines.cuda.fft import FixedPassExecutor
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    tool = shutil.which("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump not on PATH")
    for n in (64, 512, 1000, 1024):  # 1024: two blocks per line (a cluster)
        ex = FixedPassExecutor(get_plan(n, FFTOptions()))
        for carry_in, carry_out, real_in, wide in [
            (False, False, False, False),
            (False, True, False, False),
            (True, True, False, False),
            (True, False, False, False),
            (False, True, True, False),
            (False, False, False, True),
            (True, True, False, True),
        ]:
            ex.kernel(carry_in, carry_out, real_in, wide)  # compiled into the cache
            macros = ex.kernel_macros(carry_in, carry_out, real_in, wide)
            path = cubin_path("fft/fixed_pass.cu", macros)
            sass = subprocess.run(
                [tool, "-sass", str(path)], capture_output=True, text=True, check=True
            ).stdout
            assert "IMMA" in sass  # the stages run on INT8 tensor cores
            fp64 = re.findall(r"\b(D(?:FMA|ADD|MUL|SETP|MNMX)|[IF]2F\.F64|F2I\.F64)\b", sass)
            assert not fp64, sorted(set(fp64))
    # the FP8 kernel: e4m3 MMAs (on sm_90 ptxas unpacks them to f16 HMMAs), no FP64 either
    for n in (512, 1024):
        ex = FixedPassExecutor(get_plan(n, FFTOptions()), phase_a="fp8")
        ex.kernel()
        sass = subprocess.run(
            [tool, "-sass", str(cubin_path("fft/fixed_pass.cu", ex.kernel_macros()))],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "IMMA" not in sass and re.search(r"\b[HQ]MMA", sass)
        fp64 = re.findall(r"\b(D(?:FMA|ADD|MUL|SETP|MNMX)|[IF]2F\.F64|F2I\.F64)\b", sass)
        assert not fp64, sorted(set(fp64))


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("n", [16, 60, 243, 512, 1000, 1024, 4096, 1031])
def test_fp8_phase_a_bitwise(n, precision, rng):
    """phase_a="fp8": the fused passes' stage products on e4m3 MMAs (each byte digit as
    two 4-bit halves, FP32 sums below 2**24) give the INT8 path's integers, so the same
    bits as phase_a="int8" and as the NumPy engine's FP8 path: contiguous and strided
    axes, carried n-D passes, real input, four-step (4096) and Bluestein (1031) lengths."""
    from ozfft.engines.select import compute_capability

    if compute_capability() < (8, 9):
        pytest.skip("FP8 tensor cores need compute capability 8.9")
    x = rng.standard_normal((3, n, 5)) + 1j * rng.standard_normal((3, n, 5))
    x[0, :, 0] *= 1e-300
    xc = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    cases = [
        ("fft", xc, {}),
        ("fft", x, {"axis": 1}),
        ("fftn", x, {"axes": (0, 1)}),
        ("rfft", x.real.copy(), {"axis": 1}),
    ]
    for name, a, kw in cases:
        kw = dict(kw, precision=precision)
        got = cp.asnumpy(getattr(ozfft, name)(cp.asarray(a), phase_a="fp8", **kw))
        int8 = cp.asnumpy(getattr(ozfft, name)(cp.asarray(a), phase_a="int8", **kw))
        np.testing.assert_array_equal(got.view(np.uint8), int8.view(np.uint8))
        np.testing.assert_array_equal(got, getattr(ozfft, name)(a, phase_a="fp8", **kw))


@pytest.mark.parametrize("n", [960, 1024])
def test_two_blocks_per_line_bitwise(n, rng):
    """Lines of about 1000 run on a cluster of two blocks, each holding half of every line
    (stage 1's layout, the exchange, the later stages' halves): the same integers as one
    block per line and as the NumPy engine, for float64, carried and real input, conj(x),
    contiguous and strided axes, blocks of fewer than 8 lines, lines of subnormals or zeros
    (the exact exponent sweep) and non-finite values in either half of a line."""
    from ozfft.engines.select import cuda_engine
    from ozfft.fourier.cache import get_executor, get_plan
    from ozfft.options import FFTOptions

    ex = get_executor(cuda_engine(), get_plan(n, FFTOptions()))
    if ex.cluster != 2:
        pytest.skip("thread block clusters need compute capability 9.0")
    x = rng.standard_normal((3, n, 5)) + 1j * rng.standard_normal((3, n, 5))
    x[0, :, 0] = 5e-324 * np.arange(n)  # a line of subnormals (strided passes)
    x[1, :, 1] = 0
    x[2, n // 2 + 3, 2] = 1e-310  # a line whose only nonzero lies in the second half
    x[2, :, 2] = np.where(np.arange(n) == n // 2 + 3, x[2, :, 2], 0)
    xc = np.ascontiguousarray(np.moveaxis(x, 1, -1))  # contiguous lines: (3, 5, n)
    xr = x.real.copy()
    cases = [
        ("fft", xc, {}),  # contiguous, 15 lines: a partial block
        ("fft", x, {"axis": 1}),  # strided
        ("ifft", x, {"axis": 1}),  # conj(x) in the load
        ("fftn", x, {"axes": (0, 1)}),  # carried out of the length-3 pass into n
        ("fftn", x, {"axes": (1, 2)}),  # carried out of n
        ("fftn", xc, {"axes": (1, 2)}),  # carried into the contiguous n
        ("rfft", xr, {"axis": 1}),  # real input, cropped output
        ("rfftn", xr, {"axes": (0, 1)}),
    ]
    expected = [getattr(ozfft, name)(a, **kw) for name, a, kw in cases]
    try:
        for cluster in (2, 1):
            ex.configure(cluster)
            for (name, a, kw), want in zip(cases, expected, strict=True):
                got = getattr(ozfft, name)(cp.asarray(a), **kw)
                np.testing.assert_array_equal(cp.asnumpy(got), want, err_msg=f"{name} {cluster}")
            for half in (0, 1):  # a NaN where either block of the cluster reads it
                bad = cp.asarray(xc)
                bad[1, 2, 100 + half * (n // ex.plan.radices[0] // 2)] = np.nan
                with pytest.raises(ozfft.NonFiniteInputError):
                    ozfft.fft(bad)
    finally:
        ex.configure(2)


def test_two_blocks_per_line_refused_where_the_plan_cannot_split():
    """configure() names the pass it cannot split: a twiddled (four-step row) pass, an odd
    radix, or a cluster size other than 1 and 2."""
    from ozfft.engines.cuda.fft import FixedPassExecutor
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    twiddled = FixedPassExecutor(get_plan(64, FFTOptions()), twiddle=(np.ones(64, np.int64),) * 2)
    with pytest.raises(ValueError, match=r"pass of length 64 cannot run on 2 blocks"):
        twiddled.configure(2)
    odd = FixedPassExecutor(get_plan(1000, FFTOptions()))  # 8 * 25 * 5: n / r1 odd
    assert odd.cluster == 1
    with pytest.raises(ValueError, match=r"pass of length 1000 cannot run on 2 blocks"):
        odd.configure(2)
    with pytest.raises(ValueError, match=r"cannot run on 3 blocks"):
        odd.configure(3)
    odd.configure(1)  # the one-block kernel stays available


@pytest.mark.parametrize("wide", [False, True])
def test_wide_and_narrow_blocks_bitwise(wide, rng):
    """Passes of at most one block per multiprocessor run twice the warps per block; both
    kernels compute the same integers (forced here on the same small inputs)."""
    from ozfft.engines.select import cuda_engine
    from ozfft.fourier.cache import get_executor, get_plan
    from ozfft.options import FFTOptions

    shape = (24, 20, 64)
    x, d = _pair(rng, shape)
    executors = [get_executor(cuda_engine(), get_plan(n, FFTOptions())) for n in set(shape)]
    saved = [ex._sms for ex in executors]
    try:
        for ex in executors:
            ex._sms = 10**9 if wide else 0  # every pass wide, or none
        assert all(ex._wide(1) == wide for ex in executors)
        for name in ("fftn", "ifftn"):
            got = getattr(ozfft, name)(d, axes=(0, 2))
            np.testing.assert_array_equal(cp.asnumpy(got), getattr(ozfft, name)(x, axes=(0, 2)))
        got = ozfft.fft(cp.asarray(x[..., 0]), axis=1)  # one pass, strided
        np.testing.assert_array_equal(cp.asnumpy(got), ozfft.fft(x[..., 0], axis=1))
    finally:
        for ex, sms in zip(executors, saved, strict=True):
            ex._sms = sms


def test_fused_executor_cached_per_device(rng):
    from ozfft.engines.select import cuda_engine
    from ozfft.fourier.cache import get_executor, get_plan
    from ozfft.options import FFTOptions

    plan = get_plan(128, FFTOptions())
    engine = cuda_engine()
    assert get_executor(engine, plan) is get_executor(engine, plan)
    assert type(get_executor(engine, plan)).__name__ == "FixedPassExecutor"


@pytest.mark.parametrize("n", [2048, 3 * 1024, 4096, 5 * 1024, 1 << 16])
def test_four_step_bitwise(n, rng):
    """Multi-pass (four-step) fixed-point plans: columns pass, twiddled row pass,
    transpose — bitwise the NumPy engine's."""
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    assert get_plan(n, FFTOptions()).four_step is not None
    x, d = _pair(rng, (3, n))
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fft(d)), ozfft.fft(x))
    np.testing.assert_array_equal(cp.asnumpy(ozfft.ifft(d, axis=-1)), ozfft.ifft(x, axis=-1))
    col = np.ascontiguousarray(x[:2].T)  # the transform down axis 0
    got = ozfft.fft(cp.asarray(col), axis=0)
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.fft(col, axis=0))


@pytest.mark.parametrize(
    "shape, axis",
    [((4096, 5), 0), ((2, 2048, 3), 1), ((3, 5120, 2), 1), ((2, 1 << 16, 2), 1)],
)
@pytest.mark.parametrize("order", ["C", "F"])
def test_four_step_strided_axis_bitwise(shape, axis, order, rng):
    """The four-step passes run along a strided axis in place of a transposed copy (the
    twiddled row pass's k_a from the line's outer index, its output transposed back)."""
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    x = np.asarray(x, order=order)
    d = cp.asarray(x, order=order)
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fft(d, axis=axis)), ozfft.fft(x, axis=axis))
    np.testing.assert_array_equal(
        cp.asnumpy(ozfft.ifft(d, axis=axis, norm="ortho")), ozfft.ifft(x, axis=axis, norm="ortho")
    )


def test_three_pass_four_step_bitwise(rng):
    """A length of three passes (2**21 = (128 * 128) * 128): the inner four-step runs
    down a strided axis of the outer one's view."""
    from ozfft.fourier.cache import get_plan
    from ozfft.options import FFTOptions

    n = 1 << 21
    assert get_plan(n, FFTOptions()).pass_count == 3
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fft(cp.asarray(x))), ozfft.fft(x))


@pytest.mark.parametrize("n", [97, 1042, 4099])
def test_bluestein_with_fixed_inner_bitwise(n, rng):
    x, d = _pair(rng, (2, n))
    np.testing.assert_array_equal(cp.asnumpy(ozfft.fft(d)), ozfft.fft(x))


@pytest.mark.slow
def test_index_arithmetic_past_2_31_elements(rng):
    """More than 2**31 complex elements (offsets past 32 bits), contiguous and strided
    axes; lines are independent, so the first and last lines are checked against the
    NumPy engine on those lines alone."""
    lines, n = (1 << 21) + 8, 1024
    free, _ = cp.cuda.runtime.memGetInfo()
    if free < 3.5 * lines * n * 16:
        pytest.skip("needs ~3.5x 32 GiB of free device memory")
    for axis in (1, 0):
        shape = (lines, n) if axis == 1 else (n, lines)
        d = cp.empty(shape, cp.complex128)
        d.real = cp.random.standard_normal(shape)
        d.imag = 1.0
        y = ozfft.fft(d, axis=axis)
        pick = np.r_[0:8, lines - 8 : lines]
        got = cp.asnumpy(y[pick] if axis == 1 else y[:, pick])
        ref = ozfft.fft(cp.asnumpy(d[pick] if axis == 1 else d[:, pick]), axis=axis)
        np.testing.assert_array_equal(got, ref)
        del d, y


def test_fused_executor_errors_name_the_problem(monkeypatch):
    from ozfft.engines.cuda.fft import FixedPassExecutor
    from ozfft.engines.select import cuda_engine
    from ozfft.fourier.cache import get_executor, get_plan
    from ozfft.options import FFTOptions

    ex = FixedPassExecutor(get_plan(64, FFTOptions()))
    with pytest.raises(ValueError, match=r"axis 1 of shape \(64, 32\) is not of length 64"):
        ex.forward(cp.zeros((64, 32), complex), 1)
    with pytest.raises(ValueError, match="one-pass fixed-point plans of 1 to 3 stages"):
        FixedPassExecutor(get_plan(64, FFTOptions(moduli=16)))

    twiddled = FixedPassExecutor(get_plan(64, FFTOptions()), twiddle=(np.ones(64, np.int64),) * 2)
    with pytest.raises(ValueError, match="a twiddled four-step pass carries no fixed point"):
        twiddled.forward_carried(cp.zeros((2, 64), complex), 1)
    with pytest.raises(ValueError, match="a twiddled four-step pass takes no real input"):
        twiddled.forward_real(cp.zeros((2, 64)), 1)
    with pytest.raises(ValueError, match=r"axis 0 of shape \(2, 64\) is not of length 64"):
        ex.forward_carried(cp.zeros((2, 64), complex), 0)
    with pytest.raises(ValueError, match=r"axis 0 of shape \(2, 64\) is not of length 64"):
        ex.forward_real(cp.zeros((2, 64)), 0)
    with pytest.raises(
        ValueError, match="a transposed pass runs along the axis after one of length rows"
    ):
        twiddled.forward(cp.zeros((3, 2, 64), complex), 2, rows=4, transposed=True)
    four_step = get_executor(cuda_engine(), get_plan(4096, FFTOptions()))
    with pytest.raises(ValueError, match=r"axis 1 of shape \(2, 64\) is not of length 4096"):
        four_step.forward(cp.zeros((2, 64), complex), 1)

    def no_memory(*args, **kwargs):
        raise cp.cuda.memory.OutOfMemoryError(1 << 40, 0, 0)

    monkeypatch.setattr(cp, "empty_like", no_memory)
    x = cp.ones((4, 64), complex)
    with pytest.raises(ozfft.DeviceMemoryError, match=r"an FFT pass output needs 4096 bytes"):
        ex.forward(x, 1)
    monkeypatch.setattr(cp, "empty", no_memory)
    with pytest.raises(
        ozfft.DeviceMemoryError, match=r"a real-input FFT pass output needs 2112 bytes"
    ):
        ex.forward_real(cp.ones((4, 64)), 1)


@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_conj_divide_matches_the_numpy_operations(order, rng):
    """The CUDA engine's one-sweep end of a transform (conj, then each divisor in turn,
    kernels/fft/finish.cu) gives the bits of numpy's y.real /= d, y.imag /= d one divisor
    at a time — also near underflow, where dividing by 3 then 7 differs from dividing by
    21, and with more divisors than one launch takes."""
    from ozfft.engines.numpy import NumpyEngine
    from ozfft.engines.select import cuda_engine

    x = rng.standard_normal((6, 9, 10)) + 1j * rng.standard_normal((6, 9, 10))
    x[0] *= 1e-306  # quotients in the subnormal range: rounding order shows
    x[1, 0, :4] = [0.0, -0.0, 0.0j, -0.0j]
    x = np.asfortranarray(x) if order == "F" else x
    divisors = (3.0, 7.0, 64.0, 5.5, np.sqrt(13.0))
    for conj in (False, True):
        for count in (0, 1, 4, 5):
            want = x.copy(order="A")
            NumpyEngine().conj_divide(want, conj, divisors[:count])
            d = cp.array(x, order="A")
            view = d[:, ::2] if order == "strided" else d
            cuda_engine().conj_divide(view, conj, divisors[:count])
            if order == "strided":  # the fallback: only the view changes
                want_view = x.copy()
                NumpyEngine().conj_divide(want_view[:, ::2], conj, divisors[:count])
                want = want_view
            assert d.flags.f_contiguous == (order == "F")  # the kernel ran on that layout
            got = cp.asnumpy(d)
            np.testing.assert_array_equal(_bits(got), _bits(want))
    if order == "C":
        assert not np.array_equal(
            (x[0].real / 3.0) / 7.0, x[0].real / 21.0
        )  # the test data can tell the orders apart


def _bits(a: np.ndarray) -> np.ndarray:
    """The int64 words of a complex128 array in C order (signed zeros included)."""
    return np.ascontiguousarray(a).view(np.int64)


def test_ifftn_five_axes_ortho_bitwise(rng):
    """A carried run of five axes ends with five divisors (two launches of the finish
    kernel) and a conjugation: the NumPy engine's bits."""
    x, d = _pair(rng, (4, 3, 5, 6, 2))
    for norm in (None, "ortho", "forward"):
        np.testing.assert_array_equal(
            cp.asnumpy(ozfft.ifftn(d, norm=norm)), ozfft.ifftn(x, norm=norm)
        )
        np.testing.assert_array_equal(
            cp.asnumpy(ozfft.fftn(d, norm=norm)), ozfft.fftn(x, norm=norm)
        )


@pytest.mark.parametrize(
    "shape, axes",
    [((6, 64), (1,)), ((3, 4096), (1,)), ((8, 12, 16), None), ((16, 12, 8), (0, 1))],
)
def test_inverse_first_pass_conjugates_as_it_loads(shape, axes, rng):
    """The first pass of an inverse transform reads conj(x) in its load (no conjugated
    copy): the NumPy engine's bits, signed zeros included, for one-pass, four-step, C and
    F order; and the input is left as it was."""
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    x.flat[:3] = [0.0, complex(1.0, -0.0), complex(-0.0, 0.0)]
    for order in ("C", "F"):
        h = np.asarray(x, order=order)
        d = cp.array(h, order=order)
        before = cp.asnumpy(d).copy()
        for norm in (None, "forward"):
            got = ozfft.ifftn(d, axes=axes, norm=norm)
            want = ozfft.ifftn(h, axes=axes, norm=norm)
            np.testing.assert_array_equal(_bits(cp.asnumpy(got)), _bits(want))
        np.testing.assert_array_equal(_bits(cp.asnumpy(d)), _bits(before))


def test_mapped_flags_ring():
    """The CUDA engine's non-finite flags (ozfft/engines/cuda/flags.py): a device write
    into a slot is seen on the host after the stream synchronizes, a taken slot starts at
    0, and the ring hands each slot out again after ``slots`` takes, zeroed."""
    from ozfft.engines.cuda.flags import MappedFlags

    flags = MappedFlags(cp, slots=3)
    first = flags.take()
    assert not first.raised()
    first.array.fill(7)  # a kernel's write to the mapped host memory
    assert first.raised()
    others = [flags.take() for _ in range(2)]
    assert not any(f.raised() for f in others)
    again = flags.take()  # the fourth take reuses the first slot
    assert again.array.data.ptr == first.array.data.ptr
    assert not again.raised() and int(again.array.get()[0]) == 0
    x = cp.ones((4, 64), complex)
    x[2, 5] = complex(0, float("inf"))
    with pytest.raises(ozfft.NonFiniteInputError, match="Inf"):
        ozfft.fft(x)
    assert ozfft.fft(cp.ones((4, 64), complex))[0, 0] == 64  # the next call's slot is clean


def _imad_probe(a: int, b: int, iters: int, blocks: int, threads: int) -> np.ndarray:
    """What kernels/probes/ceilings.cu's oz_probe_imad writes, in Python integers: per
    thread t, eight chains x = t + j taken through 16 iters steps x = a x + b (int32
    wraparound), XORed."""
    out = []
    for _ in range(blocks):
        for t in range(threads):
            chains = [t + j for j in range(8)]
            for _ in range(16 * iters):
                chains = [(x * a + b) & 0xFFFFFFFF for x in chains]
            v = 0
            for x in chains:
                v ^= x
            out.append(v - (1 << 32) if v >= 1 << 31 else v)
    return np.array(out, np.int32)


@pytest.mark.parametrize("driver", [True, False])
def test_kernel_launcher_matches_cupys_launch(driver, monkeypatch):
    """ozfft/engines/cuda/launch.py: a kernel launched through cuLaunchKernel with its kept
    argument block (or, without cuda-bindings, through cupy) computes what cupy's own
    launch of it computes, and what Python integers say it should, call after call with
    changing arguments; a wrong argument count is a TypeError."""
    from ozfft.engines.cuda import launch
    from ozfft.engines.cuda.compiler import get_function

    if not driver:

        def no_bindings(*args, **kwargs):
            raise ImportError("cuda.bindings")

        monkeypatch.setattr(launch, "DriverLaunch", no_bindings)
    kernel = get_function("probes/ceilings.cu", "oz_probe_imad")
    run = launch.launcher(kernel, ("ptr", "i32", "i32", "i32"))
    for a, b, iters in ((3, 5, 1), (-7, 11, 3), (5, 1, 1)):
        got, want = cp.zeros(64, cp.int32), cp.zeros(64, cp.int32)
        run((2,), (32,), (got, a, b, iters))
        kernel((2,), (32,), (want, np.int32(a), np.int32(b), np.int32(iters)))
        exact = _imad_probe(a, b, iters, blocks=2, threads=32)
        np.testing.assert_array_equal(cp.asnumpy(got), exact)
        np.testing.assert_array_equal(cp.asnumpy(want), exact)
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        run((1,), (32,), (got, 1, 2))


def test_fft_from_a_fresh_thread(rng):
    """A transform called from a new thread (no CUDA call made on it yet: the driver
    launch binds cupy's device itself) gives the same bits as on the main thread."""
    import threading

    x, d = _pair(rng, (4, 512))
    want = ozfft.fft(x)
    results = []

    def work():
        results.append(cp.asnumpy(ozfft.fft(d)))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    np.testing.assert_array_equal(results[0], want)


def test_driver_launch_and_carried_conj_errors_name_the_problem():
    """A launch the driver refuses raises with the CUDA result's name; a carried input
    cannot be conjugated as it loads."""
    from ozfft.engines.cuda import launch
    from ozfft.engines.cuda.compiler import get_function
    from ozfft.engines.select import cuda_engine
    from ozfft.fourier.cache import get_executor, get_plan
    from ozfft.options import FFTOptions

    kernel = get_function("probes/ceilings.cu", "oz_probe_imad")
    run = launch.DriverLaunch(kernel, ("ptr", "i32", "i32", "i32"))
    out = cp.zeros(4096, cp.int32)
    with pytest.raises(RuntimeError, match="cuLaunchKernel failed: CUDA_ERROR_"):
        run((1,), (4096,), (out, 1, 2, 1))  # more threads per block than any GPU has
    executor = get_executor(cuda_engine(), get_plan(64, FFTOptions()))
    carry = executor.forward_carried(cp.ones((4, 64), complex), 1, keep=True)
    with pytest.raises(ValueError, match="conj_in applies to complex input"):
        executor.forward_carried(None, 1, carry=carry, conj_in=True)
