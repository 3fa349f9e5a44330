# ruff: noqa
"""Synchronized explicit-count calls (ozfft.matmul(a, b, moduli=14)): prepared per
signature against the general path (linalg._prepared_product switched off; the engine's
launch plans and flagged counts kept), and cupy.matmul, in alternating rounds (CUDA
events, median of 100 calls a round, median of 5 rounds), on one process."""

import json, os
import numpy as np, cupy as cp
import ozfft
from ozfft import linalg
from ozfft.bench.timing import median_ms
from ozfft.reference import phi_matrix

OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(5)
prepared_product = linalg._prepared_product
cases = {}
for name, shape, dtype in (
    ("z 1000x64^3", (1000, 64, 64), np.complex128),
    ("d 1000x64^3", (1000, 64, 64), np.float64),
    ("z 64^3", (64, 64), np.complex128),
    ("d 64^3", (64, 64), np.float64),
):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dtype))
    b = cp.asarray(phi_matrix(rng, shape, 0.5, dtype))
    cases[name] = (a, b)


def general(on):
    linalg._prepared_product = prepared_product if on else (lambda *args: None)


res = {}
for name, (a, b) in cases.items():
    general(True)
    x = ozfft.matmul(a, b, moduli=14)
    general(False)
    y = ozfft.matmul(a, b, moduli=14)
    assert bool(cp.array_equal(x, y)), name
    r = {"prepared": [], "general": [], "cupy": []}
    for _ in range(5):
        general(True)
        r["prepared"].append(median_ms(cp, lambda: ozfft.matmul(a, b, moduli=14), 100, warm=5))
        general(False)
        r["general"].append(median_ms(cp, lambda: ozfft.matmul(a, b, moduli=14), 100, warm=5))
        r["cupy"].append(median_ms(cp, lambda: cp.matmul(a, b), 100, warm=5))
    general(True)
    med = {k: float(np.median(v)) * 1e3 for k, v in r.items()}
    res[name] = {"rounds_ms": r, "median_us": med}
    print(
        f"{name:12s} prepared {med['prepared']:6.1f} us  general {med['general']:6.1f} us  cupy {med['cupy']:6.1f} us  ratio {med['prepared'] / med['cupy']:.2f}x (general {med['general'] / med['cupy']:.2f}x)"
    )
json.dump(res, open(os.path.join(OUT, "ab_prepared.json"), "w"), indent=1)
