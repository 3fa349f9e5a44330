"""Where one launch stops paying: default complex128 / float64 calls on stacks of 64^3 items
(one wave of the items kernel: 2 x SMs), one launch against three, alternating rounds."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.engines.select import cuda_engine
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(8)
BATCHES = tuple(int(x) for x in os.environ.get("BATCHES", "66,132,264,396,528").split(","))
eng = cuda_engine()
def sync_median(f, n):
    for _ in range(5): f()
    cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
res = {}
for dt in (np.complex128, np.float64):
    for batch in BATCHES:
        a = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt))
        key = f"{np.dtype(dt).name} {batch}x64^3"; r = res.setdefault(key, {"one": [], "three": []})
        for rnd in range(4):
            for tag, v in (("one", 10**9), ("three", 0)) if rnd % 2 == 0 else (("three", 0), ("one", 10**9)):
                eng._probe_items_per_sm = (lambda *args, v=v: v); _forget_prepared()
                r[tag].append(sync_median(lambda: ozfft.matmul(a, b), 100))
        del eng._probe_items_per_sm; _forget_prepared()
        r["cupy"] = sync_median(lambda: cp.matmul(a, b), 100)
        print(f"{key:22s} one {np.median(r['one']):7.1f} three {np.median(r['three']):7.1f} cupy {r['cupy']:6.1f}")
json.dump(res, open(os.path.join(OUT, "ab_items_batch" + os.environ.get("TAG", "") + ".json"), "w"), indent=1)
