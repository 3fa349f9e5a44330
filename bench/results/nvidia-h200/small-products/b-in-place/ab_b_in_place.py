# ruff: noqa: B007, B023, E501  (a measurement script: closures used within their loop pass)
"""A/B of the complex slices kernel reading B in place (OZ_SP_B_COLUMNS) against the
transposed copy then the kernel on Bt's rows, 1000 x 64^3 complex128, explicit moduli,
alternating rounds, same process; cupy.matmul for the ratio; bits compared."""

import json
import os

import cupy as cp
import numpy as np

import ozfft
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.residue_system import int8_system
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import gaussian_system_for

gpu = cuda_engine()
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
out = {}


def ev_time(f, reps=30):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record()
        f()
        e.record()
        e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))


for count in (14, 15):
    g = gaussian_system_for(int8_system(count))
    L = int8_system(count).budget_bits
    view = b.swapaxes(-1, -2)

    def in_place():
        return gpu.fused_fast_product(a, view, L, g, np.complex128, rounding="nearest")

    def copied():
        return gpu.fused_fast_product(
            a, cp.ascontiguousarray(view), L, g, np.complex128, rounding="nearest"
        )

    def call():
        return ozfft.matmul(a, b, moduli=count)

    x, y = in_place(), copied()
    same = bool(cp.array_equal(x, y)) and bool(cp.array_equal(call(), x))
    rounds = {"in_place": [], "copied": [], "matmul": [], "cupy": []}
    for r in range(6):
        for name, f in (
            ("in_place", in_place),
            ("copied", copied),
            ("matmul", call),
            ("cupy", lambda: cp.matmul(a, b)),
        ):
            rounds[name].append(ev_time(f))
    med = {k: float(np.median(v)) for k, v in rounds.items()}
    out[count] = {"bits_equal": same, "rounds_ms": rounds, "median_ms": med}
    print(
        f"moduli {count}: bits equal {same}; "
        + ", ".join(f"{k} {v:.4f}" for k, v in med.items())
        + f"; matmul ratio {med['cupy'] / med['matmul']:.3f}, in-place engine ratio {med['cupy'] / med['in_place']:.3f}"
    )
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "b_in_place.json"), "w"), indent=1)
