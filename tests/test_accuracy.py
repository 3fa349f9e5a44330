"""Accuracy of the emulated product against exact rational references.

* integer-valued operands give exact results;
* with an explicit moduli count every element obeys the a-priori truncation bound of
  docs/numerics.md ("Error analysis", any phi);
* without one, every element obeys the accuracy guarantee ``k u (|A||B|)_ij``
  (docs/numerics.md, "The accuracy guarantee of matmul"; tests/test_guarantee.py has the
  exhaustive checks), and the max relative error is no worse than numpy's own float64
  (float32) matmul on the papers' matrices with phi <= 1;
* more moduli never hurt; summation order does not matter (bitwise);
* Karatsuba on residues equals the 4-product form bit for bit.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import ozfft
from ozfft.engines import NumpyEngine
from ozfft.ozaki.bounds import truncation_bound
from ozfft.reference import exact_matmul, max_relative_error, phi_matrix
from ozfft.scheme.gemm import compute_shifts, emulated_matmul

from .helpers import round_f32, round_f64
from .test_guarantee import bound_ratio

ENGINE = NumpyEngine()
PHIS = [0.0, 0.5, 1.0, 2.0, 4.0]


def _shape_for(k: int) -> tuple[int, int]:
    return (2, 2) if k > 4096 else (6, 5)


def _abs_sum(x, axis):
    return (
        (np.abs(x.real) + np.abs(x.imag)).sum(axis=axis)
        if np.iscomplexobj(x)
        else np.abs(x).sum(axis=axis)
    )


def _check_bound(a, b, got, exact, num_moduli, mode, unit):
    """|got - exact| <= truncation bound + unit*|exact| elementwise (each part)."""
    sa, sb = compute_shifts(ENGINE, a, np.swapaxes(b, -1, -2), num_moduli, mode)
    bound = truncation_bound(_abs_sum(a, -1), _abs_sum(b, -2), sa, sb, np)
    for (i, j), ref in np.ndenumerate(exact):
        refs = ref if isinstance(ref, tuple) else (ref,)
        vals = (got[i, j].real, got[i, j].imag) if isinstance(ref, tuple) else (got[i, j],)
        for v, r in zip(vals, refs, strict=True):
            err = abs(Fraction(float(v)) - r)
            assert err <= Fraction(float(bound[i, j])) + Fraction(unit) * abs(r), (i, j)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_integer_matrices_are_exact(dtype, mode, rng):
    big = 2**10 if np.dtype(dtype) in (np.float32, np.complex64) else 2**20
    shape_a, shape_b = (7, 64), (64, 9)
    a = rng.integers(-big, big, shape_a).astype(np.float64)
    b = rng.integers(-big, big, shape_b).astype(np.float64)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.integers(-big, big, shape_a)
        b = b + 1j * rng.integers(-big, big, shape_b)
    want = exact_matmul(a, b)
    got = ozfft.matmul(a.astype(dtype), b.astype(dtype), mode=mode)
    assert max_relative_error(got, want) == 0.0


@pytest.mark.parametrize("phi", PHIS)
@pytest.mark.parametrize("k", [1, 16, 1024, 2**17 + 1])
@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_fp64_error_vs_exact(phi, k, mode, rng):
    m, n = _shape_for(k)
    a = phi_matrix(rng, (m, k), phi)
    b = phi_matrix(rng, (k, n), phi)
    exact = exact_matmul(a, b)
    fixed = ozfft.matmul(a, b, mode=mode, moduli=16)  # the a-priori bound of 16 moduli
    _check_bound(a, b, fixed, exact, 16, mode, 2.0**-53)
    got = ozfft.matmul(a, b, mode=mode)  # the guarantee
    if k <= 1024:
        assert bound_ratio(a, b, got) <= 1.0
    if phi <= 1.0:
        assert max_relative_error(got, exact) <= max_relative_error(a @ b, exact)
        np.testing.assert_array_equal(got, fixed)  # well-scaled: the default count
    if k == 1:  # one product per element: truncation is exact, the result correctly rounded
        np.testing.assert_array_equal(got, a @ b)


@pytest.mark.parametrize("phi", [0.0, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("k", [16, 1024])
def test_complex128_error_vs_exact(phi, k, rng):
    a = phi_matrix(rng, (4, k), phi, np.complex128)
    b = phi_matrix(rng, (k, 3), phi, np.complex128)
    exact = exact_matmul(a, b)
    _check_bound(a, b, ozfft.matmul(a, b, moduli=16), exact, 16, "fast", 2.0**-53)
    got = ozfft.matmul(a, b)
    assert bound_ratio(a, b, got) <= 1.0
    if phi <= 1.0:
        assert max_relative_error(got, exact) <= max_relative_error(a @ b, exact)


@pytest.mark.parametrize("phi", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("k", [16, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_fp32_error_vs_numpy_float32(phi, k, dtype, rng):
    a = phi_matrix(rng, (6, k), phi, dtype)
    b = phi_matrix(rng, (k, 5), phi, dtype)
    exact = exact_matmul(a, b)
    got = ozfft.matmul(a, b, precision="fp32")
    assert got.dtype == dtype
    fixed = ozfft.matmul(a, b, precision="fp32", moduli=8)
    _check_bound(a, b, fixed, exact, 8, "fast", 2.0**-24)
    assert bound_ratio(a, b, got, "fp32") <= 1.0
    assert max_relative_error(got, exact) <= max_relative_error(a @ b, exact)


@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_error_decreases_with_moduli(mode, rng):
    a = phi_matrix(rng, (6, 256), 0.5)
    b = phi_matrix(rng, (256, 6), 0.5)
    exact = exact_matmul(a, b)
    errors = [
        max_relative_error(ozfft.matmul(a, b, moduli=n, mode=mode), exact)
        for n in (6, 8, 10, 12, 14, 16)
    ]
    assert all(e2 <= e1 for e1, e2 in itertools.pairwise(errors)), errors
    # each modulus adds ~7.6 bits to log2 P, i.e. ~3.8 bits per operand: ~38 bits in all
    assert errors[-1] < errors[0] * 2.0**-32, errors


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_result_independent_of_summation_order(dtype, mode, rng):
    """Scaling decisions are integer and order-free, A'B' is exact: permuting k is a no-op."""
    a = phi_matrix(rng, (5, 300), 2.0, dtype)
    b = phi_matrix(rng, (300, 4), 2.0, dtype)
    perm = rng.permutation(300)
    ref = ozfft.matmul(a, b, mode=mode)
    np.testing.assert_array_equal(ozfft.matmul(a[:, perm], b[perm], mode=mode), ref)


@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("num_moduli", [2, 9, 16, 19, 20])
def test_complex_methods_give_the_same_bits(mode, num_moduli, rng):
    """Gaussian (two products per modulus, on its own moduli; Karatsuba at 20, where no
    Gaussian system holds the budget), Karatsuba and four products: one result."""
    a = phi_matrix(rng, (2, 7, 33), 1.0, np.complex128)
    b = phi_matrix(rng, (2, 33, 6), 1.0, np.complex128)
    out = {
        method: emulated_matmul(
            ENGINE,
            a,
            b,
            num_moduli=num_moduli,
            mode=mode,
            out_dtype=np.complex128,
            complex_method=method,
        )
        for method in ("gaussian", "karatsuba", "4m")
    }
    np.testing.assert_array_equal(out["karatsuba"], out["4m"])
    np.testing.assert_array_equal(out["gaussian"], out["karatsuba"])


def test_unknown_complex_method():
    a = np.ones((2, 2), np.complex128)
    with pytest.raises(ValueError, match="complex_method must be one of"):
        emulated_matmul(
            ENGINE, a, a, num_moduli=4, mode="fast", out_dtype=np.complex128, complex_method="gauss"
        )


def test_subnormal_and_overflowing_products_round_like_ieee():
    a = np.array([[1e-160, 3e-170], [1e200, 0.0]])
    b = np.array([[1e-160, 1e200], [1e-160, 1e200]])
    exact = exact_matmul(a, b)
    with np.errstate(over="ignore"):
        got = ozfft.matmul(a, b)
    want = np.vectorize(round_f64)(exact)
    assert np.isinf(want[1, 1])
    np.testing.assert_array_equal(got, want)
    assert 0 < got[0, 0] < 2.0**-1022  # a correctly rounded subnormal
    a32 = np.array([[1e-30, 2e-31]], np.float32)
    b32 = np.array([[1e-10], [3e-10]], np.float32)
    got32 = ozfft.matmul(a32, b32)
    exact32 = exact_matmul(a32.astype(np.float64), b32.astype(np.float64))
    assert got32[0, 0] == np.float32(round_f32(exact32[0, 0]))
    assert 0 < got32[0, 0] < np.finfo(np.float32).tiny


def _part_errors(got, exact) -> np.ndarray:
    """|got - exact| per entry (real) or per part (complex, last axis: Re, Im), exactly."""
    if not np.iscomplexobj(got):
        return np.array(
            [float(abs(Fraction(g) - e)) for g, e in zip(got.flat, exact.flat, strict=True)]
        )
    return np.array(
        [
            [float(abs(Fraction(g.real) - re)), float(abs(Fraction(g.imag) - im))]
            for g, (re, im) in zip(got.flat, exact.flat, strict=True)
        ]
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_nearest_rounding_halves_the_typical_error(dtype, rng):
    """The scaled entries rounded to nearest (docs/numerics.md, "Rounding the scaled
    entries") against truncated ones, same shifts and moduli: the RMS error relative to
    |A||B| drops about 2x (1/sqrt(12) against 1/sqrt(3) per entry), measured against
    exact rational products; 13 moduli, so that the rounding of the scaled entries
    dominates the error."""
    from ozfft.scheme import gemm

    a = phi_matrix(rng, (24, 512), 0.5, dtype)
    b = phi_matrix(rng, (512, 20), 0.5, dtype)
    bt = np.ascontiguousarray(b.T)
    exact = exact_matmul(a, b)
    mag = (np.abs(a.real) + np.abs(a.imag)) @ (np.abs(b.real) + np.abs(b.imag))
    mag = mag.reshape(-1, 1) if np.iscomplexobj(a) else mag.reshape(-1)
    sa, sb = compute_shifts(ENGINE, a, bt, 13, "fast")

    def rms(rounding: str) -> float:
        got = gemm._product(ENGINE, a, bt, sa, sb, 13, dtype, "karatsuba", rounding=rounding)
        return float(np.sqrt(np.mean((_part_errors(got, exact) / mag) ** 2)))

    assert rms("trunc") > 1.6 * rms("nearest")
