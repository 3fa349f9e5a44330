"""One 64 x 64 product (2-D operands), default call: the probe in one launch against three,
alternating rounds in one process; moduli=16 and cupy.matmul beside."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.engines.select import cuda_engine
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(9)
eng = cuda_engine(); ONE = 10**6
def sync_median(f, n=300):
    for _ in range(20): f()
    cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
res = {}
for dt in (np.complex128, np.float64):
    a = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt))
    r = res.setdefault(np.dtype(dt).name, {"one": [], "three": []})
    for rnd in range(6):
        for tag, v in (("one", ONE), ("three", 0)) if rnd % 2 == 0 else (("three", 0), ("one", ONE)):
            eng._probe_items_per_sm = (lambda *args, v=v: v); _forget_prepared()
            r[tag].append(sync_median(lambda: ozfft.matmul(a, b)))
    del eng._probe_items_per_sm; _forget_prepared()
    r["m16"] = sync_median(lambda: ozfft.matmul(a, b, moduli=16)); r["cupy"] = sync_median(lambda: cp.matmul(a, b))
    print(f"{np.dtype(dt).name}: one {np.median(r['one']):.1f} three {np.median(r['three']):.1f} m16 {r['m16']:.1f} cupy {r['cupy']:.1f}")
json.dump(res, open(os.path.join(OUT, "ab_single.json"), "w"), indent=1)
