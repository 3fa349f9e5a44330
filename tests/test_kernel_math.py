"""The CUDA kernels' device math, compiled for the host with g++, agrees with the NumPy
engine bit for bit (runs without a GPU; skipped where no C++ compiler is present)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ozfft.engines.cuda.constants import moduli_macros, scaling_macros
from ozfft.engines.cuda.sources import kernel_dir
from ozfft.engines.numpy.phase_b import FLOAT32, FLOAT64, kulisch_reconstruct
from ozfft.engines.numpy.residues import residues as numpy_residues
from ozfft.ozaki.moduli import moduli_set

from .helpers import round_f32, round_f64
from .test_phase_b import _edge_values, _residues

CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no host C++ compiler")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    libs = {}

    def build(count: int):
        if count not in libs:
            out = tmp_path_factory.mktemp(f"harness{count}")
            macros = scaling_macros() | moduli_macros(moduli_set(count), with_limbs=True)
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
            libs[count] = ctypes.CDLL(str(lib))
        return libs[count]

    return build


def _ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


@pytest.mark.parametrize("count", [2, 7, 14, 16, 20])
@pytest.mark.parametrize("binary32", [False, True])
def test_kernel_crt_round_matches_reference(harness, count, binary32, rng):
    lib = harness(count)
    moduli = moduli_set(count)
    values = _edge_values(moduli.product // 2, rng)
    lo, hi = (-330, 200) if binary32 else (-1250, 1100)
    shifts = rng.integers(lo, hi, len(values)).astype(np.int32)
    u = np.ascontiguousarray(_residues(values, moduli).T.astype(np.uint32))
    out = np.empty(len(values))
    lib.oz_host_crt_round(
        _ptr(u), _ptr(shifts), _ptr(out), ctypes.c_long(len(values)), ctypes.c_int(int(binary32))
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


@pytest.mark.parametrize("count", [2, 9, 16, 20])
def test_kernel_residues_match_numpy_engine(harness, count, rng):
    lib = harness(count)
    moduli = moduli_set(count)
    x = rng.standard_normal(4000) * np.exp(rng.uniform(-30, 30, 4000))
    x[:5] = [0.0, -0.0, 5e-324, -1.5, 2.0**-1074]
    shifts = rng.integers(-100, 30, 4000).astype(np.int32)  # |2**s x| < 2**79 (the contract)
    out = np.empty((4000, count), np.int32)
    lib.oz_host_residues(_ptr(x), _ptr(shifts), _ptr(out), ctypes.c_long(4000))
    ref = numpy_residues(x[:, None], shifts.astype(np.int64), moduli).planes[:, :, 0].T
    for i, p in enumerate(moduli.moduli):
        # same residue class; both in [-p/2, p/2] (p = 256 may differ by the sign of 128)
        assert np.all((out[:, i] - ref[:, i]) % p == 0)
        assert np.all(np.abs(out[:, i]) <= p // 2)


def test_kernel_mod_nonneg(harness, rng):
    lib = harness(20)
    t = np.concatenate([rng.integers(-(2**31), 2**31, 3000), [0, -1, 1, 2**31 - 1, -(2**31)]])
    t = t.astype(np.int32)
    out = np.empty((t.size, 20), np.uint32)
    lib.oz_host_mod_nonneg(_ptr(t), _ptr(out), ctypes.c_long(t.size))
    for i, p in enumerate(moduli_set(20).moduli):
        np.testing.assert_array_equal(out[:, i], t % p)
