"""Synchronized default (guaranteed) calls, ozfft.matmul(a, b): prepared per signature
against the general path (linalg._prepared_product switched off for them; the engine's
launch plans and flagged counts kept), the explicit 16-moduli prepared call and
cupy.matmul, in alternating rounds (CUDA events, median of 100 calls a round, median of
5 rounds), on one process. Also phi = 8 (the probe does not prove the default count:
the general decision from the prepared probe)."""
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
for name, shape, dtype, phi in (("z 1000x64^3", (1000, 64, 64), np.complex128, 0.5),
                                ("d 1000x64^3", (1000, 64, 64), np.float64, 0.5),
                                ("z 64^3", (64, 64), np.complex128, 0.5),
                                ("d 64^3", (64, 64), np.float64, 0.5),
                                ("z 100x32^3", (100, 32, 32), np.complex128, 0.5),
                                ("z 64^3 phi 8", (64, 64), np.complex128, 8.0)):
    a = cp.asarray(phi_matrix(rng, shape, phi, dtype)); b = cp.asarray(phi_matrix(rng, shape, phi, dtype))
    cases[name] = (a, b)

def general(on):
    linalg._prepared_product = prepared_product if on else (
        lambda a, b, precision, moduli, *rest: prepared_product(a, b, precision, moduli, *rest)
        if moduli is not None else None)

res = {}
for name, (a, b) in cases.items():
    general(True); x = ozfft.matmul(a, b)
    general(False); y = ozfft.matmul(a, b)
    assert bool(cp.array_equal(x, y)), name
    r = {"prepared": [], "general": [], "explicit 16": [], "cupy": []}
    for _ in range(5):
        general(True); r["prepared"].append(median_ms(cp, lambda: ozfft.matmul(a, b), 100, warm=5))
        general(False); r["general"].append(median_ms(cp, lambda: ozfft.matmul(a, b), 100, warm=5))
        general(True); r["explicit 16"].append(median_ms(cp, lambda: ozfft.matmul(a, b, moduli=16), 100, warm=5))
        r["cupy"].append(median_ms(cp, lambda: cp.matmul(a, b), 100, warm=5))
    general(True)
    med = {k: float(np.median(v)) * 1e3 for k, v in r.items()}
    res[name] = {"rounds_ms": r, "median_us": med}
    print(f"{name:13s} prepared {med['prepared']:6.1f}  general {med['general']:6.1f}  explicit16 {med['explicit 16']:6.1f}  cupy {med['cupy']:6.1f} us  ratio {med['prepared']/med['cupy']:.2f}x (general {med['general']/med['cupy']:.2f}x)")
json.dump(res, open(os.path.join(OUT, "ab_default.json"), "w"), indent=1)
