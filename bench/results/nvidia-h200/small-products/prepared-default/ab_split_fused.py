"""Default calls on wide-range operands (phi = 8: split products): the split parts' products
in one launch each (engine.fused_product, now) against the stages with the residue cache
(before: _product skipped the one pass where a residue cache was given), same process,
alternating rounds (CUDA events, median of 10 calls a round, median of 3 rounds)."""
import json, os
import numpy as np, cupy as cp
import ozfft
from ozfft.scheme import gemm
from ozfft.bench.timing import median_ms
from ozfft.reference import phi_matrix

OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(5)
now = gemm._product

class _NoFused:
    def __init__(self, engine): self._e = engine
    def fused_product(self, *args, **kwargs): return None
    def __getattr__(self, name): return getattr(self._e, name)

def before(engine, a, bt, sa, sb, moduli, out_dtype, complex_method, residues=None, **kw):
    if residues is not None:
        engine = _NoFused(engine)
    return now(engine, a, bt, sa, sb, moduli, out_dtype, complex_method, residues, **kw)

res = {}
for name, shape, dt in (("z 64^3", (64, 64), np.complex128), ("d 64^3", (64, 64), np.float64),
                        ("z 1000x64^3", (1000, 64, 64), np.complex128),
                        ("d 100x64^3", (100, 64, 64), np.float64)):
    a = cp.asarray(phi_matrix(rng, shape, 8.0, dt)); b = cp.asarray(phi_matrix(rng, shape, 8.0, dt))
    gemm._product = before; x = ozfft.matmul(a, b)
    gemm._product = now; y = ozfft.matmul(a, b)
    assert bool(cp.array_equal(x, y)), name
    r = {"now": [], "before": [], "cupy": []}
    for _ in range(3):
        gemm._product = now; r["now"].append(median_ms(cp, lambda: ozfft.matmul(a, b), 10, warm=2))
        gemm._product = before; r["before"].append(median_ms(cp, lambda: ozfft.matmul(a, b), 10, warm=2))
        r["cupy"].append(median_ms(cp, lambda: cp.matmul(a, b), 10, warm=2))
    gemm._product = now
    med = {k: float(np.median(v)) for k, v in r.items()}
    res[name] = {"plan": ozfft.linalg.matmul_plan(a, b).describe(), "rounds_ms": r, "median_ms": med}
    print(f"{name:12s} {res[name]['plan']:22s} now {med['now']:7.3f} ms  before {med['before']:7.3f} ms  cupy {med['cupy']:6.3f} ms")
json.dump(res, open(os.path.join(OUT, "ab_split_fused.json"), "w"), indent=1)
