"""FP8 Phase A on the NumPy engine (ozfft/engines/numpy/phase_a.py with an FP8 residue
system): the digit products give the residues of the exact integer product, and Phase B
rebuilds the same integers as the INT8 moduli do — checked against Python/int64 integers
and exact rational products."""

from __future__ import annotations

import numpy as np
import pytest

from ozfft.engines.base import ResidueStack
from ozfft.engines.numpy import phase_a
from ozfft.engines.select import numpy_engine
from ozfft.ozaki.moduli import MAX_MODULI, MIN_MODULI, limbs_to_int
from ozfft.ozaki.residue_system import ResidueSystem, fp8_system, int8_system
from ozfft.reference import exact_matmul, max_relative_error, phi_matrix
from ozfft.scheme import gemm

SYSTEMS = [fp8_system(64), fp8_system(94), fp8_system(120)]  # squares; squares; cubes too


def _symmetric(x: np.ndarray, m: int) -> np.ndarray:
    r = np.mod(x, m)
    return np.where(r > m // 2, r - m, r)


def _stack(x: np.ndarray, system, is_complex: bool = False) -> ResidueStack:
    planes = np.stack([_symmetric(x, m) for m in system.moduli]).astype(np.float32)
    if is_complex:  # x: (2, ...) real and imaginary integer parts
        planes = planes.reshape(system.count, 2, *x.shape[1:])
    return ResidueStack(planes, is_complex=is_complex)


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: f"{s.log2_product:.0f}bits")
def test_fp8_system_has_exact_phase_b_constants(system):
    """The weight and product limbs are exactly W_i and P, and the limbs hold the signed
    Kulisch sum N max(m_i) P."""
    bits = system.limb_bits
    weights = system.weight_limbs()
    assert weights.shape == (system.num_limbs, system.count)
    assert [limbs_to_int(weights[:, i], bits) for i in range(system.count)] == list(system.weights)
    assert limbs_to_int(system.product_limbs(), bits) == system.product
    bound = system.count * max(system.moduli) * system.product
    assert 2 * bound < 1 << (bits * system.num_limbs)
    assert system.budget_bits == system.product.bit_length() - 1


@pytest.mark.parametrize("count", range(MIN_MODULI, MAX_MODULI + 1))
def test_int8_system_phase_b_constants_are_the_moduli_tables(count):
    system, table = int8_system(count), int8_system(count)
    assert system.phase_a == table.phase_a == "int8"
    assert system.budget_bits == table.budget_bits and system.num_limbs == table.num_limbs
    np.testing.assert_array_equal(system.weight_limbs(), table.weight_limbs())
    np.testing.assert_array_equal(system.product_limbs(), table.product_limbs())


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: f"{s.log2_product:.0f}bits")
def test_fp8_digit_split_of_every_residue(system):
    """Balanced base-s digits of every symmetric residue: at most 16 in magnitude (exact
    in e4m3), and they rebuild the residue."""
    for i, (s, m) in enumerate(zip(system.bases, system.moduli, strict=True)):
        r = np.arange(-(m // 2), m // 2 + 1)  # -m/2 too for even m (rint's half-even gives it)
        digits = system.split_array(i, r)
        assert digits.dtype == np.float32 and np.abs(digits).max() <= 16
        rebuilt = sum(digits[j] * float(s**j) for j in range(system.digits[i]))
        np.testing.assert_array_equal(rebuilt, r)


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: f"{s.log2_product:.0f}bits")
@pytest.mark.parametrize("method", ["karatsuba", "4m"])
def test_fp8_phase_a_gives_the_exact_products_residues(system, method, rng):
    """Real and complex (Karatsuba and 4M) products: u_i = (exact product) mod m_i."""
    k = 257
    a = rng.integers(-(2**40), 2**40, (2, 2, 3, k))  # (re/im, batch, m, k)
    b = rng.integers(-(2**40), 2**40, (2, 2, 4, k))  # bt: (re/im, batch, n, k)
    u_real = phase_a.modular_products(_stack(a[0], system), _stack(b[0], system), system)
    u_cplx = phase_a.modular_products(
        _stack(a, system, True), _stack(b, system, True), system, complex_method=method
    )
    assert u_real.dtype == u_cplx.dtype == (np.uint16 if max(system.moduli) > 256 else np.uint8)
    for i, m in enumerate(system.moduli):
        # exact products modulo m, in int64 (residues below m/2 keep the sums < 2**63)
        ar, ai, br, bi = (_symmetric(v, m) for v in (a[0], a[1], b[0], b[1]))

        def mm(x, y):
            return np.matmul(x, np.swapaxes(y, -1, -2))

        np.testing.assert_array_equal(u_real[i], np.mod(mm(ar, br), m))
        np.testing.assert_array_equal(u_cplx[i, 0], np.mod(mm(ar, br) - mm(ai, bi), m))
        np.testing.assert_array_equal(u_cplx[i, 1], np.mod(mm(ar, bi) + mm(ai, br), m))


@pytest.mark.parametrize("system", [fp8_system(64), fp8_system(120)], ids=["squares", "cubes"])
def test_fp8_phase_a_worst_case_digits_past_one_fp32_block(system):
    """Residues whose digits are as large as a base allows (-16 ... -16, 16 for 32; h ... h
    with h = s // 2 for odd s), over an odd k = 100001: for odd bases the digit-product
    sums are odd and above 2**24 (15 * 15 * k), which no float32 holds, so only the
    k-blocking of the float32 products keeps them exact."""
    k = 100_001

    def largest(s: int, d: int) -> int:
        if s % 2 == 0:
            return 16 * s ** (d - 1) - 16 * sum(s**j for j in range(d - 1))
        return (s // 2) * sum(s**j for j in range(d))

    r = np.array([[largest(s, d) for s, d in zip(system.bases, system.digits, strict=True)]]).T
    for i, ri in enumerate(r[:, 0]):
        assert abs(int(ri)) <= system.moduli[i] // 2
        assert np.abs(system.split_array(i, ri)).min() >= system.bases[i] // 2
    planes = np.broadcast_to(r[:, None, None, :1], (system.count, 1, 1, k)).astype(np.float32)
    neg = -planes
    u = phase_a.modular_products(ResidueStack(planes, False), ResidueStack(neg, False), system)
    for i, m in enumerate(system.moduli):
        assert int(u[i, 0, 0, 0]) == (-(int(r[i, 0]) ** 2) * k) % m


def test_fp8_matmul_rebuilds_the_same_integers_as_int8(rng):
    """With the same shifts, FP8 and INT8 residue systems reconstruct the same exact
    integer product, so the results are bitwise equal (real and complex)."""
    engine = numpy_engine()
    fp8, count = fp8_system(126), 16
    smaller = min((fp8, int8_system(count)), key=lambda m: m.budget_bits)  # its budget fits both
    for dtype in (np.float64, np.complex128):
        a = phi_matrix(rng, (2, 24, 40), 0.5, dtype)
        b = phi_matrix(rng, (2, 40, 16), 0.5, dtype)
        bt = np.swapaxes(b, -1, -2)
        sa, sb = gemm.compute_shifts(engine, a, bt, smaller, "fast")
        for rounding in ("trunc", "nearest"):
            args = (engine, a, bt, sa, sb)
            int8 = gemm._product(*args, count, dtype, "karatsuba", rounding=rounding)
            got = gemm._product(*args, fp8, dtype, "karatsuba", rounding=rounding)
            np.testing.assert_array_equal(got, int8)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fp8_emulated_matmul_is_fp64_accurate(dtype, rng):
    """End to end with the FP8 system's own budget: no worse than native float64."""
    engine = numpy_engine()
    a = phi_matrix(rng, (20, 48), 0.5, dtype)
    b = phi_matrix(rng, (48, 12), 0.5, dtype)
    got = gemm.emulated_matmul(engine, a, b, mode="fast", out_dtype=dtype, system=fp8_system(126))
    exact = exact_matmul(a, b)
    assert max_relative_error(got, exact) <= max(max_relative_error(a @ b, exact), 2.0**-52)


def test_a_residue_system_names_its_phase_a_and_keeps_its_budget_below_p():
    """Only "int8" and "fp8" systems exist (a free-form name would fall to the INT8 rules);
    a single square modulus 32**2 = 2**10 has budget 9, so 2**L < P still holds."""
    with pytest.raises(ValueError, match="one of"):
        ResidueSystem("e4m3", (32, 31), (2, 2), 16, 24)
    one = fp8_system(10)
    assert one.moduli == (1024,) and one.budget_bits == 9 and 2**one.budget_bits < one.product


def test_fp8_matmul_single_modulus_keeps_the_sign(rng):
    """With one modulus 2**10 the budget leaves room for the sign: [1, 1] @ [1, 1]^T = 2."""
    engine = numpy_engine()
    got = gemm.emulated_matmul(
        engine,
        np.ones((1, 2)),
        np.ones((2, 1)),
        mode="fast",
        out_dtype=np.float64,
        system=fp8_system(10),
    )
    assert got[0, 0] == 2.0
    with pytest.raises(ValueError, match="disagrees"):
        gemm.emulated_matmul(
            engine,
            np.ones((1, 2)),
            np.ones((2, 1)),
            num_moduli=3,
            mode="fast",
            out_dtype=np.float64,
            system=fp8_system(10),
        )


def test_the_cuda_engine_refuses_an_fp8_system():
    """The CUDA engine's integer residues (the Ozaki-II FFT stage path's constant stage
    matrices) are INT8 only: an FP8 system is a clear error there."""
    from ozfft.engines.cuda.engine import _require_int8

    _require_int8(int8_system(8))
    with pytest.raises(
        NotImplementedError,
        match=r"integer residues .* are INT8 only; 'fp8' runs there on the NumPy engine",
    ):
        _require_int8(fp8_system(94))


def test_fp8_phase_a_refuses_a_k_its_float64_combination_cannot_hold():
    """sum_t s**t P_t must stay below 2**50 (exact, and in _mod_nonneg's range): a k past
    that is an error that says so (broadcast views: nothing of that size is allocated)."""
    system = fp8_system(120)  # 32**3 first: 3 * 256 * k * 3137 >= 2**50 from k ~ 4.7e8
    k = 500_000_000
    x = np.broadcast_to(np.float32(1), (1, k))
    with pytest.raises(ValueError, match=r"k = 500000000 is too long for the FP8 Phase A"):
        phase_a._fp8_product(x, x, system, 0)


def test_emulated_matmul_needs_moduli_or_a_system():
    with pytest.raises(ValueError, match="give num_moduli or a residue system"):
        gemm.emulated_matmul(
            numpy_engine(), np.ones((1, 2)), np.ones((2, 1)), mode="fast", out_dtype=np.float64
        )
