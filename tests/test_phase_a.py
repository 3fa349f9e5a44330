"""``phase_a``: the public choice of Phase A arithmetic ("int8", "fp8", "auto").

Validation (keyword and ``OZFFT_PHASE_A``), the one place "auto" is resolved (NumPy engine:
INT8; GPUs by compute capability), the FP8-tensor-core check, matmul with FP8 Phase A (the
INT8 decision mapped to bits: the same bits as INT8, the guarantee checked against exact
rational products), and the FFT's FP8 stage products (4-bit sub-digits, float32 sums: the
same integers, so every transform is bitwise that of INT8). docs/numerics.md, "FP8
accumulation" and "FP8 Phase A of the FFT".
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.fft

import ozfft
from ozfft import config, scipy_backend
from ozfft.engines import select
from ozfft.engines.numpy import phase_a as numpy_phase_a
from ozfft.engines.select import (
    auto_phase_a,
    check_fp8_tensor_cores,
    numpy_engine,
    phase_a_for_device,
    resolve_phase_a,
)
from ozfft.errors import DeviceUnavailableError
from ozfft.fourier import api, cache
from ozfft.fourier.cache import clear_plan_cache, get_executor, get_plan
from ozfft.fourier.fixed import (
    FixedPointExecutor,
    FourStepExecutor,
    _Fp8StageProduct,
    _StageProduct,
)
from ozfft.options import FFTOptions, OzakiOptions
from ozfft.ozaki.fixed_point import (
    FORMATS,
    data_digits,
    fp8_stage_check,
    matrix_digits,
    nibbles,
)
from ozfft.ozaki.moduli import MAX_MODULI, MIN_MODULI
from ozfft.ozaki.residue_system import int8_system
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import fp8_max_moduli, fp8_system_for

from .test_guarantee import bound_ratio, wide

CHOICES = "'int8', 'fp8', 'auto'"


class _FakeCudaEngine:
    """Stands for the CUDA engine where only its name is read (resolution on a CPU)."""

    name = "cuda"


@pytest.fixture
def fake_device(monkeypatch):
    """Set the compute capability ``resolve_phase_a`` reads for a (fake) CUDA engine."""

    def set_capability(capability):
        monkeypatch.setattr(select, "compute_capability", lambda device_id=None: capability)
        return _FakeCudaEngine()

    return set_capability


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(
        np.ascontiguousarray(a).reshape(-1).view(np.uint8),
        np.ascontiguousarray(b).reshape(-1).view(np.uint8),
    )


# -- validation ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["fp16", "INT8", "", "e4m3", 8, 1.0])
def test_bad_keyword_values_name_the_choices(bad):
    a = np.ones((2, 3))
    calls = [
        lambda: ozfft.matmul(a, a.T, phase_a=bad),
        lambda: ozfft.linalg.matmul_plan(a, a.T, phase_a=bad),
        lambda: ozfft.fft(a, phase_a=bad),
        lambda: ozfft.rfftn(a, phase_a=bad),
        lambda: ozfft.irfftn(a, phase_a=bad),
        lambda: ozfft.hfft(a, phase_a=bad),
        lambda: OzakiOptions(phase_a=bad),
        lambda: FFTOptions(phase_a=bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=CHOICES):
            call()


TRANSFORMS = [
    *(f"{p}{k}{d}" for p in ("", "i") for k in ("fft", "rfft") for d in ("", "2", "n")),
    *(f"{p}hfft{d}" for p in ("", "i") for d in ("", "2", "n")),
]


def test_every_fft_function_takes_phase_a():
    assert len(TRANSFORMS) == 18
    for name in TRANSFORMS:
        parameters = inspect.signature(getattr(ozfft, name)).parameters
        assert parameters["phase_a"].default is None, name
        assert parameters["phase_a"].kind is inspect.Parameter.KEYWORD_ONLY, name
    for fn in (ozfft.matmul, ozfft.linalg.matmul_plan):
        assert inspect.signature(fn).parameters["phase_a"].default is None


def test_the_environment_default(monkeypatch):
    monkeypatch.delenv("OZFFT_PHASE_A", raising=False)
    assert config.phase_a_default() == "auto"
    for value, want in (("int8", "int8"), (" FP8 ", "fp8"), ("Auto", "auto"), ("", "auto")):
        monkeypatch.setenv("OZFFT_PHASE_A", value)
        assert config.phase_a_default() == want
    monkeypatch.setenv("OZFFT_PHASE_A", "fp4")
    with pytest.raises(ValueError, match=f"OZFFT_PHASE_A must be one of {CHOICES}"):
        config.phase_a_default()
    a = np.ones((2, 2))
    for call in (lambda: ozfft.matmul(a, a), lambda: ozfft.fft(a)):
        with pytest.raises(ValueError, match="OZFFT_PHASE_A"):
            call()
    # an explicit keyword does not read the environment
    np.testing.assert_array_equal(ozfft.matmul(a, a, phase_a="int8"), a @ a)


# -- resolution ------------------------------------------------------------------------


def test_auto_is_int8_on_the_numpy_engine(monkeypatch):
    engine = numpy_engine()
    monkeypatch.delenv("OZFFT_PHASE_A", raising=False)
    assert resolve_phase_a(None, engine) == "int8"
    assert resolve_phase_a("auto", engine) == "int8"
    assert resolve_phase_a("int8", engine) == "int8"
    assert resolve_phase_a("fp8", engine) == "fp8"
    monkeypatch.setenv("OZFFT_PHASE_A", "fp8")
    assert resolve_phase_a(None, engine) == "fp8"
    assert resolve_phase_a("int8", engine) == "int8"  # the keyword wins
    assert ozfft.linalg.matmul_plan(np.ones((2, 2)), np.ones((2, 2))).phase_a == "fp8"
    monkeypatch.setenv("OZFFT_PHASE_A", "auto")
    assert ozfft.linalg.matmul_plan(np.ones((2, 2)), np.ones((2, 2))).phase_a == "int8"


@pytest.mark.parametrize(
    "capability, want",
    [
        ((7, 0), "int8"),
        ((8, 0), "int8"),
        ((8, 6), "int8"),
        ((8, 9), "int8"),  # Ada: dense INT8 == FP8
        ((9, 0), "int8"),  # Hopper: dense INT8 == FP8
        ((10, 0), "int8"),  # Blackwell B200: dense INT8 == FP8
        ((10, 3), "fp8"),  # Blackwell Ultra B300: dense INT8 cut
    ],
)
def test_the_auto_table(capability, want, fake_device, monkeypatch):
    assert auto_phase_a(capability) == want
    assert phase_a_for_device("auto", capability) == want
    assert phase_a_for_device("int8", capability) == "int8"
    monkeypatch.delenv("OZFFT_PHASE_A", raising=False)
    engine = fake_device(capability)
    assert resolve_phase_a(None, engine) == want
    assert resolve_phase_a("auto", engine) == want
    assert resolve_phase_a("int8", engine) == "int8"


def test_fp8_needs_fp8_tensor_cores(fake_device):
    for capability in ((8, 9), (9, 0), (10, 0), (10, 3), (12, 0)):
        check_fp8_tensor_cores(capability)
        assert phase_a_for_device("fp8", capability) == "fp8"
    message = r"no FP8 tensor cores \(compute capability 8\.6 < 8\.9\)"
    with pytest.raises(DeviceUnavailableError, match=message):
        check_fp8_tensor_cores((8, 6))
    with pytest.raises(DeviceUnavailableError, match=r"compute capability 7\.0 < 8\.9"):
        phase_a_for_device("fp8", (7, 0))
    with pytest.raises(DeviceUnavailableError, match=message):
        resolve_phase_a("fp8", fake_device((8, 6)))
    with pytest.raises(ValueError, match=CHOICES):
        phase_a_for_device("fp4", (9, 0))


def test_the_fp8_fft_resolves_on_device_engines(fake_device):
    """On a device engine "fp8" stays FP8 where the device has FP8 tensor cores (the fused
    passes' e4m3 MMAs), "auto" follows the table, and a device without FP8 says so."""
    hopper = fake_device((9, 0))
    assert api._on_engine(FFTOptions(phase_a="fp8"), hopper).phase_a == "fp8"
    assert api._on_engine(FFTOptions(phase_a="auto"), hopper).phase_a == "int8"
    assert api._on_engine(FFTOptions(), fake_device((10, 3))).phase_a == "fp8"  # auto
    with pytest.raises(DeviceUnavailableError, match="no FP8 tensor cores"):
        api._on_engine(FFTOptions(phase_a="fp8"), fake_device((8, 6)))


def test_auto_keeps_int8_where_fp8_cannot_run(fake_device):
    """On a device where "auto" means FP8 (compute capability 10.3), calls that FP8 cannot
    run keep INT8 instead of failing: the CUDA engine's Ozaki-II FFT stage path (moduli=)
    and more explicit moduli than FP8 moduli can stand for (19, 20); an explicit "fp8"
    still says why it cannot."""
    from ozfft.linalg import _phase_a

    b300 = fake_device((10, 3))
    assert api._on_engine(FFTOptions(moduli=8), b300).phase_a == "int8"
    assert api._on_engine(FFTOptions(moduli=None), b300).phase_a == "fp8"
    assert _phase_a(OzakiOptions(moduli=19), b300) == "int8"
    assert _phase_a(OzakiOptions(moduli=18), b300) == "fp8"
    assert _phase_a(OzakiOptions(), b300) == "fp8"
    with pytest.raises(ValueError, match="at most 18"):
        _phase_a(OzakiOptions(moduli=19, phase_a="fp8"), b300)


def test_the_stage_path_says_where_its_fp8_products_run(fake_device):
    """An explicit "fp8" with moduli= (the Ozaki-II stage path) on a device engine: the
    stage executor names the path that cannot run it and the one that can."""
    from ozfft.fourier.execute import StageExecutor

    hopper = fake_device((9, 0))
    with pytest.raises(NotImplementedError, match=r"moduli= .* run on the NumPy engine only"):
        StageExecutor(hopper, get_plan(64, FFTOptions(moduli=8)), "fp8")
    with pytest.raises(ValueError, match="phase_a is 'int8' or 'fp8' here, not 'auto'"):
        StageExecutor(hopper, get_plan(64, FFTOptions(moduli=8)), "auto")


# -- matmul --------------------------------------------------------------------------


def test_fp8_systems_stand_for_int8_counts():
    assert fp8_max_moduli() == 18
    for n in range(MIN_MODULI, fp8_max_moduli() + 1):
        system, int8 = fp8_system_for(n), int8_system(n)
        assert system.phase_a == "fp8"
        assert system.log2_product >= int8.log2_product
        assert 2**int8.budget_bits < system.product
    for n in range(fp8_max_moduli() + 1, MAX_MODULI + 1):
        with pytest.raises(ValueError, match="at most 18 INT8 moduli"):
            fp8_system_for(n)


def _same_plan(p, q) -> bool:
    return (p.moduli, p.split_a, p.split_b, p.native) == (q.moduli, q.split_a, q.split_b, q.native)


@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
@pytest.mark.parametrize("phi", [0.0, 1.0, 4.0, 8.0, 16.0])
def test_fp8_matmul_keeps_the_guarantee(dtype, phi, mode, rng, monkeypatch):
    """Against exact rational products: FP8 keeps the bound; where its plan is INT8's it
    gives INT8's bits (it always does up to 18 moduli)."""
    calls = []
    fp8_product = numpy_phase_a._fp8_product

    def counting(*args, **kwargs):
        calls.append(1)
        return fp8_product(*args, **kwargs)

    monkeypatch.setattr(numpy_phase_a, "_fp8_product", counting)
    a = wide(rng, (7, 30), phi, dtype)
    b = wide(rng, (30, 5), phi, dtype)
    precision = "fp32" if np.dtype(dtype) in (np.float32, np.complex64) else "fp64"
    options = {"precision": precision, "mode": mode}
    p8 = ozfft.linalg.matmul_plan(a, b, **options, phase_a="int8")
    pf = ozfft.linalg.matmul_plan(a, b, **options, phase_a="fp8")
    with np.errstate(over="ignore", invalid="ignore"):
        int8 = ozfft.matmul(a, b, **options, phase_a="int8")
        assert not calls
        fp8 = ozfft.matmul(a, b, **options, phase_a="fp8")
    assert pf.phase_a == "fp8" and p8.phase_a == "int8"
    assert bool(calls) == (not pf.native)
    assert bound_ratio(a, b, fp8, precision, native=pf.native) <= 1.0
    if not p8.native and p8.moduli <= 18:
        assert _same_plan(p8, pf)
    if _same_plan(p8, pf):
        assert _same_bits(fp8, int8)


def test_fp8_plans_split_sooner_where_int8_needs_more_than_18_moduli(rng):
    """Where INT8 takes 19 or 20 moduli, FP8 (at most the bits of 18) splits or runs
    natively, and still keeps the bound."""
    seen = 0
    for phi in (4.0, 6.0, 8.0, 12.0, 16.0):
        a = phi_matrix(rng, (9, 40), phi)
        b = phi_matrix(rng, (40, 7), phi)
        p8 = ozfft.linalg.matmul_plan(a, b, phase_a="int8")
        pf = ozfft.linalg.matmul_plan(a, b, phase_a="fp8")
        assert pf.native or pf.moduli <= 18
        if not p8.native and p8.moduli > 18:
            seen += 1
            assert not _same_plan(p8, pf)
            got = ozfft.matmul(a, b, phase_a="fp8")
            assert bound_ratio(a, b, got, native=pf.native) <= 1.0
    assert seen


def test_fp8_matmul_describes_its_plan(rng):
    a = phi_matrix(rng, (6, 20), 0.5)
    b = phi_matrix(rng, (20, 4), 0.5)
    assert ozfft.linalg.matmul_plan(a, b).describe() == "16"  # int8 strings unchanged
    plan = ozfft.linalg.matmul_plan(a, b, phase_a="fp8")
    assert plan.moduli == 16 and plan.describe() == "fp8 127 bits"
    assert plan.system is fp8_system_for(16) and "FP8 Phase A" in plan.reason
    assert ozfft.linalg.matmul_plan(a, b, precision="fp32", phase_a="fp8").describe() == (
        "fp8 65 bits"
    )
    explicit = ozfft.linalg.matmul_plan(a, b, moduli=12, phase_a="fp8")
    assert explicit.describe() == "fp8 99 bits" and not explicit.guaranteed
    empty = ozfft.linalg.matmul_plan(np.ones((0, 3)), np.ones((3, 2)), phase_a="fp8")
    assert empty.phase_a == "fp8"


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_explicit_moduli_mean_their_bits(dtype, rng):
    """``moduli=N`` with FP8: the FP8 moduli holding the bits of N INT8 moduli, the same
    scaling, the same bits; more than 18 is refused."""
    a = phi_matrix(rng, (5, 24), 2.0, np.complex128 if dtype == np.complex128 else np.float64)
    b = phi_matrix(rng, (24, 3), 2.0, np.complex128 if dtype == np.complex128 else np.float64)
    a, b = a.astype(dtype), b.astype(dtype)
    for n in (2, 7, 12, 18):
        assert _same_bits(ozfft.matmul(a, b, moduli=n, phase_a="fp8"), ozfft.matmul(a, b, moduli=n))
    for n in (19, 20):
        with pytest.raises(ValueError, match="at most 18 INT8 moduli"):
            ozfft.matmul(a, b, moduli=n, phase_a="fp8")
        with pytest.raises(ValueError, match="at most 18 INT8 moduli"):
            ozfft.linalg.matmul_plan(a, b, moduli=n, phase_a="fp8")


def test_fp8_matmul_stacks_vectors_and_integers(rng):
    a = rng.standard_normal((3, 4, 9))
    b = rng.standard_normal((9, 2))
    assert _same_bits(ozfft.matmul(a, b, phase_a="fp8"), ozfft.matmul(a, b, phase_a="int8"))
    v = rng.standard_normal(9)
    assert _same_bits(ozfft.matmul(v, v, phase_a="fp8"), ozfft.matmul(v, v))
    ints = rng.integers(-1000, 1000, (4, 6))
    np.testing.assert_array_equal(ozfft.matmul(ints, ints.T, phase_a="fp8"), ints @ ints.T)
    half = rng.standard_normal((4, 6)).astype(np.float16)
    assert _same_bits(ozfft.matmul(half, half.T, phase_a="fp8"), ozfft.matmul(half, half.T))


# -- the FFT's FP8 stage products ------------------------------------------------------


def test_nibbles_of_every_byte_digit():
    for digits, high_range in (
        (np.arange(-128, 128), (-8, 8)),  # balanced matrix digits
        (np.arange(0, 256), (0, 16)),  # unsigned data bytes
        (np.arange(-64, 65), (-4, 4)),  # the signed top data byte
    ):
        low, high = nibbles(digits)
        assert low.min() >= -8 and low.max() <= 7
        assert (high.min(), high.max()) == high_range
        np.testing.assert_array_equal(16 * high + low, digits)
    with pytest.raises(ValueError, match="e4m3"):
        nibbles(np.array([264]))


def test_fp8_stage_bound():
    assert fp8_stage_check(64) == 128  # 256 * 128 = 2**15 < 2**24
    assert fp8_stage_check(32767) == 65534
    with pytest.raises(AssertionError, match="not exact"):
        fp8_stage_check(32768)


def _stage_inputs(stage, fmt, rng, vectors=23):
    bits = fmt.data_bits
    x = rng.integers(-(2**bits), 2**bits, (*stage.re.shape[:2], 2 * stage.radix, vectors))
    x[..., 0] = 2**bits
    x[..., 1] = -(2**bits)
    x[..., 2] = 0
    return x


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("n", [2, 16, 60, 64, 100, 1024])
def test_fp8_stage_products_equal_int8(precision, n, rng):
    plan = get_plan(n, FFTOptions(precision=precision))
    fmt = plan.digit_format
    for stage in plan.stages:
        x = _stage_inputs(stage, fmt, rng)
        np.testing.assert_array_equal(_Fp8StageProduct(stage, fmt)(x), _StageProduct(stage, fmt)(x))


def test_fp8_stage_product_is_the_diagonal_definition(rng):
    """Against Python integers: ``z = floor((sum_{d >= D} 256**d acc_d + 2**(h-1)) /
    2**h)`` with ``acc_d = sum_{c + a = d} W_c X_a`` over the stage's k terms."""
    plan = get_plan(16, FFTOptions())
    fmt = FORMATS["fp64"]
    stage = plan.stages[0]
    x = _stage_inputs(stage, fmt, rng, vectors=4)
    z = _Fp8StageProduct(stage, fmt)(x)
    w = matrix_digits(stage.real_embedding(), fmt.matrix_digits).astype(np.int64)
    xd = data_digits(x, fmt.data_digits)
    h = fmt.stage_shift(stage.radix)
    k = 2 * stage.radix
    for v in range(x.shape[-1]):
        for i in range(k):
            y = 0
            for d in range(fmt.first_diagonal, fmt.last_diagonal + 1):
                acc = sum(
                    int(w[c, 0, 0, i, j]) * int(xd[a, 0, 0, j, v])
                    for c, a in fmt.pairs(d)
                    for j in range(k)
                )
                y += acc * 256**d
            assert int(z[0, 0, i, v]) == (y + 2 ** (h - 1)) >> h


def test_fp8_executors_are_built_and_cached_apart():
    clear_plan_cache()
    engine = numpy_engine()
    plan = get_plan(64, FFTOptions())
    fp8, int8 = get_executor(engine, plan, "fp8"), get_executor(engine, plan, "int8")
    assert isinstance(fp8, FixedPointExecutor) and fp8.phase_a == "fp8"
    assert all(isinstance(p, _Fp8StageProduct) for p in fp8._products)
    assert all(isinstance(p, _StageProduct) for p in int8._products)
    assert get_executor(engine, plan, "fp8") is fp8
    assert get_executor(engine, plan, None) is int8  # auto on numpy
    four = get_executor(engine, get_plan(4096, FFTOptions()), "fp8")
    assert isinstance(four, FourStepExecutor) and four._inner_b.phase_a == "fp8"


def _complex(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _fp8_keys() -> int:
    return sum(1 for key in cache._EXECUTORS if key[-1] == "fp8")


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("n", [1, 2, 12, 64, 97, 1009, 1024, 2048])
def test_fft_fp8_is_bitwise_int8(n, precision, rng):
    """One-pass (12, 64, 1024), Bluestein (prime 97, 1009) and four-step (2048) lengths."""
    x = _complex(rng, (3, n))
    for name in ("fft", "ifft"):
        fn = getattr(ozfft, name)
        want = fn(x, precision=precision, phase_a="int8")
        assert _same_bits(fn(x, precision=precision, phase_a="fp8"), want), name
    xr = rng.standard_normal((2, n))
    assert _same_bits(ozfft.rfft(xr, phase_a="fp8"), ozfft.rfft(xr, phase_a="int8"))


def test_nd_transforms_fp8_are_bitwise_int8(rng):
    clear_plan_cache()
    x = _complex(rng, (6, 10, 16))
    xr = rng.standard_normal((6, 10, 16))
    for name, arg in (("fftn", x), ("ifftn", x), ("fft2", x), ("rfftn", xr), ("rfft2", xr)):
        fn = getattr(ozfft, name)
        assert _same_bits(fn(arg, phase_a="fp8"), fn(arg, phase_a="int8")), name
    assert _fp8_keys()
    spectrum = ozfft.rfftn(xr)
    for name in ("irfftn", "irfft2"):
        fn = getattr(ozfft, name)
        assert _same_bits(fn(spectrum, phase_a="fp8"), fn(spectrum, phase_a="int8")), name
    s = (8, 12, 97)  # padded; a Bluestein axis
    assert _same_bits(
        ozfft.fftn(x, s=s, axes=(0, 1, 2), phase_a="fp8"), ozfft.fftn(x, s=s, axes=(0, 1, 2))
    )
    h = x[0]
    for name in ("hfft", "ihfft", "hfftn", "ihfftn"):
        fn = getattr(ozfft, name)
        arg = h.real if name.startswith("ih") else h
        assert _same_bits(fn(arg, phase_a="fp8"), fn(arg, phase_a="int8")), name


@pytest.mark.parametrize("moduli", [8, 16, 18])
def test_stage_path_fp8_is_bitwise_int8(moduli, rng):
    x = _complex(rng, (2, 40))
    want = ozfft.fft(x, moduli=moduli, phase_a="int8")
    assert _same_bits(ozfft.fft(x, moduli=moduli, phase_a="fp8"), want)
    with pytest.raises(ValueError, match="at most 18 INT8 moduli"):
        ozfft.fft(x, moduli=19, phase_a="fp8")


def test_scipy_backend_honours_the_environment_default(monkeypatch, rng):
    x = _complex(rng, (4, 64))
    want = ozfft.fft(x, phase_a="int8")
    clear_plan_cache()
    monkeypatch.setenv("OZFFT_PHASE_A", "fp8")
    with scipy.fft.set_backend(scipy_backend, only=True):
        got = scipy.fft.fft(x)
    assert _same_bits(got, want)
    assert _fp8_keys()  # the FP8 executors ran
    clear_plan_cache()
    monkeypatch.setenv("OZFFT_PHASE_A", "int8")
    with scipy.fft.set_backend(scipy_backend, only=True):
        assert _same_bits(scipy.fft.fft(x), want)
    assert not _fp8_keys()
    monkeypatch.setenv("OZFFT_PHASE_A", "e5m2")
    with scipy.fft.set_backend(scipy_backend, only=True):
        with pytest.raises(ValueError, match=f"OZFFT_PHASE_A must be one of {CHOICES}"):
            scipy.fft.fft(x)


# -- on a GPU (skipped without one) -----------------------------------------------------


@pytest.mark.gpu
def test_cupy_operands_with_fp8():
    """On a GPU: "auto" follows the table; "fp8" runs the FFT's fused passes on e4m3
    MMAs with INT8's bits, and on a GPU without FP8 tensor cores it says so."""
    import cupy

    from ozfft.engines.select import compute_capability, cuda_engine

    x = cupy.asarray(np.arange(64.0) / 3 + 1j)
    capability = compute_capability()
    assert resolve_phase_a("auto", cuda_engine()) == auto_phase_a(capability)
    if capability < (8, 9):
        with pytest.raises(DeviceUnavailableError, match="no FP8 tensor cores"):
            ozfft.fft(x, phase_a="fp8")
        return
    got = ozfft.fft(x, phase_a="fp8")
    assert _same_bits(cupy.asnumpy(got), cupy.asnumpy(ozfft.fft(x, phase_a="int8")))
    assert _same_bits(cupy.asnumpy(got), ozfft.fft(cupy.asnumpy(x), phase_a="fp8"))
