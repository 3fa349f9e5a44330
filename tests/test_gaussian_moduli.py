"""Gaussian residue systems: complex products on two real products per modulus through a
square root of -1, checked against exact Python integers and the other complex methods."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ozfft
from ozfft.engines.base import ResidueStack, complex_products
from ozfft.engines.numpy import phase_a
from ozfft.engines.numpy.engine import NumpyEngine
from ozfft.ozaki.moduli import MAX_MODULI
from ozfft.ozaki.residue_system import GAUSSIAN_MODULI, gaussian_system, int8_system
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import emulated_matmul, gaussian_system_for

ENGINE = NumpyEngine()


def _prime_factors(m: int) -> list[int]:
    out, p = [], 2
    while p * p <= m:
        while m % p == 0:
            out.append(p)
            m //= p
        p += 1
    return out + ([m] if m > 1 else [])


def test_table_is_odd_coprime_with_prime_factors_one_mod_four():
    for i, m in enumerate(GAUSSIAN_MODULI):
        assert m % 2 == 1 and m <= 255
        assert all(f % 4 == 1 for f in _prime_factors(m)), m
        assert all(math.gcd(m, q) == 1 for q in GAUSSIAN_MODULI[:i])


def test_roots_and_inverses():
    system = gaussian_system(1)
    full = gaussian_system(150)
    assert full.moduli == GAUSSIAN_MODULI[: full.count]
    for m, (j, inv2, inv2j) in zip(full.moduli, full.roots, strict=True):
        assert (j * j + 1) % m == 0 and 2 * abs(j) < m
        assert (2 * inv2) % m == 1 and (2 * j * inv2j) % m == 1
    assert system.count == 1
    with pytest.raises(ValueError, match="only a Gaussian system"):
        _ = int8_system(4).roots


@pytest.mark.parametrize("count", range(2, MAX_MODULI + 1))
def test_stand_in_holds_the_int8_budget_with_fewest_moduli(count):
    budget = int8_system(count).budget_bits
    system = gaussian_system_for(int8_system(count))
    if system is None:  # past the table: Karatsuba on the INT8 moduli
        assert math.prod(GAUSSIAN_MODULI).bit_length() - 1 < budget
        return
    assert system.gaussian and system.budget_bits >= budget
    fewer = math.prod(system.moduli[:-1])
    assert (fewer - 1).bit_length() - 1 < budget
    # two products per modulus against Karatsuba's three: never more products
    assert 2 * system.count < 3 * count


def test_default_counts_save_a_third_of_the_products():
    for count, products in ((16, 36), (15, 32), (8, 18)):
        assert 2 * gaussian_system_for(int8_system(count)).count == products


def _exact_residues(a: np.ndarray, bt: np.ndarray, p: int):
    """(Re, Im) of ``a @ bt^T`` mod p from Python integers (Gaussian-integer products)."""
    m, n = a.shape[0], bt.shape[0]
    re = np.empty((m, n), np.int64)
    im = np.empty((m, n), np.int64)
    for i in range(m):
        for j in range(n):
            zr = zi = 0
            for x, y in zip(a[i], bt[j], strict=True):
                xr, xi, yr, yi = int(x.real), int(x.imag), int(y.real), int(y.imag)
                zr += xr * yr - xi * yi
                zi += xr * yi + xi * yr
            re[i, j], im[i, j] = zr % p, zi % p
    return re, im


def _stack(x: np.ndarray, moduli) -> ResidueStack:
    """Symmetric residues (re, im) of an integer-valued operand, as the NumPy engine's."""
    re, im = np.real(x).astype(np.int64), np.imag(x).astype(np.int64)
    planes = [[(v + p // 2) % p - p // 2 for v in (re, im)] for p in moduli]
    return ResidueStack(np.array(planes, np.float32), is_complex=True)


def test_phase_a_residues_equal_the_exact_product(rng):
    system = gaussian_system(117)
    a = rng.integers(-(10**6), 10**6, (5, 37)) + 1j * rng.integers(-(10**6), 10**6, (5, 37))
    bt = rng.integers(-(10**6), 10**6, (4, 37)) + 1j * rng.integers(-(10**6), 10**6, (4, 37))
    u = phase_a.modular_products(
        _stack(a, system.moduli), _stack(bt, system.moduli), system, complex_method="gaussian"
    )
    for i, p in enumerate(system.moduli):
        re, im = _exact_residues(a, bt, p)
        np.testing.assert_array_equal(u[i, 0], re)
        np.testing.assert_array_equal(u[i, 1], im)


def test_method_and_system_must_agree():
    system = gaussian_system(40)
    stack = _stack(np.ones((2, 3), np.complex128), system.moduli)
    with pytest.raises(ValueError, match="Gaussian residue system"):
        phase_a.modular_products(stack, stack, system, complex_method="karatsuba")
    int8 = int8_system(4)
    with pytest.raises(ValueError, match="Gaussian residue system"):
        phase_a.modular_products(
            _stack(np.ones((2, 3)), int8.moduli),
            _stack(np.ones((2, 3)), int8.moduli),
            int8,
            complex_method="gaussian",
        )
    assert complex_products(system, "gaussian") == 2
    assert complex_products(int8, "karatsuba") == 3
    with pytest.raises(ValueError, match="complex_method must be one of"):
        complex_products(int8, "gauss")


@pytest.mark.parametrize("out_dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("num_moduli", [3, 8, 15, 16, 19])
def test_gaussian_products_are_karatsuba_bits(out_dtype, num_moduli, rng):
    a = phi_matrix(rng, (3, 9, 40), 2.0, np.complex128)
    b = phi_matrix(rng, (3, 40, 7), 2.0, np.complex128)
    got, want = (
        emulated_matmul(
            ENGINE,
            a,
            b,
            num_moduli=num_moduli,
            mode="accurate",
            out_dtype=out_dtype,
            complex_method=method,
        )
        for method in ("gaussian", "karatsuba")
    )
    assert got.dtype == out_dtype
    np.testing.assert_array_equal(got, want)


def test_matmul_plans_report_the_gaussian_system(rng):
    a = phi_matrix(rng, (20, 30), 0.5, np.complex128)
    plan = ozfft.linalg.matmul_plan(a, a.T)
    system = plan.phase_a_system
    assert plan.is_complex and system.gaussian
    assert system is gaussian_system_for(plan.system)
    real = ozfft.linalg.matmul_plan(a.real, a.real.T)
    assert not real.is_complex and real.phase_a_system is real.system
    assert ozfft.linalg.matmul_plan(a, a.T, moduli=20).phase_a_system is int8_system(20)


def test_a_native_plan_names_why_it_has_no_moduli():
    plan = ozfft.linalg.MatmulPlan(0, native=True, reason="more than 4 products", is_complex=True)
    with pytest.raises(ValueError, match=r"native plan runs no Phase A.*more than 4 products"):
        _ = plan.system
    with pytest.raises(ValueError, match="native plan runs no Phase A"):
        _ = plan.phase_a_system


def test_split_plans_give_karatsuba_bits(rng):
    """A complex product the guarantee splits into hi/lo parts (four exact products sharing
    one residue cache) has the same bits on Gaussian moduli as with Karatsuba."""
    from ozfft.reference import phi_matrix as phi
    from ozfft.scheme.gemm import guaranteed_matmul

    a = phi(rng, (8, 30), 8.0, np.complex128)
    b = phi(rng, (30, 6), 8.0, np.complex128)
    plan = ozfft.linalg.matmul_plan(a, b)
    assert plan.products > 1 and plan.phase_a_system.gaussian, plan
    kw = dict(precision="fp64", mode="fast", out_dtype=np.complex128, out_bits=53)
    got, want = (
        guaranteed_matmul(ENGINE, a, b, exact_bits=(53, 53), complex_method=method, **kw)
        for method in ("gaussian", "karatsuba")
    )
    assert got[1] == want[1] == plan
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[0], ozfft.matmul(a, b))


def test_check_and_bench_rows_name_the_gaussian_moduli():
    from ozfft.bench import gemm as gemm_bench
    from ozfft.check import run_gemm_check

    r = run_gemm_check(24, dtype=np.complex128, samples=4)
    assert r.passed and r.moduli == "16 (18 Gaussian)"
    assert run_gemm_check(24, dtype=np.float64, samples=4).moduli == "16"
    rec = {"op": "zgemm", "m": 8, "n": 8, "k": 8, "moduli": 15, "mode": "fast"}
    assert "| 15 (16 Gaussian) |" in gemm_bench.row(dict(rec, phase_a_moduli=16, gaussian=True))
    assert "| 15 | fast |" in gemm_bench.row(dict(rec, phase_a_moduli=15, gaussian=False))


def test_gaussian_system_errors_name_the_limit():
    from ozfft.ozaki.residue_system import ResidueSystem

    with pytest.raises(ValueError, match="a budget of at most 152 bits, asked for 155"):
        gaussian_system(155)
    with pytest.raises(ValueError, match="INT8 odd moduli with a square root of -1"):
        ResidueSystem("int8", (241, 251), (1, 1), 128, 31, gaussian=True)  # 251 = 3 mod 4
    with pytest.raises(ValueError, match="INT8 odd moduli with a square root of -1"):
        ResidueSystem("fp8", (29,), (2,), 16, 24, gaussian=True)
