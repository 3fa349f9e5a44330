"""A/B in one process: the split search over every moduli count at once (stacked) against
count by count (_STACKED_SPLIT_BYTES = 0), wide-range default calls on the GPU; bits compared."""
import time, json, os
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
from ozfft.scheme import gemm as scheme
from ozfft.linalg import matmul_plan
rng = np.random.default_rng(3)
STACKED = scheme._STACKED_SPLIT_BYTES
def med(f, n):
    f(); cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))
res = []
cases = [(phi, dt, shape) for phi in (4, 8, 16) for dt in (np.complex128, np.float64) for shape in ((64, 64), (16, 64, 64))]
cases += [(8, np.complex128, (1000, 64, 64))]
for phi, dt, shape in cases:
    a = cp.asarray(phi_matrix(rng, shape, phi, dt)); b = cp.asarray(phi_matrix(rng, shape, phi, dt))
    plan = matmul_plan(a, b).describe()
    r = dict(phi=phi, dtype=np.dtype(dt).name, shape=shape, plan=plan, stacked=[], by_count=[])
    bits = {}
    n = 5 if shape[0] == 1000 else 15
    for rnd in range(4):
        for tag, limit in (("stacked", STACKED), ("by_count", 0)) if rnd % 2 == 0 else (("by_count", 0), ("stacked", STACKED)):
            scheme._STACKED_SPLIT_BYTES = limit
            bits[tag] = cp.asnumpy(ozfft.matmul(a, b))
            r[tag].append(med(lambda: ozfft.matmul(a, b), n))
    scheme._STACKED_SPLIT_BYTES = STACKED
    r["equal"] = bool(np.array_equal(bits["stacked"], bits["by_count"]))
    res.append(r)
    print(f"phi {phi:3} {r['dtype']:10s} {str(shape):15s} {plan:24s} stacked {np.median(r['stacked']):7.2f} by count {np.median(r['by_count']):7.2f} ms  bits {r['equal']}")
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "ab_split_search.json"), "w"), indent=1)
