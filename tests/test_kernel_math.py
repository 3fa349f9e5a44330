"""The CUDA kernels' device math, compiled for the host with g++, agrees with the NumPy
engine bit for bit (runs without a GPU; skipped where no C++ compiler is present)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ozfft.engines.cuda.constants import (
    DIGIT_BITS,
    gaussian_weights,
    moduli_macros,
    rounding_macros,
    scaling_macros,
    weight_quads_macros,
)
from ozfft.engines.cuda.sources import kernel_dir
from ozfft.engines.numpy.phase_b import FLOAT32, FLOAT64, kulisch_reconstruct
from ozfft.engines.numpy.residues import residues as numpy_residues
from ozfft.engines.numpy.scaling import row_stats as numpy_row_stats
from ozfft.ozaki.residue_system import gaussian_system, int8_system
from ozfft.ozaki.scaling import ZERO_ROW_EXP, fast_shift, norm1_exponent_fast
from ozfft.scheme.gemm import gaussian_system_for

from .helpers import round_f32, round_f64
from .test_phase_b import _edge_values, _residues

CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    libs = {}

    def build(count_or_system, rounding="trunc", raw_sums=False, dp4a=False):
        """The harness for ``count`` INT8 moduli, or for a residue system (``rounding``:
        the scaled integers' rule; ``raw_sums``: Phase B takes sums below 2**24 as they
        are; ``dp4a``: with the weights' bytes of the dp4a Phase B)."""
        count = count_or_system
        key = (count, rounding, raw_sums, dp4a)
        if key not in libs:
            system = int8_system(count) if isinstance(count, int) else count
            out = tmp_path_factory.mktemp(f"harness{system.count}")
            macros = (
                scaling_macros()
                | moduli_macros(system, with_limbs=True)
                | rounding_macros(rounding)
            )
            if raw_sums:
                macros |= {"OZ_RAW_SUMS": "1"}
            if dp4a:
                macros |= weight_quads_macros(system)
            prologue = out / "prologue.h"
            prologue.write_text(macros.prologue)
            lib = out / "harness.so"
            src = Path(__file__).with_name("host_harness.cpp")
            subprocess.run(
                [
                    CXX,
                    "-O1",
                    "-std=c++17",
                    "-shared",
                    "-fPIC",
                    "-ffp-contract=off",
                    "-include",
                    str(prologue),
                    f"-I{kernel_dir()}",
                    str(src),
                    "-o",
                    str(lib),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            libs[key] = ctypes.CDLL(str(lib))
        return libs[key]

    return build


def _ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def _int32_representatives(u, moduli, rng, bits=31):
    """Values congruent to the residues ``u`` (``(n, N)``) modulo each modulus, spread over
    the whole INT32 range (as Phase A's sums are; ``bits=24``: below 2**24, the sums
    Phase B takes as they are with OZ_RAW_SUMS), the extremes included."""
    p = np.array(moduli.moduli, dtype=np.int64)
    lo = -(2**bits) // p + 1
    hi = (2**bits - 1) // p - 1
    k = rng.integers(lo, hi + 1, u.shape)
    k[0] = lo  # the most negative and the most positive representatives
    k[1] = hi
    k[2] = 0
    t = u.astype(np.int64) + k * p
    assert t.min() >= -(2**bits) and t.max() < 2**bits
    return t.astype(np.int32)


@pytest.mark.parametrize("count", [2, 5, 7, 11, 14, 15, 16, 19, 20])
@pytest.mark.parametrize("binary32", [False, True])
@pytest.mark.parametrize("raw_sums", [False, True])
def test_kernel_crt_round_matches_reference(harness, count, binary32, raw_sums, rng):
    """oz_crt_round (Phase B's real reconstruction: partial reductions of any INT32 sums,
    or with OZ_RAW_SUMS sums below 2**24 as they are; base-2**31 digit sums, quotient,
    exact correction, one rounding) against Python integers and the NumPy engine, for
    values up to P/2 and near rounding ties."""
    lib = harness(count, raw_sums=raw_sums)
    moduli = int8_system(count)
    values = _edge_values(moduli.product // 2, rng)
    lo, hi = (-330, 200) if binary32 else (-1250, 1100)
    shifts = rng.integers(lo, hi, len(values)).astype(np.int32)
    u = np.ascontiguousarray(_residues(values, moduli).T)
    t = _int32_representatives(u, moduli, rng, 24 if raw_sums else 31)
    out = np.empty(len(values))
    lib.oz_host_crt_round(
        _ptr(t), _ptr(shifts), _ptr(out), ctypes.c_long(len(values)), ctypes.c_int(int(binary32))
    )
    rounder = round_f32 if binary32 else round_f64
    want = [
        rounder(Fraction(v) * Fraction(2) ** int(s)) for v, s in zip(values, shifts, strict=True)
    ]
    np.testing.assert_array_equal(out, np.array(want))
    with np.errstate(over="ignore"):
        ref = kulisch_reconstruct(
            u.T.astype(np.uint8), shifts.astype(np.int64), moduli, FLOAT32 if binary32 else FLOAT64
        )
    np.testing.assert_array_equal(out, ref)


def _word_boundary_values(half: int, rng) -> list[int]:
    """Integers in (-P/2, P/2) around the edges of oz_crt_finish's window: powers of two at
    and beside the 64-bit words and the base-2**31 digits, exact rounding ties whose only
    sticky bit lies in a lower digit or just below the window, and all-ones runs that round
    up across a digit; and values that round
    twice differently (to 54 or 25 bits, then to one bit less, as a subnormal result one
    binade below the normal range would)."""
    vals = [(2**prec + 11) << k for prec in (54, 25) for k in (0, 1, 9, 40, 70, 99)]
    for b in (20, 31, 40, 52, 53, 61, 62, 63, 64, 65, 100, 126, 127, 128, 129, 150):
        ulp = 1 << max(0, b - 52)  # the last place of 53 bits at 2**b
        half_ulp = ulp // 2
        vals += [(1 << b) - 1, 1 << b, (1 << b) + 1, (1 << (b + 1)) - ulp // 4 - 1]
        if half_ulp:  # a tie (to even: down), and the same with one sticky bit below it
            vals += [(1 << b) + half_ulp, (1 << b) + 3 * half_ulp]
            vals += [(1 << b) + half_ulp + (1 << j) for j in {0, max(0, b - 62), b - 56} if j >= 0]
    bits = half.bit_length()
    tops, downs = rng.integers(1, 2**62, 40), rng.integers(0, 40, 40)
    vals += [int(v) >> int(s) for v, s in zip(tops, downs, strict=True)]
    vals += [int.from_bytes(rng.bytes(24), "little") >> (192 - bits + d) for d in range(1, 41)]
    vals = [s * v for v in vals for s in (1, -1)]
    return [v for v in vals if abs(v) < half]


@pytest.mark.parametrize("count", [5, 10, 14, 15, 16, 20])
@pytest.mark.parametrize("binary32", [False, True])
def test_kernel_crt_round_window_edges_and_normal_limit(harness, count, binary32, rng):
    """oz_crt_finish at the edges of its fast path (the window read off the top digits):
    values around the words and digits (ties decided by one sticky bit) at random scales, and
    every value scaled so that its result lands one binade below, at and above the smallest
    normal number (where the fast path must hand over to the subnormal rounding), against
    Python integers."""
    lib = harness(count)
    moduli = int8_system(count)
    values = _word_boundary_values(moduli.product // 2, rng)
    emin, lo, hi = (-126, -330, 200) if binary32 else (-1022, -1250, 1100)
    cases = [(v, int(s)) for v, s in zip(values, rng.integers(lo, hi, len(values)), strict=True)]
    for v in values:
        lead = abs(v).bit_length() - 1 if v else 0
        cases += [(v, emin + d - lead) for d in (-1, 0, 1)]
    xs = [v for v, _ in cases]
    shifts = np.array([s for _, s in cases], dtype=np.int32)
    u = np.ascontiguousarray(_residues(xs, moduli).T)
    t = _int32_representatives(u, moduli, rng)
    out = np.empty(len(xs))
    lib.oz_host_crt_round(
        _ptr(t), _ptr(shifts), _ptr(out), ctypes.c_long(len(xs)), ctypes.c_int(int(binary32))
    )
    rounder = round_f32 if binary32 else round_f64
    want = [rounder(Fraction(v) * Fraction(2) ** s) for v, s in cases]
    np.testing.assert_array_equal(out, np.array(want))


@pytest.mark.parametrize("count", [11, 15, None])
def test_kernel_crt_round_fp8_system(harness, count, rng):
    """The same for FP8 residue systems (moduli up to 2**15: full reductions): those for 11
    and 15 INT8 moduli, whose quotient reads two digit sums, and the largest (three)."""
    from ozfft.scheme.gemm import fp8_max_moduli, fp8_system_for

    system = fp8_system_for(count or fp8_max_moduli())
    lib = harness(system)
    values = _edge_values(system.product // 2, rng)
    shifts = rng.integers(-1250, 1100, len(values)).astype(np.int32)
    u = np.array([[v % m for m in system.moduli] for v in values], dtype=np.int64)
    t = _int32_representatives(u, system, rng)
    out = np.empty(len(values))
    lib.oz_host_crt_round(_ptr(t), _ptr(shifts), _ptr(out), ctypes.c_long(len(values)), 0)
    want = [
        round_f64(Fraction(v) * Fraction(2) ** int(s)) for v, s in zip(values, shifts, strict=True)
    ]
    np.testing.assert_array_equal(out, np.array(want))


@pytest.mark.parametrize(
    "system, nprod",
    [
        (gaussian_system(150), 2),
        (gaussian_system(31), 2),
        (int8_system(16), 3),
        (int8_system(20), 4),
    ],
    ids=["gaussian-22", "gaussian-5", "karatsuba-16", "four-20"],
)
@pytest.mark.parametrize("raw_sums", [False, True])
def test_kernel_crt_complex_matches_python_integers(harness, system, nprod, raw_sums, rng):
    """oz_crt_add_complex + oz_crt_finish (Phase B's complex reconstruction) give the
    correctly rounded Re and Im from any INT32 product sums congruent to a complex integer
    x (below 2**24 with OZ_RAW_SUMS): Karatsuba (T1 - T2, T3 - T1 - T2), four products
    (T1 - T2, T3 + T4) and Gaussian (T+ = x_re + j x_im, T- = x_re - j x_im, with 1/2 and
    1/(2j) folded into the weights)."""
    lib = harness(system, raw_sums=raw_sums)
    half = system.product // 2
    values = _edge_values(half, rng)
    n = len(values) // 2 * 2
    xr, xi = values[: n // 2] * 2, values[n // 2 : n] * 2
    rng.shuffle(xi)
    n = len(xr)
    p = np.array(system.moduli, dtype=np.int64)
    xr_res = np.array([[v % m for m in system.moduli] for v in xr], dtype=np.int64)
    xi_res = np.array([[v % m for m in system.moduli] for v in xi], dtype=np.int64)
    free = rng.integers(0, 2**20, (n, system.count)) % p  # the products' free residues
    if nprod == 2:
        j = np.array([root for root, _, _ in system.roots], dtype=np.int64)
        planes = [(xr_res + j * xi_res) % p, (xr_res - j * xi_res) % p]
    elif nprod == 3:
        planes = [free, (free - xr_res) % p, (xi_res + 2 * free - xr_res) % p]
    else:
        other = rng.integers(0, 2**20, (n, system.count)) % p
        planes = [free, (free - xr_res) % p, other, (xi_res - other) % p]
    bits = 24 if raw_sums else 31
    t = np.stack([_int32_representatives(r, system, rng, bits) for r in planes], axis=-1)
    t = np.ascontiguousarray(t)  # (n, N, nprod)
    shifts = rng.integers(-1250, 1100, n).astype(np.int32)
    re, im = np.empty(n), np.empty(n)
    lib.oz_host_crt_complex(
        _ptr(t), ctypes.c_int(nprod), _ptr(shifts), _ptr(re), _ptr(im), ctypes.c_long(n)
    )
    scale = [Fraction(2) ** int(s) for s in shifts]
    np.testing.assert_array_equal(re, [round_f64(v * f) for v, f in zip(xr, scale, strict=True)])
    np.testing.assert_array_equal(im, [round_f64(v * f) for v, f in zip(xi, scale, strict=True)])


def _residue_inputs(rng, n):
    """Entries over many binades with shifts that put |2**s x| anywhere up to 2**79 (the
    scaling's contract), plus zeros, subnormals and exact powers of two at the top, and
    scaled values on and next to the ties and the 64 threshold of ``"nearest"``."""
    x = rng.standard_normal(n) * np.exp(rng.uniform(-30, 30, n))
    x[:6] = [0.0, -0.0, 5e-324, -1.5, 2.0**-1074, -(2.0**60)]
    top = np.frexp(x)[1]
    shifts = np.where(x != 0, 79 - top, 0)  # |2**s x| in [2**78, 2**79)
    shifts[1::3] -= rng.integers(0, 120, shifts[1::3].size)  # and every smaller size
    shifts[5] = 79 - 61  # -(2**78) exactly
    # scaled halves (ties), their neighbours, and values around 64 (shift -3 or 5)
    halves = rng.integers(-(2**20), 2**20, 60) + 0.5
    edges = np.array([63.5, -63.5, 64.5, -64.5, 63.75, 64.0, -64.0, 62.5, 65.5, 0.5, -1.5])
    special = np.concatenate(
        [halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf), edges]
    )
    x[6 : 6 + special.size] = np.ldexp(special, 3)
    shifts[6 : 6 + special.size] = -3
    x[6 + special.size : 6 + 2 * special.size] = np.ldexp(special, -5)
    shifts[6 + special.size : 6 + 2 * special.size] = 5
    return x, shifts.astype(np.int32)


def _scaled_ints(x, shifts, rounding):
    """The scaled integers of the rule, in exact rationals: trunc(2**s x), or the
    nearest integer (ties to even) where |2**s x| >= 64."""
    out = []
    for v, s in zip(x, shifts, strict=True):
        y = Fraction(float(v)) * Fraction(2) ** int(s)
        out.append(round(y) if rounding == "nearest" and abs(y) >= 64 else int(y))
    return out


@pytest.mark.parametrize("count", [2, 9, 16, 20])
@pytest.mark.parametrize("digits", ["oz_host_residues", "oz_host_residues40"])
@pytest.mark.parametrize("rounding", ["trunc", "nearest"])
def test_kernel_residues_match_numpy_engine(harness, count, digits, rounding, rng):
    """Both digit splits of kernels/gemm/residues.cu (three 24-bit digits; hi 2**40 + lo
    with the residue from the low words) give the residue classes of the exact scaled
    integers (both rules, ties included) and the NumPy engine's, in [-p/2, p/2], for
    scaled entries up to 2**79."""
    lib = harness(count, rounding)
    moduli = int8_system(count)
    x, shifts = _residue_inputs(rng, 4000)
    out = np.empty((4000, count), np.int32)
    getattr(lib, digits)(_ptr(x), _ptr(shifts), _ptr(out), ctypes.c_long(4000))
    ref = numpy_residues(x[:, None], shifts.astype(np.int64), moduli, rounding)
    ref = ref.planes[:, :, 0].T
    scaled = _scaled_ints(x, shifts, rounding)
    assert 2**78 < max(abs(v) for v in scaled) < 2**79
    for i, p in enumerate(moduli.moduli):
        exact = np.array([v % p for v in scaled])
        # same residue class; both in [-p/2, p/2] (p = 256 may differ by the sign of 128)
        assert np.all((out[:, i] - exact) % p == 0)
        assert np.all((ref[:, i].astype(np.int64) - exact) % p == 0)
        assert np.all(np.abs(out[:, i]) <= p // 2)


def test_kernel_row_stats_match_numpy_engine(harness, rng):
    """kernels/gemm/scaling.cu's integer frexp/ceil/ldexp (oz_frexp_bound, oz_sumsq_term)
    give the NumPy engine's row exponents and sums of squares bit for bit: rows over every
    binade, subnormals (the clz normalization), zeros, exact powers of two and mantissas
    at the 7-bit bound's rounding edges, and rows whose small terms fall below 2**-62."""
    lib = harness(16)
    rows, width = 300, 64
    x = rng.standard_normal((rows, width)) * np.exp(rng.uniform(-700, 700, (rows, 1)))
    x[0] = rng.integers(1, 2**52, width) * 2.0**-1074  # subnormals of every length
    x[1, ::2] = 0.0
    x[2] = np.ldexp(1.0, rng.integers(-1074, 1023, width))  # powers of two incl. 2**-1074
    x[3] = np.ldexp(rng.integers(64, 128, width) / 128.0, 5)  # on the 7-bit grid
    x[3, 1::2] = np.nextafter(x[3, 1::2], np.inf)  # and just above it
    x[4] = np.ldexp(rng.standard_normal(width), rng.integers(-1000, 1000, width))
    x[5] = 0.0  # rows 6..39: spreads that put terms below 2**-62
    x[6:40] = rng.standard_normal((34, width)) * np.exp(rng.uniform(-300, 300, (34, width)))
    x = np.ascontiguousarray(x)
    max_exp = np.empty(rows, np.int32)
    sumsq = np.empty(rows, np.int64)
    lib.oz_host_row_stats(
        _ptr(x), ctypes.c_long(rows), ctypes.c_long(width), _ptr(max_exp), _ptr(sumsq)
    )
    want_exp, want_sumsq = numpy_row_stats(x, "a", need_sumsq=True)
    np.testing.assert_array_equal(max_exp, want_exp)
    np.testing.assert_array_equal(sumsq, want_sumsq)


def _row_rule_inputs(rng):
    """Zero rows, S = 1 and 2, powers of two and their neighbours (ceil_log2's edges), S up
    to 2**62, exponents of subnormal to huge rows."""
    powers = 2 ** rng.integers(1, 62, 200)
    sumsq = np.concatenate(
        [[0, 1, 2, 3, 4, 5, 2**62, 2**62 - 1], powers, powers - 1, powers + 1,
         rng.integers(0, 2**62, 400)]
    ).astype(np.int64)  # fmt: skip
    max_exp = rng.integers(-1100, 1030, sumsq.size).astype(np.int64)
    max_exp[0] = ZERO_ROW_EXP
    return max_exp, sumsq


@pytest.mark.parametrize("count", [2, 14, 20])
def test_kernel_fast_shift_matches_the_rule(harness, count, rng):
    """oz_fast_shift_of (kernels/gemm/scaling.cu's fused shift) is the integer rule of
    ozfft.ozaki.scaling.fast_shift."""
    lib = harness(16)
    max_exp, sumsq = _row_rule_inputs(rng)
    budget = int8_system(count).budget_bits
    out = np.empty_like(sumsq)
    lib.oz_host_fast_shift(
        _ptr(max_exp), _ptr(sumsq), ctypes.c_longlong(budget), _ptr(out), ctypes.c_long(out.size)
    )
    np.testing.assert_array_equal(out, fast_shift(np, max_exp, sumsq, budget))


@pytest.mark.parametrize("terms", [1, 2, 3, 64, 65, 16384, 2**17 + 1])
def test_kernel_norm1_exponent_matches_the_rule(harness, terms, rng):
    """oz_norm1_exponent_of is ozfft.ozaki.scaling.norm1_exponent_fast (odd and even
    totals: its ceiling halving)."""
    lib = harness(16)
    max_exp, sumsq = _row_rule_inputs(rng)
    bits = max(terms - 1, 0).bit_length()
    out = np.empty_like(sumsq)
    lib.oz_host_norm1_exponent(
        _ptr(max_exp), _ptr(sumsq), ctypes.c_longlong(bits), _ptr(out), ctypes.c_long(out.size)
    )
    np.testing.assert_array_equal(out, norm1_exponent_fast(np, max_exp, sumsq, terms))


def test_kernel_floor_scaled_is_floor_of_scalbn(harness, rng):
    """oz_floor_scaled (the plan probe's g-bit magnitudes floor(2**(g - E)|x|), in integers)
    is floor(ldexp(|x|, t)) wherever that is below 2**32: normal and subnormal x (small
    mantissas shifted left), zeros, results of 0, of exactly 2**k and just below, and t
    from -1100 to 1100."""
    lib = harness(16)
    e = rng.integers(-1074, 1024, 4000)
    x = np.ldexp(rng.uniform(0.5, 1.0, e.size), e)
    x[:300] = rng.integers(1, 2**20, 300) * 2.0**-1074  # subnormals, small mantissas
    x[300:400] = 0.0
    x[400:600] = np.ldexp(1.0, e[400:600])  # powers of two
    x[600:800] = np.nextafter(x[600:800], 0.0)
    x *= np.where(rng.random(x.size) < 0.5, -1.0, 1.0)
    top = np.frexp(np.abs(x))[1]  # |x| < 2**top
    g = rng.integers(0, 32, x.size)
    t = (g - top).astype(np.int32)
    t[:100] = rng.integers(1000, 1100, 100)  # subnormal rows scaled up past 2**1023
    t[300:400] = rng.integers(-1100, 1100, 100)
    keep = np.ldexp(np.abs(x), np.clip(t, -2000, 2000)) < 2.0**32
    x, t = np.ascontiguousarray(x[keep]), np.ascontiguousarray(t[keep])
    out = np.empty(x.size, np.uint32)
    lib.oz_host_floor_scaled(_ptr(x), _ptr(t), _ptr(out), ctypes.c_long(x.size))
    want = [int(Fraction(abs(float(v))) * Fraction(2) ** int(s)) for v, s in zip(x, t, strict=True)]
    np.testing.assert_array_equal(out.astype(np.int64), np.array(want, np.int64))
    assert x.size > 3500 and np.count_nonzero(out == 0) > 50


def test_word_forms_of_the_statistics_are_the_general_ones(harness, rng):
    """oz_sumsq_term_less_one (plus one) and oz_floor_scaled_top26 (the statistics' fast path on the
    words of the bits, for warps without subnormal, NaN or Inf entries) give the integers
    of oz_sumsq_term and oz_floor_scaled on zeros and normal x: exponents across the range,
    powers of two and their neighbours (the ceiling's edges), row exponents from the
    entry's own to 40 above it (every shift of the term, past its clamp), and scalings
    whose right shift runs from 27 (the probe's least: g <= 26) past 64."""
    lib = harness(16)
    n = 20000
    e = rng.integers(-1021, 1024, n)
    x = np.ldexp(rng.uniform(0.5, 1.0, n), e)
    x[:2000] = np.ldexp(1.0, e[:2000])
    x[2000:4000] = np.nextafter(x[2000:4000], 0.0)
    x[4000:5000] = np.nextafter(x[4000:5000], np.inf)
    x[5000:5300] = 0.0
    x[5300:5600] = np.finfo(np.float64).tiny * rng.integers(1, 4, 300)  # the smallest normals
    x *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
    exponent = np.frexp(np.abs(x))[1]
    row_max = (exponent + rng.integers(0, 41, n)).astype(np.int32)
    down = rng.integers(27, 70, n)  # 1075 - field - t
    field = (np.abs(x).view(np.uint64) >> np.uint64(52)).astype(np.int64)
    t = (1075 - field - down).astype(np.int32)
    term = np.empty(n, np.uint32)
    scaled = np.empty(n, np.uint32)
    lib.oz_host_normal_words(_ptr(x), _ptr(row_max), _ptr(t), _ptr(term), _ptr(scaled),
                             ctypes.c_long(n))  # fmt: skip
    want_term = np.empty(n, np.int64)
    want_scaled = np.empty(n, np.uint32)
    lib.oz_host_general_words(_ptr(x), _ptr(row_max), _ptr(t), _ptr(want_term),
                              _ptr(want_scaled), ctypes.c_long(n))  # fmt: skip
    np.testing.assert_array_equal(term.astype(np.int64), want_term)
    np.testing.assert_array_equal(scaled, want_scaled)
    # the cases are all there: terms of 1 (shifts past the clamp) and of 2**30, shifts
    # below and above 32, results of 0
    assert np.count_nonzero(want_term == 1) > 1000 and want_term.max() == 2**30
    assert np.count_nonzero(want_scaled >= 2**20) > 1000  # the top bits kept
    assert np.count_nonzero((down >= 32) & (want_scaled > 0)) > 1000
    assert np.count_nonzero(want_scaled == 0) > 1000


@pytest.mark.parametrize("slices", range(2, 10))
def test_diagonal_sums_carried_a_byte_at_a_time_are_exact(harness, slices, rng):
    """gemm/diagonal_carry.cuh: the diagonals' INT32 sums D_d carried a byte at a time
    (the complex slices kernel's fold) give base-2**31 digit sums of exactly sum_d D_d
    256**d (Python integers), with every digit but the top one in [0, 2**31), for sums
    as large as the kernel's bound (|D_d| + carry < 2**25) and at its extremes."""
    lib = harness(16)
    diagonals = 2 * slices - 1
    digits = 8 * (diagonals - 1) // 31 + 1
    top = 2**25
    sums = rng.integers(-top, top, (4000, diagonals))
    sums[0], sums[1], sums[2] = -top, top - 1, 0  # the extremes, and zero
    sums[3] = rng.integers(-255, 256, diagonals)  # small: carries of -1, 0 and bytes near 0
    sums[4, :] = -1
    sums = sums.astype(np.int32)
    x = np.empty((sums.shape[0], digits), np.int64)
    assert lib.oz_host_carried_sums(_ptr(sums), ctypes.c_long(sums.shape[0]),
                                    ctypes.c_int(diagonals), _ptr(x)) == 1  # fmt: skip
    for row, got in zip(sums.tolist(), x.tolist(), strict=True):
        want = sum(v * 256**d for d, v in enumerate(row))
        assert sum(v * 2 ** (31 * digit) for digit, v in enumerate(got)) == want
        assert all(0 <= v < 2**31 for v in got[:-1])


def test_kernel_mod_nonneg(harness, rng):
    lib = harness(20)
    t = np.concatenate([rng.integers(-(2**31), 2**31, 3000), [0, -1, 1, 2**31 - 1, -(2**31)]])
    t = t.astype(np.int32)
    out = np.empty((t.size, 20), np.uint32)
    lib.oz_host_mod_nonneg(_ptr(t), _ptr(out), ctypes.c_long(t.size))
    for i, p in enumerate(int8_system(20).moduli):
        np.testing.assert_array_equal(out[:, i], t % p)
    # the small-product kernel's form for |t| < 2**30
    small = np.concatenate([t[:3000] // 2, [0, -1, 1, 2**30 - 1, -(2**30) + 1]]).astype(np.int32)
    out = np.empty((small.size, 20), np.uint32)
    lib.oz_host_mod_nonneg_small(_ptr(small), _ptr(out), ctypes.c_long(small.size))
    for i, p in enumerate(int8_system(20).moduli):
        np.testing.assert_array_equal(out[:, i], small.astype(np.int64) % p)


@pytest.mark.parametrize("budget", [31, 117, 147])
@pytest.mark.parametrize("rounding", ["trunc", "nearest"])
def test_kernel_gaussian_residues_match_numpy_engine(harness, budget, rounding, rng):
    """oz_gaussian_residues (kernels/gemm/residues.cu's Gaussian planes) is rmod(re +- j im)
    of the NumPy engine's symmetric residues, for entries scaled up to |2**s x| ~ 2**78
    (|R + j I| near 2**46 in the kernel's one exact reduction)."""
    system = gaussian_system(budget)
    lib = harness(system, rounding)
    n = 3000
    x = rng.standard_normal((n, 2)) * np.exp(rng.uniform(-30, 30, (n, 1)))
    x[:3] = [[0.0, -0.0], [5e-324, -1.5], [2.0**-1074, 2.0]]
    top = np.abs(x).max(axis=1)
    shifts = np.where(top > 0, 78 - np.frexp(top)[1], 0)
    shifts[::7] -= rng.integers(0, 90, shifts[::7].size)  # and smaller scaled values
    shifts = shifts.astype(np.int32)
    plus = np.empty((n, system.count), np.int32)
    minus = np.empty_like(plus)
    xc = np.ascontiguousarray(x)
    lib.oz_host_gaussian_residues(_ptr(xc), _ptr(shifts), _ptr(plus), _ptr(minus), ctypes.c_long(n))
    ref = numpy_residues(
        (x[:, 0] + 1j * x[:, 1])[:, None], shifts.astype(np.int64), system, rounding
    )
    planes = ref.planes[:, :, :, 0].astype(np.int64)  # (N, 2, n): symmetric re, im
    for i, (p, (j, _, _)) in enumerate(zip(system.moduli, system.roots, strict=True)):
        for sign, got in ((1, plus), (-1, minus)):
            want = (planes[i, 0] + sign * j * planes[i, 1] + p // 2) % p - p // 2
            np.testing.assert_array_equal(got[:, i], want)


def test_small_product_geometry_matches_kernel_source():
    """The small-product kernel's tile, longest k and static shift table as the engine sizes
    its launches and shared memory (ozfft/engines/cuda/constants.py) are those the kernel
    source defines (kernels/gemm/small_product.cu)."""
    from ozfft.engines.cuda import constants

    src = (kernel_dir() / "gemm" / "small_product.cu").read_text()

    def define(name):
        return int(re.search(rf"#define {name} (\d+)", src).group(1))

    assert define("OZ_SP_TILE") == constants.SMALL_PRODUCT_TILE
    assert define("OZ_SP_K") == constants.SMALL_PRODUCT_K
    assert "__shared__ int shift[2 * OZ_SP_TILE];" in src
    assert constants.SMALL_PRODUCT_STATIC_SHARED == 2 * define("OZ_SP_TILE") * 4
    # 8 warps per residue plane: each owns 4 / planes of the tile's m16n8 output tiles
    assert constants.SMALL_PRODUCT_THREADS == 32 * (define("OZ_SP_TILE") ** 2 // (16 * 8)) // 4
    # the real slices kernel: two m16n8 output tiles per warp
    assert constants.SMALL_SLICE_THREADS == 32 * define("OZ_SP_TILE") ** 2 // (16 * 8 * 2)
    assert constants.SMALL_SLICE_THREADS == define("OZ_SP_SLICE_THREADS")
    # the complex slices kernel: 64 x OZ_SP_CTILE_N tiles, an m16 x n16 position per warp
    columns = define("OZ_SP_CTILE_N")
    assert constants.SMALL_COMPLEX_SLICE_COLUMNS == columns
    assert constants.SMALL_COMPLEX_SLICE_THREADS == define("OZ_SP_CTHREADS")
    assert define("OZ_SP_CTHREADS") == 32 * define("OZ_SP_TILE") * columns // (16 * 16)
    assert define("OZ_SP_CB_FRAG") == 2 * 8 * 32  # Br and Bi: 8 bytes each, 32 lanes
    # four NaN/Inf counts, then the flag's address, as the engine allocates them
    from ozfft.engines.cuda import engine

    assert engine._SP_COUNTS == define("OZ_SP_FLAG_SLOT") + 1 == 5
    # Ar, Ai (64 rows) per slice, then Br, Bi (columns rows), one byte per digit of k;
    # B's region holds a staged 64 x columns tile of outputs
    assert "#define OZ_SP_CA_SLICE (2 * OZ_SP_A_PLANE)" in src
    k = define("OZ_SP_K")
    for slices, itemsize in ((8, 16), (9, 16), (6, 16), (8, 8), (3, 8)):
        assert constants.small_complex_slice_shared(slices, itemsize) == (
            slices * 2 * 64 * k + max(slices * 2 * columns * k, 64 * columns * itemsize)
        )


def test_small_product_slices_hold_the_fast_mode_bound():
    """small_product_slices(L): S signed base-256 digits hold every fast-mode scaled integer
    (|a'| <= 2**((L - 1) / 2), exact rationals) and S - 1 do not always; None exactly where
    more than a signed 64-bit integer would be needed; the kernel source knows the macro."""
    from ozfft.engines.cuda.constants import small_product_macros, small_product_slices

    for parts, most, last in ((1, 8, 126), (2, 9, 142)):
        for budget in range(2, 160):
            slices = small_product_slices(budget, parts)
            bound_sq = Fraction(2) ** (budget - 1)  # (2**((L - 1) / 2))**2

            def holds(s, bound_sq=bound_sq):
                return Fraction(127 * (256**s - 1), 255) ** 2 >= bound_sq

            if budget <= last:
                assert slices is not None and slices <= most and holds(slices)
                assert slices == 1 or not holds(slices - 2)  # at most one digit to spare
            else:
                assert slices is None
    macros = small_product_macros(
        int8_system(16), out_float=False, rounding="nearest", chunk=16, shifts=True, slices=8
    )
    assert macros["OZ_SP_SLICES"] == "8" and "OZ_SP_COMPLEX_SLICES" not in macros
    gaussian = gaussian_system(int8_system(18).budget_bits)
    macros = small_product_macros(
        gaussian, out_float=False, rounding="nearest", chunk=20, shifts=True, slices=9
    )
    assert macros["OZ_SP_SLICES"] == "9" and macros["OZ_SP_COMPLEX_SLICES"] == "1"
    source = (kernel_dir() / "gemm" / "small_product.cu").read_text()
    assert "oz_small_product_slices_real" in source and "#ifdef OZ_SP_SLICES" in source
    assert "oz_small_product_slices_gaussian" in source and "#ifdef OZ_SP_COMPLEX_SLICES" in source


def test_b_in_place_only_for_the_slices_kernels_of_one_item_a_block():
    """``b_columns`` (``OZ_SP_B_COLUMNS``, B read in place) is a variant of the slices
    kernels with one item a block: with slices it is set (real and complex); without
    slices, or with several items a block, the macros are refused with the reason (the
    kernel source refuses the same combinations with an #error)."""
    from ozfft.engines.cuda.constants import small_product_macros

    gaussian = gaussian_system(int8_system(14).budget_bits)
    for system, slices in ((int8_system(14), 7), (gaussian, 7)):
        macros = small_product_macros(
            system, out_float=False, rounding="nearest", chunk=system.count, shifts=True,
            slices=slices, b_columns=True,
        )  # fmt: skip
        assert macros["OZ_SP_B_COLUMNS"] == "1" and macros["OZ_SP_SLICES"] == "7"
    for kwargs in ({"slices": 0}, {"slices": 7, "packed": True}):
        with pytest.raises(ValueError, match="only the slices kernels, one item a block"):
            small_product_macros(
                int8_system(14), out_float=False, rounding="nearest", chunk=14,
                b_columns=True, **kwargs,
            )  # fmt: skip
    source = (kernel_dir() / "gemm" / "small_product.cu").read_text()
    assert "#if defined(OZ_SP_B_COLUMNS) && (!defined(OZ_SP_SLICES) || defined(OZ_SP_PACKED))" in (
        source
    )


# -- Phase B's weighting on dp4a (kernels/gemm/phase_b_bytes.cuh) ------------------------


def _u32(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.uint32)


def test_kernel_gaussian_bytes_reduce_every_pair(harness):
    """``oz_pb_gaussian_bytes`` on every pair ``t1, t2`` in ``[0, p)`` of every modulus of
    the Gaussian table, in every byte of the words: ``(t1 + t2) mod p``, ``(t1 - t2) mod
    p``."""
    lib = harness(16)
    for p in gaussian_system(150).moduli:  # (the whole table)
        t1, t2 = (v.ravel().astype(np.int64) for v in np.meshgrid(np.arange(p), np.arange(p)))
        words = [sum(np.roll(t, e) << (8 * e) for e in range(4)) for t in (t1, t2)]
        w1, w2 = _u32(words[0]), _u32(words[1])
        re, im = np.empty_like(w1), np.empty_like(w1)
        lib.oz_host_gaussian_bytes(
            _ptr(w1), _ptr(w2), _ptr(np.full(w1.size, p, np.int32)), ctypes.c_long(w1.size),
            _ptr(re), _ptr(im),
        )  # fmt: skip
        for e in range(4):
            a, b = np.roll(t1, e), np.roll(t2, e)
            np.testing.assert_array_equal((re >> (8 * e)) & 255, (a + b) % p)
            np.testing.assert_array_equal((im >> (8 * e)) & 255, (a - b) % p)


def test_kernel_pb_transpose_moves_byte_e_of_word_m_to_byte_m_of_word_e(harness, rng):
    lib = harness(16)
    w = _u32(rng.integers(0, 2**32, (500, 4), dtype=np.uint64))
    q = np.empty_like(w)
    lib.oz_host_pb_transpose(_ptr(w), ctypes.c_long(len(w)), _ptr(q))
    for e in range(4):
        for m in range(4):
            np.testing.assert_array_equal((q[:, e] >> (8 * m)) & 255, (w[:, m] >> (8 * e)) & 255)


def _dp4a_systems():
    for count in (2, 5, 15, 16, 17, 20):
        yield pytest.param(count, False, id=f"int8-{count}")
    for count in (2, 8, 15, 16, 19):  # Gaussian: 2, 9, 16, 18 and 21 moduli
        yield pytest.param(count, True, id=f"gaussian-{count}")


@pytest.mark.parametrize(("count", "gaussian"), list(_dp4a_systems()))
def test_kernel_dp4a_digit_sums_rebuild_the_crt_sums(harness, count, gaussian, rng):
    """The kernels' byte-plane weighting end to end on the host, for four outputs at a
    time: plane words of each modulus (Gaussian: ``t1`` and ``t2``, reduced by
    ``oz_pb_gaussian_bytes``), transposed by ``oz_pb_transpose``, summed on the weights'
    quads by ``oz_pb_dp4a_sums`` and folded by ``oz_pb_fold``. The digit sums' value is
    ``sum_i r_i W_i`` in exact integers (Gaussian: ``r_i = (t1 +- t2) mod p_i`` with the
    weights of Re and Im), congruent mod ``P`` to the unreduced terms'."""
    system = gaussian_system_for(int8_system(count)) if gaussian else int8_system(count)
    lib = harness(system, dp4a=True)
    moduli, n = system.moduli, system.count
    digits = -(-system.product.bit_length() // DIGIT_BITS)
    quads = -(-n // 4)
    tables = gaussian_weights(system) if gaussian else (system.weights,)
    top = [p - 1 for p in moduli]
    cases = [(top, top), (top, [0] * n), ([0] * n, top), ([0] * n, [0] * n)]
    cases += [(list(rng.integers(0, moduli)), list(rng.integers(0, moduli))) for _ in range(40)]
    for first in range(0, len(cases), 4):
        group = cases[first : first + 4]
        # plane words: modulus i's residues of the four outputs, a byte each
        words = [_u32([sum(int(g[part][i]) << (8 * e) for e, g in enumerate(group))
                       for i in range(n)]) for part in (0, 1)]  # fmt: skip
        if gaussian:
            re, im = np.empty_like(words[0]), np.empty_like(words[0])
            lib.oz_host_gaussian_bytes(
                _ptr(words[0]), _ptr(words[1]), _ptr(np.array(moduli, np.int32)),
                ctypes.c_long(n), _ptr(re), _ptr(im),
            )  # fmt: skip
            parts = [(re, 1), (im, -1)]
        else:
            parts = [(words[0], 0)]
        for table, (part_words, sign) in enumerate(parts):
            padded = np.zeros(4 * quads, np.uint32)
            padded[:n] = part_words
            q = np.empty_like(padded)
            lib.oz_host_pb_transpose(_ptr(padded), ctypes.c_long(quads), _ptr(q))
            acc = np.empty(4 * digits, np.int64)
            assert lib.oz_host_pb_digit_sums(_ptr(q), table, _ptr(acc)) == 1
            assert acc.max() < 2**62
            for e, (t1, t2) in enumerate(group):
                x = sum(
                    int(a) << (DIGIT_BITS * d) for d, a in enumerate(acc[e * digits :][:digits])
                )
                terms = [int(a) + sign * int(b) for a, b in zip(t1, t2, strict=True)]
                reduced = [t % p for t, p in zip(terms, moduli, strict=True)]
                assert x == sum(r * w for r, w in zip(reduced, tables[table], strict=True))
                unreduced = sum(t * w for t, w in zip(terms, tables[table], strict=True))
                assert (x - unreduced) % system.product == 0


def test_probe_geometry_matches_kernel_source():
    """The plan probe's launch geometry as the engine sets it (its rows kernels' threads,
    its pairs kernels' threads: 2 x 2 of a block's tile pairs each) is the one
    kernels/gemm/plan_probe.cu defines and bounds its launches with."""
    from ozfft.engines.cuda import engine

    src = (kernel_dir() / "gemm" / "plan_probe.cu").read_text()

    def define(name):
        return int(re.search(rf"#define {name} (\d+)", src).group(1))

    assert engine._PROBE_THREADS == define("OZ_PROBE_THREADS")
    assert engine._PROBE_PAIR_THREADS == define("OZ_PROBE_PAIR_THREADS")
    assert engine._PROBE_ROWS == define("OZ_PROBE_ROWS")
    tiles = define("OZ_PROBE_ROWS") // define("OZ_PROBE_TILE")
    assert define("OZ_PROBE_PAIR_THREADS") == tiles**2 // 4
    # the items kernels' minima in their dynamic shared memory (OZ_PROBE_MINIMA_BYTES)
    assert "#define OZ_PROBE_STRIDE (2 * OZ_PROBE_SUBSET + 2)" in src
    stride = 2 * define("OZ_PROBE_SUBSET") + 2
    assert engine._PROBE_MINIMA_BYTES == 2 * tiles * stride * 4
    assert src.count("__launch_bounds__(OZ_PROBE_PAIR_THREADS)") == 2


def test_finish_without_its_quotient_digits_does_not_compile(tmp_path):
    """``OZ_INV_P_TOP`` is scaled for ``OZ_QUOTIENT_DIGITS`` top digit sums
    (constants.py, ``_crt_macros``): the host harness's macro set with the first but not
    the second stops the build with a message naming it, rather than reading three sums by
    default; with both it builds."""
    macros = dict(moduli_macros(int8_system(15), with_limbs=True) | scaling_macros())
    src = Path(__file__).with_name("host_harness.cpp")

    def build(defines):
        prologue = tmp_path / "prologue.h"
        prologue.write_text("".join(f"#define {k} {v}\n" for k, v in defines.items()))
        cmd = [CXX, "-std=c++17", "-fsyntax-only", "-include", str(prologue)]
        return subprocess.run([*cmd, f"-I{kernel_dir()}", str(src)], capture_output=True, text=True)

    assert build(macros).returncode == 0
    del macros["OZ_QUOTIENT_DIGITS"]
    run = build(macros)
    assert run.returncode != 0
    assert "OZ_QUOTIENT_DIGITS: the digit sums the quotient reads" in run.stderr
