"""The accuracy guarantee of ``ozfft.matmul`` (docs/numerics.md, "The accuracy
guarantee of matmul"), checked against exact rational products:

    |ozfft.matmul(a, b)_ij - (AB)_ij| <= k u (|A||B|)_ij + eta    (each part)

with ``u = max(u_precision, u_output)``, ``k`` the real products per output part (2k for
complex operands), ``eta`` the final roundings' underflow term; and ozfft's median
error no worse than numpy's own. Also the integer rules behind the plan, the plan's
choices (defaults kept for well-scaled data, more moduli, splits, native), and that the
plan depends on nothing but the data (not on the order of the inner dimension).
"""

from __future__ import annotations

import collections
from fractions import Fraction

import numpy as np
import pytest

import ozfft
from ozfft.engines import NumpyEngine, base
from ozfft.linalg import matmul_plan
from ozfft.ozaki import bounds
from ozfft.ozaki.bounds import INDEX_HASH_MIX, INDEX_HASH_MULT
from ozfft.ozaki.scaling import norm1_exponent_bound, norm1_exponent_fast
from ozfft.profiling import profile_phases
from ozfft.reference import phi_matrix, to_scaled_ints
from ozfft.scheme import gemm as scheme

ENGINE = NumpyEngine()
DTYPES = [np.float64, np.complex128, np.float32, np.complex64]
PHIS = [0.0, 1.0, 2.0, 4.0, 8.0, 16.0]
_BITS = {"e": 11, "f": 24, "F": 24, "d": 53, "D": 53}
_ETA = {53: Fraction(1, 2**1075), 24: Fraction(1, 2**150), 11: Fraction(1, 2**25)}
_MAX = {
    53: Fraction(float(np.finfo(np.float64).max)),
    24: Fraction(float(np.finfo(np.float32).max)),
    11: Fraction(float(np.finfo(np.float16).max)),
}
#: plans met by the checks of this module (printed with ``pytest -s``)
PLANS: collections.Counter = collections.Counter()


# -- an independent reference (Python integers) -----------------------------------------


def _exact(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact ``a @ b`` of 2-D float arrays as (object array of ints, denominator)."""
    (ai, sa), (bi, sb) = to_scaled_ints(a), to_scaled_ints(b)
    return ai.dot(bi), 1 << (sa + sb)


def _combine(p1, p2, sign):
    (x, dx), (y, dy) = p1, p2
    d = max(dx, dy)
    return x * (d // dx) + sign * y * (d // dy), d


def exact_parts(a, b) -> list[tuple]:
    """Per output part: ((AB) ints, den), ((|A||B|) ints, den), real or Re/Im."""
    a = np.asarray(a)
    b = np.asarray(b)
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        a = a.astype(np.complex128)
        b = b.astype(np.complex128)
        ar, ai, br, bi = a.real, a.imag, b.real, b.imag
        re = _combine(_exact(ar, br), _exact(ai, bi), -1)
        im = _combine(_exact(ar, bi), _exact(ai, br), 1)
        s_re = _combine(_exact(abs(ar), abs(br)), _exact(abs(ai), abs(bi)), 1)
        s_im = _combine(_exact(abs(ar), abs(bi)), _exact(abs(ai), abs(br)), 1)
        return [(re, s_re), (im, s_im)]
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return [(_exact(a, b), _exact(abs(a), abs(b)))]


def _as_2d(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    return (a[None] if a.ndim == 1 else a), (b[:, None] if b.ndim == 1 else b)


def bound_ratio(a, b, got, precision: str = "fp64", native: bool = False) -> float:
    """``max |got - AB| / (k u |A||B| + 4 eta)`` over entries and parts (must be <= 1).

    Native plans are held to the native routine's own standard bound
    ``gamma_k = k u / (1 - k u)`` (with ``k`` underflow terms). Entries whose exact value
    overflows the output format must be infinite.
    """
    a, b = _as_2d(a, b)
    got = np.asarray(got).reshape(a.shape[0], b.shape[1])
    out_bits = _BITS[got.dtype.char]
    k = a.shape[1] * (2 if np.iscomplexobj(got) else 1)
    u = max(Fraction(1, 2 ** bounds.PRECISION_BITS[precision]), Fraction(1, 2**out_bits))
    ku = k * u / (1 - k * u) if native else k * u
    eta = (k if native else 4) * _ETA[out_bits]
    values = [got.real, got.imag] if np.iscomplexobj(got) else [got]
    worst = Fraction(0)
    for v, ((p, d), (s, ds)) in zip(values, exact_parts(a, b), strict=True):
        for x, pi, si in zip(
            v.astype(np.float64).ravel().tolist(),
            p.ravel().tolist(),
            s.ravel().tolist(),
            strict=True,
        ):
            exact = Fraction(pi, d)
            if not np.isfinite(x):
                assert abs(exact) > _MAX[out_bits], (x, float(exact))
                continue
            err = abs(Fraction(x) - exact)
            if err:
                worst = max(worst, err / (ku * Fraction(si, ds) + eta))
    return float(worst)


def relative_errors(a, b, got) -> np.ndarray:
    """Relative error of every finite part of every entry (absolute where exact is 0)."""
    a, b = _as_2d(a, b)
    got = np.asarray(got).reshape(a.shape[0], b.shape[1])
    values = [got.real, got.imag] if np.iscomplexobj(got) else [got]
    out = []
    for v, ((p, d), _) in zip(values, exact_parts(a, b), strict=True):
        for x, pi in zip(v.astype(np.float64).ravel().tolist(), p.ravel().tolist(), strict=True):
            if np.isfinite(x):
                exact = Fraction(pi, d)
                err = abs(Fraction(x) - exact)
                out.append(float(err / abs(exact)) if exact else float(err))
    return np.array(out)


def check(a, b, *, precision="fp64", mode="fast", median=True) -> ozfft.linalg.MatmulPlan:
    """ozfft.matmul(a, b) keeps the bound; its median error is <= numpy's (numpy in
    float32 / complex64 when ``precision="fp32"``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        got = ozfft.matmul(a, b, precision=precision, mode=mode)
        native = np.matmul(a, b)
        if precision == "fp32":
            single = {"f": np.float32, "c": np.complex64}[native.dtype.kind]
            native = np.matmul(np.asarray(a).astype(single), np.asarray(b).astype(single))
    plan = matmul_plan(a, b, precision=precision, mode=mode)
    PLANS[plan.describe()] += 1
    assert got.dtype == ozfft.linalg.result_dtype(np.asarray(a).dtype, np.asarray(b).dtype)
    assert got.shape == native.shape
    ratio = bound_ratio(a, b, got, precision, native=plan.native)
    assert ratio <= 1.0, (plan, ratio)
    if median:
        ours = np.median(relative_errors(a, b, got))
        theirs = np.median(relative_errors(a, b, native))
        assert ours <= theirs, (plan, ours, theirs)
    return plan


def wide(rng, shape, phi, dtype=np.float64) -> np.ndarray:
    """phi-matrices, for single precision scaled by a power of two so that products of
    entries stay finite (the spread is unchanged)."""
    x = phi_matrix(rng, shape, phi, np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    if np.dtype(dtype) in (np.float32, np.complex64):
        top = max(np.abs(x.real).max(), np.abs(x.imag).max())
        x = x * 2.0 ** (50 - np.frexp(top)[1])
    return x.astype(dtype)


def _precision(dtype) -> str:
    return "fp32" if np.dtype(dtype) in (np.float32, np.complex64) else "fp64"


def _fast_fp64(dtype) -> dict:
    """``guaranteed_matmul``'s keywords for a fast-mode fp64 call rounding to ``dtype``."""
    return {
        "precision": "fp64",
        "mode": "fast",
        "out_dtype": np.dtype(dtype),
        "out_bits": 53,
        "exact_bits": (53, 53),
    }


# -- the guarantee -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("phi", PHIS)
def test_phi_matrices_keep_the_bound(dtype, phi, rng):
    a = wide(rng, (9, 40), phi, dtype)
    b = wide(rng, (40, 7), phi, dtype)
    check(a, b, precision=_precision(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("phi", [1.0, 4.0, 16.0])
def test_accurate_mode_keeps_the_bound(dtype, phi, rng):
    a = wide(rng, (8, 33), phi, dtype)
    b = wide(rng, (33, 6), phi, dtype)
    check(a, b, mode="accurate")


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_short_inner_dimensions(k, dtype, rng):
    """k = 1 must be correctly rounded; small k leaves almost no truncation budget."""
    a = wide(rng, (12, k), 8.0, dtype)
    b = wide(rng, (k, 10), 8.0, dtype)
    check(a, b, precision=_precision(dtype), median=False)
    if k == 1 and np.dtype(dtype).kind == "f":  # one real product: correctly rounded
        with np.errstate(over="ignore"):
            rounded = (a.astype(np.float64) * b.astype(np.float64)).astype(dtype)
            got = ozfft.matmul(a, b, precision=_precision(dtype))
        np.testing.assert_array_equal(got, rounded)


@pytest.mark.parametrize("dtype", DTYPES)
def test_signed_cancelling_rows(dtype, rng):
    """Rows of +-pairs: the exact results are tiny next to |A||B|."""
    k = 24
    v = wide(rng, (6, k // 2), 2.0, dtype)
    a = np.concatenate([v, -v * (1 + 2.0**-20)], axis=1).astype(dtype)
    w = wide(rng, (k // 2, 5), 2.0, dtype)
    b = np.concatenate([w, w], axis=0)
    b[0] += b[0] * 2.0**-30
    check(a, b, precision=_precision(dtype), median=False)
    # a huge pair cancelling exactly around small entries: the bound, not exactness,
    # is promised (k u |A||B| is large here; numpy returns 3, the exact value is 4)
    a2 = np.array([[1e20, 1.0, -1e20, 3.0], [1.0, 2.0**-60, -1.0, 2.0**-70]], dtype)
    check(a2, np.ones((4, 2), dtype), precision=_precision(dtype), median=False)


def test_huge_and_subnormal_mixes(rng):
    values_a = np.array([1e300, -1e-300, 1e-310, 5e-324, 1.0, -3.5, 2.0**-1070, 7e150])
    values_b = np.array([1e-300, -1e5, 2e-310, 5e-324, -1.0, 0.25, 1e-150, 3e-10])
    a = rng.choice(values_a, (10, 16)) * rng.choice([-1.0, 1.0], (10, 16))
    b = rng.choice(values_b, (16, 9)) * rng.choice([-1.0, 1.0], (16, 9))
    a[3] = 0.0
    b[:, 2] = 5e-324
    check(a, b, median=False)
    check(a.astype(np.complex128) + 1j * a[::-1], b - 2j * b[::-1], median=False)
    check(np.array([[1e300, 1e-300]]), np.array([[1e-300], [1e300]]))  # 1 + 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "sa, sb", [((33,), (33,)), ((33,), (33, 5)), ((6, 33), (33,)), ((2, 1, 4, 33), (3, 33, 5))]
)
def test_vectors_and_stacks(dtype, sa, sb, rng):
    a = wide(rng, sa, 8.0, dtype)
    b = wide(rng, sb, 8.0, dtype)
    with np.errstate(over="ignore"):
        got = ozfft.matmul(a, b, precision=_precision(dtype))
    assert got.shape == np.matmul(a, b).shape
    a2 = a[None] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
    got2 = got.reshape((*batch, a2.shape[-2], b2.shape[-1]))
    for index in np.ndindex(batch):
        assert bound_ratio(a2[index], b2[index], got2[index], _precision(dtype)) <= 1.0


def test_fp32_precision_on_float64_data(rng):
    a = wide(rng, (8, 40), 4.0)
    b = wide(rng, (40, 6), 4.0)
    plan = check(a, b, precision="fp32")
    assert plan.native or plan.moduli < matmul_plan(a, b).moduli or plan.products > 1


def test_float16_and_integer_operands(rng):
    a = rng.standard_normal((7, 30)).astype(np.float16)
    b = rng.standard_normal((30, 5)).astype(np.float16)
    check(a, b)
    ai = rng.integers(-(2**40), 2**40, (5, 20))
    bi = rng.integers(-(2**10), 2**10, (20, 4))
    got = ozfft.matmul(ai, bi)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, (ai @ bi).astype(np.float64))  # exact below 2**53


def test_the_wide_range_example():
    """The issue's example: signed 50x60 @ 60x40 with entries exp(8 N(0,1))."""
    rng = np.random.default_rng(0)
    a = rng.choice([-1.0, 1.0], (50, 60)) * np.exp(8 * rng.standard_normal((50, 60)))
    b = rng.choice([-1.0, 1.0], (60, 40)) * np.exp(8 * rng.standard_normal((60, 40)))
    plan = check(a, b)
    assert plan.products > 1 or plan.native
    ours = relative_errors(a, b, ozfft.matmul(a, b)).max()
    sixteen = relative_errors(a, b, ozfft.matmul(a, b, moduli=16)).max()
    native = relative_errors(a, b, a @ b).max()
    assert ours <= native < sixteen


# -- the plan ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("shape", [(6, 16, 5), (64, 256, 48), (3, 5000, 4)])
def test_well_scaled_inputs_keep_the_default_count(dtype, mode, shape, rng):
    m, k, n = shape
    a = phi_matrix(rng, (m, k), 0.5, dtype)
    b = phi_matrix(rng, (k, n), 0.5, dtype)
    precision = _precision(dtype)
    plan = matmul_plan(a, b, precision=precision, mode=mode)
    assert plan.describe() == str(ozfft.GemmOptions(precision=precision, mode=mode).num_moduli)
    np.testing.assert_array_equal(
        ozfft.matmul(a, b, precision=precision, mode=mode),
        ozfft.matmul(a, b, precision=precision, mode=mode, moduli=plan.moduli),
    )


def test_plans_escalate_with_the_range(rng):
    describe = []
    for phi in (0.5, 2.0, 4.0, 16.0):
        a = phi_matrix(rng, (16, 64), phi)
        b = phi_matrix(rng, (64, 12), phi)
        describe.append(matmul_plan(a, b))
    assert describe[0].describe() == "16"
    assert describe[1].products == 1 and 16 <= describe[1].moduli <= 20
    assert describe[2].products >= 1 and not describe[2].native
    costs = [0 if p.native else p.moduli * p.products for p in describe[:3]]
    assert costs == sorted(costs)


def test_native_fallback_is_numpy_and_reported(rng):
    a = wide(rng, (4, 3000), 16.0)
    b = wide(rng, (3000, 3), 16.0)
    plan = matmul_plan(a, b)
    assert plan.native and plan.products == 0 and plan.describe() == "native"
    with profile_phases() as prof:
        got = ozfft.matmul(a, b)
    np.testing.assert_array_equal(got, a @ b)
    assert prof.calls.get("native") == 1 and "phase_a" not in prof.ms
    PLANS["native"] += 1


def test_profiling_reports_the_guarantee(rng):
    a = phi_matrix(rng, (10, 30), 1.0)
    with profile_phases() as prof:
        ozfft.matmul(a, a.T)
    assert prof.calls.get("guarantee", 0) >= 1 and "native" not in prof.ms


def test_explicit_moduli_turn_the_guarantee_off(rng):
    a = phi_matrix(rng, (5, 20), 8.0)
    plan = matmul_plan(a, a.T, moduli=np.int16(9))
    assert plan.moduli == 9 and not plan.guaranteed and plan.products == 1
    assert not ozfft.GemmOptions(moduli=9).guaranteed and ozfft.GemmOptions().guaranteed


@pytest.mark.parametrize("phi", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_plan_and_bits_do_not_depend_on_the_order_of_k(phi, dtype, rng):
    a = phi_matrix(rng, (2, 12, 700), phi, dtype)
    b = phi_matrix(rng, (700, 9), phi, dtype)
    ref = ozfft.matmul(a, b)
    for _ in range(3):
        perm = rng.permutation(700)
        assert matmul_plan(a[..., perm], b[perm]) == matmul_plan(a, b)
        np.testing.assert_array_equal(ozfft.matmul(a[..., perm], b[perm]), ref)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_plan_does_not_depend_on_the_block_size(dtype, rng, monkeypatch):
    """The decision's passes run in blocks of entries (items, rows): tiny blocks that cut
    stacks and rows anywhere give the same content hash, the same tiled and entry-level
    pairing vectors and the same plans as one block."""
    cases = [
        (phi_matrix(rng, (3, 21, 300), 2.0, dtype), phi_matrix(rng, (3, 300, 17), 2.0, dtype)),
        (wide(rng, (37, 150), 4.0).astype(dtype), wide(rng, (150, 29), 4.0).astype(dtype)),
    ]
    results = []
    for block in (1 << 24, 37, 1000):
        monkeypatch.setattr(scheme, "_BLOCK_ENTRIES", block)
        got = []
        for a, b in cases:
            bt = np.ascontiguousarray(np.swapaxes(b, -1, -2))
            plan, planner = scheme.plan_matmul(
                ENGINE, a, bt, precision="fp64", mode="fast", out_bits=53, exact_bits=(53, 53)
            )
            vectors = [ENGINE.column_hash(a, 0), *planner.pairing.tiled()]
            got.append((plan, [*vectors, *planner.pairing.entrywise()]))
        results.append(got)
    for other in results[1:]:
        for (plan, vectors), (plan2, vectors2) in zip(results[0], other, strict=True):
            assert plan == plan2
            for x, y in zip(vectors, vectors2, strict=True):
                np.testing.assert_array_equal(x, y)


def test_stacked_split_search_is_the_count_by_count_search(monkeypatch):
    """The split search evaluates every moduli count at once on engines that search so
    (``Engine.stacked_split_search``, for operands of up to ``_STACKED_SPLIT_BYTES``) and
    count by count elsewhere: on a seeded sweep of wide-range products (four dtypes, both
    modes, both precisions, stacks, rows of small integers, whose remainders are zero) the
    same plans and the same bits either way. The sweep reaches splits of one operand and
    of both, at the default count and above it, and native plans."""
    rng = np.random.default_rng(5)
    calls = []
    stacked_split = scheme._Planner._stacked_split

    def spy(self, op, counts, split):
        sigma, exact, keep = stacked_split(self, op, counts, split)
        calls.append(bool(split) and bool((exact & ~op.zero).any()))  # zero remainders
        return sigma, exact, keep

    monkeypatch.setattr(scheme._Planner, "_stacked_split", spy)
    plans = []
    for _ in range(48):
        dtype = rng.choice([np.float32, np.float64, np.complex64, np.complex128])
        k, m, n = (int(v) for v in rng.integers((3, 1, 1), (120, 24, 24)))
        batch = () if rng.random() < 0.7 else (int(rng.integers(2, 4)),)
        a = wide(rng, (*batch, m, k), float(rng.uniform(2, 20)), dtype)
        b = wide(rng, (*batch, k, n), float(rng.uniform(0.5, 20)), dtype)
        if rng.random() < 0.3:  # a row of small integers among wide-range ones
            a[..., int(rng.integers(m)), :] = rng.integers(-3, 4, k)
        mode = str(rng.choice(["fast", "accurate"]))
        precision = "fp64" if rng.random() < 0.75 else "fp32"
        monkeypatch.setattr(NumpyEngine, "stacked_split_search", False)
        plan = matmul_plan(a, b, mode=mode, precision=precision)
        want = ozfft.matmul(a, b, mode=mode, precision=precision)
        monkeypatch.setattr(NumpyEngine, "stacked_split_search", True)
        assert matmul_plan(a, b, mode=mode, precision=precision) == plan
        np.testing.assert_array_equal(ozfft.matmul(a, b, mode=mode, precision=precision), want)
        plans.append((plan, bounds.default_moduli(precision, mode)))
    assert any(p.split_a != p.split_b for p, _ in plans), plans
    assert any(p.products == 4 for p, _ in plans), plans
    assert any(p.products == 2 and p.moduli > base for p, base in plans), plans
    assert any(p.products == 4 and p.moduli > base for p, base in plans), plans
    assert any(p.native for p, _ in plans), plans
    assert any(calls), "no split search met a remainder that is zero"


def test_split_plan_matches_its_parts(rng):
    """A split product is the compensated sum of its exact hi/lo products."""
    a = wide(rng, (8, 30), 8.0)
    b = wide(rng, (30, 6), 8.0)
    plan = matmul_plan(a, b)
    assert plan.products == 4, plan
    got = ozfft.matmul(a, b)
    assert bound_ratio(a, b, got) <= 1.0
    PLANS[plan.describe()] += 1


# -- the integer rules -------------------------------------------------------------------------


def test_truncation_budget():
    u = Fraction(1, 2**53)
    assert bounds.truncation_budget(1, "fp64", 53, 1) is bounds.NO_BUDGET  # exact needed
    # one product: rho + u (1 + rho) <= k u (its rounding acts on up to (1 + rho) S)
    assert bounds.truncation_budget(2, "fp64", 53, 1) == 54  # rho = u / (1 + u) -> 2**-54
    assert bounds.truncation_budget(1024, "fp64", 53, 1) == 44
    assert bounds.truncation_budget(1, "fp32", 53, 1) == 25  # fp32 promise, float64 output
    assert bounds.truncation_slack(2, "fp64", 53, 4) < 0  # splits cannot help at k = 2
    assert bounds.truncation_slack(3, "fp64", 53, 4) > 0
    for k in (2, 3, 17, 4096):
        for products in (1, 2, 4):
            r = bounds.truncation_budget(k, "fp64", 53, products)
            if r is not None:
                rho = Fraction(1, 2**r)
                f = bounds.rounding_error_bound(products, 53)
                # the promise: truncation plus the roundings of what they act on
                total = rho + f * (1 + rho) if products == 1 else rho + f
                assert total <= k * u
                assert bounds.truncation_slack(k, "fp64", 53, products) < 2 * rho
    assert bounds.rounding_error_bound(1, 24) == Fraction(1, 2**24)
    assert bounds.rounding_error_bound(1, 11) > Fraction(1, 2**11)  # rounded from float64


def test_element_deficit():
    q = np.array([10, 40, 53, 60])
    np.testing.assert_array_equal(bounds.element_deficit(np, q, 53, 40), [32, 2, 0, 0])
    np.testing.assert_array_equal(bounds.element_deficit(np, q, 53, None), [43, 13, 0, 0])
    np.testing.assert_array_equal(bounds.element_deficit(np, q, 24, 40), [14, 0, 0, 0])
    # a large budget (r + 2 < 7) still asks for rounded entries: sigma + e >= 7
    q = np.array([2, 5, 6, 7, 30])
    np.testing.assert_array_equal(bounds.element_deficit(np, q, 24, 2), [5, 2, 1, 0, 0])
    np.testing.assert_array_equal(bounds.element_deficit(np, q, 5, 2), [3, 0, 0, 0, 0])


@pytest.mark.parametrize("phi", [0.0, 2.0, 8.0])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_norm1_exponents_bound_the_1_norms(phi, dtype, rng):
    x = phi_matrix(rng, (7, 50), phi, dtype)
    x[2] = 0.0
    x[4, 3] = 2.0**-1070
    st = ENGINE.row_stats(x, "a", need_sumsq=True)
    terms = 100 if np.iscomplexobj(x) else 50
    nb_fast = norm1_exponent_fast(np, st.max_exp, st.sumsq, terms)
    g = 5 if np.iscomplexobj(x) else 6
    bar = ENGINE.bound_operand(x, st.max_exp, g)
    nb_acc = norm1_exponent_bound(np, st.max_exp, bar.sum(-1, dtype=np.int64), g)
    for i, row in enumerate(x):
        if not row.any():
            continue
        norm = sum(Fraction(float(v)) for v in np.abs(row.real)) + sum(
            Fraction(float(v)) for v in np.abs(row.imag)
        )
        assert norm <= Fraction(2) ** int(nb_fast[i]) and norm <= Fraction(2) ** int(nb_acc[i])
        assert Fraction(2) ** int(nb_acc[i]) < 4 * norm * 2**g  # not wildly loose


@pytest.mark.parametrize("phi", [0.5, 4.0])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lower_bound_products_bound_abs_products(phi, dtype, rng):
    """2**(E_i+E_j-2g) G_ij <= (|A||B|)_ij exactly, for the subset the plan uses."""
    a = phi_matrix(rng, (6, 300), phi, dtype)
    bt = phi_matrix(rng, (5, 300), phi, dtype)
    planner = scheme._Planner(
        ENGINE,
        a,
        bt,
        precision="fp64",
        mode="fast",
        out_bits=53,
        exact_bits=(53, 53),
        timer=scheme._no_timer,
    )
    pair = planner.pairing
    g = scheme._pair_products(np, pair.ma, pair.mb)
    assert g.max() <= 2.0**53
    parts = exact_parts(a, bt.T)
    for i in range(6):
        for j in range(5):
            lb = Fraction(int(g[i, j])) * Fraction(2) ** int(
                planner.a.max_exp[i] + planner.b.max_exp[j] - 2 * pair.g
            )
            for _, (s, ds) in parts:
                assert lb <= Fraction(s[i, j], ds)


def test_index_hash_is_a_function_of_the_content(rng):
    x = rng.standard_normal((3, 4, 50))
    perm = rng.permutation(50)
    h = ENGINE.column_hash(x, 0)
    np.testing.assert_array_equal(ENGINE.column_hash(x[..., perm], 0), h[perm])
    assert len(set(h.tolist())) == 50


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_index_hash_matches_python_integers(dtype, rng, monkeypatch):
    """Engine.column_hash against its definition in Python integers: the 64-bit patterns
    of each inner index's entries (rows of the flattened stack) times the odd weights
    ((v ^ (v >> 31)) MIX) | 1, v = (r + 2 salt + 1) MULT, summed modulo 2**64; a complex
    entry's sums as s_re + s_im MULT. Also with blocks of rows smaller than the stack."""
    x = phi_matrix(rng, (2, 7, 13), 4.0, dtype)
    x[0, 1, 2] = -0.0
    words = x.reshape(-1, 13).view(np.uint64)
    mask = (1 << 64) - 1

    def weight(r, salt):
        v = (r + 2 * salt + 1) * INDEX_HASH_MULT & mask
        return ((v ^ (v >> 31)) * INDEX_HASH_MIX & mask) | 1

    for salt in (0, 1):
        sums = [
            sum(int(words[r, c]) * weight(r, salt) for r in range(words.shape[0])) & mask
            for c in range(words.shape[1])
        ]
        if dtype == np.complex128:
            pairs = zip(sums[0::2], sums[1::2], strict=True)
            sums = [(s_re + s_im * INDEX_HASH_MULT) & mask for s_re, s_im in pairs]
        for block in (1 << 24, 30):
            monkeypatch.setattr(base, "_HASH_BLOCK_ENTRIES", block)
            assert ENGINE.column_hash(x, salt).tolist() == sums


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_random_sweep(seed):
    """Many shapes, ranges, dtypes and both modes (run with ``-m slow``)."""
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        for phi in (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0):
            for m, k, n in ((5, 1, 4), (4, 2, 3), (6, 7, 5), (8, 33, 6), (3, 200, 4), (17, 64, 9)):
                for mode in ("fast", "accurate"):
                    a = wide(rng, (m, k), phi, dtype)
                    b = wide(rng, (k, n), phi, dtype)
                    check(a, b, precision=_precision(dtype), mode=mode, median=False)


def test_zz_report_plans():
    """Print the plans the checks above met (``pytest -s tests/test_guarantee.py``)."""
    print("\nplans:", dict(PLANS))


@pytest.mark.parametrize(
    "dtype, k, small_exp, precision",
    [(np.float64, 16384, 20, "fp64"), (np.float32, 1024, 12, "fp32")],
)
def test_one_signed_product_next_to_overflow_stays_finite(dtype, k, small_exp, precision):
    """A one-signed row against a column of 2**(emax-1) whose exact product rounds to the
    format's largest value: the default call must not return inf (rounding the scaled
    entries to nearest could push the exact integer product past the threshold; the plan
    truncates near overflow: _Planner.near_overflow). Found by review; the entries are
    chosen so that every small one scales to a fraction above one half."""
    p, emax = (53, 1024) if dtype == np.float64 else (24, 128)
    threshold = Fraction(2) ** emax * (1 - Fraction(1, 2 ** (p + 1)))
    col = Fraction(2) ** (emax - 1)
    a = b = None
    for j in range(1, 4096):  # the small entries' last bits: scaled, above one half
        small = dtype(2.0**-small_exp * (1 + j * 2.0 ** (1 - p)))
        a0 = dtype(float(threshold / col - (k - 1) * Fraction(float(small))))
        while col * (Fraction(float(a0)) + (k - 1) * Fraction(float(small))) >= threshold:
            a0 = np.nextafter(a0, dtype(0))
        a = np.full((1, k), small, dtype)
        a[0, 0] = a0
        b = np.full((k, 1), dtype(2.0 ** (emax - 1)), dtype)
        n = matmul_plan(a, b, precision=precision).moduli
        bt = np.ascontiguousarray(b.T).astype(np.float64)
        sigma = int(scheme.compute_shifts(ENGINE, a.astype(np.float64), bt, n, "fast")[0][0])
        frac = (Fraction(float(small)) * Fraction(2) ** sigma) % 1
        if Fraction(1, 2) < frac < Fraction(6, 10):
            break
    exact = Fraction(float(a0)) * col + (k - 1) * Fraction(float(small)) * col
    assert exact < threshold  # finite in the format, so the promise covers it
    got = ozfft.matmul(a, b, precision=precision)
    assert np.isfinite(got).all()
    u = Fraction(1, 2**p)
    assert abs(Fraction(float(got[0, 0])) - exact) <= k * u * exact


# -- a one-pass probe of the tiled test ---------------------------------------------------


class _ProbingEngine(NumpyEngine):
    """The NumPy engine with a ``tiled_plan_probe`` assembled from the staged decision
    (the scheme's use of a probe, checked where there is no GPU); it checks the probe's
    arguments against those the staged test uses."""

    def __init__(self) -> None:
        super().__init__()
        self.probes: list = []

    def tiled_plan_probe(self, a, bt, rules):
        from tests.helpers import staged_tiled_probe

        r = rules.pairing_offset - 1 - 2 * rules.lower_bound_bits
        probe, expected, _ = staged_tiled_probe(self, a, bt, budget_bits=rules.budget_bits, r=r)
        assert rules == expected
        self.probes.append(probe)
        return base.PendingProbe(lambda: probe)


class _PreparingEngine(_ProbingEngine):
    """A :class:`_ProbingEngine` asked to prepare the default call's probe and product
    (``Engine.probed_product_executor``): it checks the probe's arguments as
    ``tiled_plan_probe`` does, records the product's, and prepares nothing."""

    def probed_product_executor(self, a, bt, rules, *, moduli, out_dtype, rounding):
        self.tiled_plan_probe(a, bt, rules)  # (asserts the staged test's arguments)
        self.product = (moduli, out_dtype, rounding)
        return None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("k", [1, 24, 64, 128, 129])
def test_the_prepared_default_call_asks_the_general_paths_probe(dtype, k, rng):
    """``guaranteed_product_executor`` (linalg's prepared default calls) asks the engine
    for the probe ``guaranteed_matmul``'s one-pass probe runs (the staged test's
    integers), and for the product on the default count's moduli, rounded once; past
    SUBSET inner indices (and where the product is exact) it asks for nothing."""
    compute = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    a = phi_matrix(rng, (3, 20, k), 0.5, compute)
    b = phi_matrix(rng, (3, k, 11), 0.5, compute)
    out_bits = 24 if np.dtype(dtype) in (np.float32, np.complex64) else 53
    kw = {"precision": _precision(dtype), "mode": "fast", "out_bits": out_bits}
    engine = _PreparingEngine()
    got = scheme.guaranteed_product_executor(
        engine, a, b, out_dtype=np.dtype(dtype), phase_a="int8", **kw
    )
    assert got is None  # (the engine prepared nothing)
    general = _ProbingEngine()
    scheme.guaranteed_matmul(general, a, b, out_dtype=np.dtype(dtype), exact_bits=(53, 53), **kw)
    assert len(engine.probes) == len(general.probes)  # (k = 1 real: exact, no probe)
    assert len(general.probes) == (1 < k <= scheme.SUBSET) or k == 1
    if engine.probes:
        assert engine.probes[0] == general.probes[0]
        moduli, out_dtype, rounding = engine.product
        is_complex = compute == np.complex128
        plan = scheme.MatmulPlan(scheme.default_moduli(kw["precision"], "fast"))
        assert moduli == scheme._phase_a_moduli(plan.system, is_complex, "gaussian")[0]
        assert (out_dtype, rounding) == (np.dtype(dtype), scheme.SINGLE_ROUNDING)


@pytest.mark.parametrize(
    "dtype, case",
    [(d, c) for d in (np.float64, np.complex128) for c in ("proved", "wide", "near_overflow")]
    + [(np.float32, "proved"), (np.float32, "wide")],  # float32 overflows at 2**128 itself
)
def test_a_one_pass_probe_gives_the_staged_plan_and_bits(dtype, case, rng):
    """With a probe (the CUDA engine has one for k <= 64) ``guaranteed_matmul`` returns the
    plan and the bits of the whole decision: the default count where the probe proves it
    (rounded by truncation near the output's overflow), the whole decision otherwise."""
    phi = 8.0 if case == "wide" else 0.5
    compute = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    a = phi_matrix(rng, (3, 20, 24), phi, compute)
    b = phi_matrix(rng, (3, 24, 11), phi, compute)
    if case == "near_overflow":
        a, b = a * 2.0**510, b * 2.0**510
    out_bits = 24 if dtype == np.float32 else 53
    kw = {
        "precision": _precision(dtype),
        "mode": "fast",
        "out_dtype": np.dtype(dtype),
        "out_bits": out_bits,
        "exact_bits": (53, 53),
    }
    with np.errstate(over="ignore", invalid="ignore"):
        want, want_plan = scheme.guaranteed_matmul(ENGINE, a, b, **kw)
        probing = _ProbingEngine()
        got, plan = scheme.guaranteed_matmul(probing, a, b, **kw)
    (probe,) = probing.probes
    proved = probe.deficit_a <= 0 and probe.deficit_b <= 0
    if out_bits == 53:  # (8 moduli for fp32 are proved or not by the sample's luck)
        assert proved == (case != "wide")
    assert scheme._near_overflow(probe.maxima, out_bits) == (case == "near_overflow")
    assert plan == want_plan
    np.testing.assert_array_equal(got, want)


class _InPlaceProbeEngine(_ProbingEngine):
    """A probe that, like the CUDA engine's, is handed B's transposed view and hands back
    its own C-contiguous rows (``PendingProbe.bt``); it records what it was given and every
    operand the engine prepares."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list = []
        self.prepared: list = []

    def prepare_operand(self, x):
        self.prepared.append(x)
        return super().prepare_operand(x)

    def tiled_plan_probe(self, a, bt, rules):
        self.given.append(bt)
        rows = np.ascontiguousarray(bt)
        pending = super().tiled_plan_probe(a, rows, rules)
        return base.PendingProbe(pending.read, pending.shifts, rows)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("phi", [0.5, 8.0])  # the probe proves the default count; it does not
def test_the_probes_rows_of_bt_serve_every_later_stage(dtype, phi, rng):
    """The scheme gives the probe B's transposed view (not a copy) and takes the rows the
    probe hands back for the product and, where the probe does not prove the default
    count, for the whole decision: B is never prepared separately; the bits are the
    staged ones."""
    a = phi_matrix(rng, (2, 12, 16), phi, dtype)
    b = phi_matrix(rng, (2, 16, 9), phi, dtype)
    kw = _fast_fp64(dtype)
    want, want_plan = scheme.guaranteed_matmul(ENGINE, a, b, **kw)
    engine = _InPlaceProbeEngine()
    got, plan = scheme.guaranteed_matmul(engine, a, b, **kw)
    (view,) = engine.given
    assert np.shares_memory(view, b) and not view.flags.c_contiguous
    assert view.shape == (2, 9, 16)
    assert not any(np.shares_memory(x, b) for x in engine.prepared)
    assert plan == want_plan
    (probe,) = engine.probes
    assert (probe.deficit_a <= 0 and probe.deficit_b <= 0) == (phi == 0.5)
    np.testing.assert_array_equal(got, want)


class _GivenStatsEngine(NumpyEngine):
    """The NumPy engine with a probe that, like the CUDA engine's past k = 64, answers only
    when given the statistics: the staged test's result (where it fails, the whole decision
    runs on the statistics and the subset formed for the probe)."""

    has_plan_probe = True

    def __init__(self) -> None:
        super().__init__()
        self.probes: list = []
        self.inside = False  # within the reference (its own statistics and subset)

    def tiled_plan_probe(self, a, bt, rules, *, stats=None, index=None):
        from tests.helpers import staged_tiled_probe

        if stats is None:
            return None
        r = rules.pairing_offset - 1 - 2 * rules.lower_bound_bits
        self.inside = True
        probe, expected, subset = staged_tiled_probe(
            self, a, bt, budget_bits=rules.budget_bits, r=r
        )
        self.inside = False
        assert rules == expected
        assert (index is None) == (subset is None)
        assert index is None or np.array_equal(index, subset)
        self.probes.append(probe)
        return base.PendingProbe(lambda: probe)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("k", [100, 300])  # all of k; a 128-index subset
@pytest.mark.parametrize("fail", [False, True])
def test_a_probe_given_statistics_gives_the_staged_plan_and_bits(dtype, k, fail, rng, monkeypatch):
    """The probe with given statistics (any k): the staged decision's plan and bits, and
    the statistics and the inner-index subset are formed once per call, whether the probe
    proves the default count (phi = 0.5) or the whole decision runs after it (phi = 1.5:
    the tiled test fails and the entrywise one proves a single product; the decision starts
    there, without running the tiled test again)."""
    phi = 1.5 if fail else 0.5
    a = phi_matrix(rng, (2, 12, k), phi, dtype)
    b = phi_matrix(rng, (2, k, 9), phi, dtype)
    kw = _fast_fp64(dtype)
    want, want_plan = scheme.guaranteed_matmul(ENGINE, a, b, **kw)
    engine = _GivenStatsEngine()
    calls = collections.Counter()
    subset, row_stats, tiled = scheme._subset, NumpyEngine.row_stats, scheme._Pairing.tiled

    def counted_subset(*args):  # (engine, a, bt, k)
        calls["subset"] += not engine.inside
        return subset(*args)

    def counted_stats(self, *args, **kwargs):
        calls["row_stats"] += not engine.inside
        return row_stats(self, *args, **kwargs)

    def counted_tiled(self):
        calls["tiled"] += not engine.inside
        return tiled(self)

    monkeypatch.setattr(scheme, "_subset", counted_subset)
    monkeypatch.setattr(NumpyEngine, "row_stats", counted_stats)
    monkeypatch.setattr(scheme._Pairing, "tiled", counted_tiled)
    got, plan = scheme.guaranteed_matmul(engine, a, b, **kw)
    (probe,) = engine.probes
    assert (probe.deficit_a > 0 or probe.deficit_b > 0) == fail
    assert (calls["subset"], calls["row_stats"], calls["tiled"]) == (1, 2, 0)  # no second test
    assert plan == want_plan
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("case", ["proved", "wide", "given", "given_fails"])
def test_the_plan_alone_takes_the_probe(dtype, case, rng):
    """``guaranteed_plan`` (what ``matmul_plan`` runs): the plan of ``guaranteed_matmul``
    from the probe where it proves the default count, the whole decision otherwise, and no
    product is computed either way."""
    k = 100 if case.startswith("given") else 24
    phi = {"wide": 8.0, "given_fails": 1.5}.get(case, 0.5)
    a = phi_matrix(rng, (3, 20, k), phi, dtype)
    b = phi_matrix(rng, (3, k, 11), phi, dtype)
    kw = {"precision": "fp64", "mode": "fast", "out_bits": 53, "exact_bits": (53, 53)}
    _, want = scheme.guaranteed_matmul(ENGINE, a, b, out_dtype=np.dtype(dtype), **kw)
    engine = _GivenStatsEngine() if case.startswith("given") else _ProbingEngine()
    products = []
    engine.exact_product = lambda *args, **kwargs: products.append(1)
    prepared = engine.prepare_operand(a), engine.prepare_operand(np.swapaxes(b, -1, -2))
    plan = scheme.guaranteed_plan(engine, *prepared, **kw)
    assert plan == want
    (probe,) = engine.probes
    proved = probe.deficit_a <= 0 and probe.deficit_b <= 0
    assert proved == (case in ("proved", "given"))
    assert plan.reason == "default moduli proved (tiled bound)" or not proved
    assert products == []
