"""Where the prepared default call's host time goes: thin timing wrappers around the steps
of the call (inclusive times, medians over calls, the wrappers' own cost measured on a
no-op and reported), and each call's first GPU work (the memset) and last launch relative
to the call's start. complex128 1000 x 64^3 and one 64 x 64 product."""
import time, json, os, statistics
import numpy as np, cupy as cp
import ozfft
from ozfft import linalg
from ozfft.engines.cuda import engine as E, launch as L
from ozfft.reference import phi_matrix
pc = time.perf_counter_ns
marks = []
def wrap(owner, name, label):
    f = getattr(owner, name)
    def w(*a, **k):
        t0 = pc(); r = f(*a, **k); marks.append((label, t0, pc())); return r
    setattr(owner, name, w)
wrap(linalg, "_prepared_product", "prepared lookup")
wrap(E.CudaEngine, "_queue_probe", "queue probe")
wrap(E.CudaEngine, "_run_small_product", "run product")
wrap(E.CudaEngine, "_alloc", "alloc")
wrap(E, "_fork_point", "fork point")
wrap(E, "_read_async", "read async")
wrap(L.DriverLaunch, "__call__", "launch")
rt = cp.cuda.runtime
orig_memset = rt.memsetAsync
def memset(*a):
    t0 = pc(); r = orig_memset(*a); marks.append(("memset", t0, pc())); return r
rt.memsetAsync = memset
def noop(): pass
w_noop = []
for _ in range(2000):
    t0 = pc(); noop(); t1 = pc(); w_noop.append(t1 - t0)
rng = np.random.default_rng(1)
out = {}
for tag, shape in (("z1000", (1000, 64, 64)), ("z64", (64, 64))):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, np.complex128)); b = cp.asarray(phi_matrix(rng, shape, 0.5, np.complex128))
    for _ in range(20): ozfft.matmul(a, b)
    cp.cuda.Device().synchronize()
    per = {}; calls = []
    for _ in range(300):
        marks.clear(); t0 = pc(); ozfft.matmul(a, b); t1 = pc(); cp.cuda.Device().synchronize(); t2 = pc()
        calls.append((t1 - t0, t2 - t0))
        seen = {}
        for label, s, e in marks:
            seen.setdefault(label, []).append((s - t0, e - s))
        for label, v in seen.items():
            per.setdefault(label, []).append(v)
    res = {"call_return_us": statistics.median(c[0] for c in calls) / 1e3, "call_sync_us": statistics.median(c[1] for c in calls) / 1e3}
    for label, v in per.items():
        n = len(v[0])
        for i in range(n):
            starts = [x[i][0] for x in v if len(x) > i]; durs = [x[i][1] for x in v if len(x) > i]
            res[f"{label} #{i}"] = (round(statistics.median(starts) / 1e3, 1), round(statistics.median(durs) / 1e3, 1))
    out[tag] = res
    print(tag, json.dumps(res, indent=0), flush=True)
print("wrapper no-op ns", statistics.median(w_noop))
json.dump(out, open(os.path.join(os.environ.get("OUT", "."), "host_marks.json"), "w"), indent=1)
