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
from ozfft.ozaki.moduli import MAX_MODULI, MIN_MODULI, limbs_to_int, moduli_set
from ozfft.ozaki.residue_system import fp8_system, int8_system
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
    system, table = int8_system(count), moduli_set(count)
    assert system.phase_a == table.phase_a == "int8"
    assert system.budget_bits == table.budget_bits and system.num_limbs == table.num_limbs
    np.testing.assert_array_equal(system.weight_limbs(), table.weight_limbs())
    np.testing.assert_array_equal(system.product_limbs(), table.product_limbs())


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: f"{s.log2_product:.0f}bits")
def test_fp8_digit_split_of_every_residue(system):
    """Balanced base-s digits of every symmetric residue: at most 16 in magnitude (exact
    in e4m3), and they rebuild the residue."""
    for i, (s, m) in enumerate(zip(system.bases, system.moduli, strict=True)):
        r = np.arange(-(m // 2) + (m % 2 == 0), m // 2 + 1)
        digits = system.split_array(i, r)
        assert np.abs(digits).max() <= 16
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


def test_fp8_phase_a_worst_case_digits_past_one_fp32_block():
    """Residues whose two digits are as large as a base allows ((-16, 16) for 32, (h, h)
    with h = s // 2 for odd s), over k = 70000: the digit-product sums pass 2**24, the
    exact range of one FP32 sum."""
    system = fp8_system(64)
    k = 70_000
    r = np.array([[496 if s == 32 else (s // 2) * (1 + s) for s in system.bases]], np.float64).T
    for i, ri in enumerate(r[:, 0]):
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
    budget = min(fp8.budget_bits, moduli_set(count).budget_bits)
    for dtype in (np.float64, np.complex128):
        a = phi_matrix(rng, (2, 24, 40), 0.5, dtype)
        b = phi_matrix(rng, (2, 40, 16), 0.5, dtype)
        bt = np.swapaxes(b, -1, -2)
        sa, sb = gemm.compute_shifts(engine, a, bt, count, "fast", budget)
        int8 = gemm._product(engine, a, bt, sa, sb, count, dtype, "karatsuba")
        got = gemm._product(engine, a, bt, sa, sb, fp8.count, dtype, "karatsuba", system=fp8)
        np.testing.assert_array_equal(got, int8)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_fp8_emulated_matmul_is_fp64_accurate(dtype, rng):
    """End to end with the FP8 system's own budget: no worse than native float64."""
    engine = numpy_engine()
    a = phi_matrix(rng, (20, 48), 0.5, dtype)
    b = phi_matrix(rng, (48, 12), 0.5, dtype)
    got = gemm.emulated_matmul(
        engine, a, b, num_moduli=0, mode="fast", out_dtype=dtype, system=fp8_system(126)
    )
    exact = exact_matmul(a, b)
    assert max_relative_error(got, exact) <= max(max_relative_error(a @ b, exact), 2.0**-52)


def test_the_cuda_engine_refuses_an_fp8_system():
    """The CUDA kernels run the INT8 Phase A only: an FP8 system is a clear error there."""
    from ozfft.engines.cuda.engine import _require_int8

    _require_int8(moduli_set(8))
    with pytest.raises(NotImplementedError, match="'fp8' Phase A runs on the NumPy engine"):
        _require_int8(fp8_system(94))
