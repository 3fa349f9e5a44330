"""Exhaustive sweeps, run on demand: ``python -m pytest -m slow``."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import ozfft
from ozfft.engines.numpy.phase_b import FLOAT32, FLOAT64, kulisch_reconstruct
from ozfft.ozaki.residue_system import int8_system
from ozfft.reference import exact_matmul, max_relative_error, phi_matrix

from .helpers import round_f32, round_f64
from .test_phase_b import _edge_values, _residues

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("count", range(2, 21))
def test_phase_b_fuzz_every_moduli_count(count):
    moduli = int8_system(count)
    for seed in range(20):
        rng = np.random.default_rng(1000 * count + seed)
        values = _edge_values(moduli.product // 2, rng)
        u = _residues(values, moduli)
        for fmt, rounder, lo, hi in (
            (FLOAT64, round_f64, -1250, 1100),
            (FLOAT32, round_f32, -330, 200),
        ):
            shifts = rng.integers(lo, hi, len(values))
            with np.errstate(over="ignore"):
                got = kulisch_reconstruct(u, shifts.astype(np.int64), moduli, fmt)
            want = [
                rounder(Fraction(v) * Fraction(2) ** int(s))
                for v, s in zip(values, shifts, strict=True)
            ]
            np.testing.assert_array_equal(got, np.array(want))


@pytest.mark.parametrize("phi", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("mode", ["fast", "accurate"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
def test_default_never_worse_than_numpy_many_seeds(phi, mode, dtype):
    precision = "fp32" if dtype in (np.float32, np.complex64) else "fp64"
    for seed in range(12):
        rng = np.random.default_rng(seed)
        k = int(rng.choice([3, 64, 700, 4096]))
        a = phi_matrix(rng, (5, k), phi, dtype)
        b = phi_matrix(rng, (k, 4), phi, dtype)
        exact = exact_matmul(a, b)
        got = ozfft.matmul(a, b, mode=mode, precision=precision)
        assert max_relative_error(got, exact) <= max_relative_error(a @ b, exact), (seed, k)
