"""Prototype A/B: the prepared default call with the product forming its own shifts on the
caller's stream while the whole probe (rows, pairs, deficits, read) runs on the
high-priority side stream ("concurrent"), against the landed chain (rows, then the product
on the probe's shifts; "chained"), the explicit 16-moduli call and cupy.matmul. Same
process, alternating rounds, CUDA events around synchronized calls, median of 100 calls
a round, median of 5 rounds. Bits compared on every case."""
import json, os
import numpy as np, cupy as cp
import ozfft
from ozfft import linalg
from ozfft.bench.timing import median_ms
from ozfft.reference import phi_matrix
from ozfft.engines.cuda import engine as E
from ozfft.profiling import phase

OUT = os.environ.get("OUT", ".")
chained = E.CudaEngine.probed_product_executor

def concurrent(self, a, bt, *, budget_bits, lower_bound_bits, pairing_offset, terms, never, tile,
               moduli, out_dtype, rounding):
    probe = self._plan_probe(a, bt, budget_bits=budget_bits, lower_bound_bits=lower_bound_bits,
                             pairing_offset=pairing_offset, terms=terms, never=never, tile=tile,
                             size=a.shape[-1], given=False)
    if probe is None:
        return None
    product = self._plan_small_product(a, bt, moduli, out_dtype, rounding, True, budget_bits)
    if product is None:
        return None
    def run(a, b):
        side = E._fork_point(cp)
        with side(), phase("guarantee", self._clock):
            pending = self._run_probe(probe, a, b.swapaxes(-1, -2))
        bt = b.swapaxes(-1, -2) if product.prepare_bt else b
        return self._run_small_product(product, a, bt, None, False), pending
    return run

def use(variant):
    E.CudaEngine.probed_product_executor = variant
    linalg._forget_prepared()

rng = np.random.default_rng(5)
res = {}
for name, shape, dtype in (("z 1000x64^3", (1000, 64, 64), np.complex128),
                           ("d 1000x64^3", (1000, 64, 64), np.float64),
                           ("z 64^3", (64, 64), np.complex128),
                           ("d 64^3", (64, 64), np.float64),
                           ("z 100x32^3", (100, 32, 32), np.complex128)):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dtype)); b = cp.asarray(phi_matrix(rng, shape, 0.5, dtype))
    use(chained); x = ozfft.matmul(a, b)
    use(concurrent); y = ozfft.matmul(a, b)
    same = bool(cp.array_equal(x, y))
    r = {"chained": [], "concurrent": [], "explicit 16": [], "cupy": []}
    for _ in range(5):
        use(chained); r["chained"].append(median_ms(cp, lambda: ozfft.matmul(a, b), 100, warm=5))
        use(concurrent); r["concurrent"].append(median_ms(cp, lambda: ozfft.matmul(a, b), 100, warm=5))
        r["explicit 16"].append(median_ms(cp, lambda: ozfft.matmul(a, b, moduli=16), 100, warm=5))
        r["cupy"].append(median_ms(cp, lambda: cp.matmul(a, b), 100, warm=5))
    med = {k: float(np.median(v)) * 1e3 for k, v in r.items()}
    res[name] = {"rounds_ms": r, "median_us": med, "same_bits": same}
    print(f"{name:12s} bits {'=' if same else 'DIFFER'} chained {med['chained']:6.1f} concurrent {med['concurrent']:6.1f} "
          f"explicit16 {med['explicit 16']:6.1f} cupy {med['cupy']:6.1f} us  ratios {med['chained']/med['cupy']:.2f}x -> {med['concurrent']/med['cupy']:.2f}x")
use(chained)
json.dump(res, open(os.path.join(OUT, "ab_concurrent.json"), "w"), indent=1)
