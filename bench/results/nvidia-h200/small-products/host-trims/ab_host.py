"""A/B of the prepared default call's host path: this tree's ozfft (PYTHONPATH) timed on
synchronized and streamed calls, bits hashed; run once per tree, alternating processes."""
import hashlib, json, os, sys, time
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
tag = sys.argv[1]
rng = np.random.default_rng(11)
def sync_median(f, n):
    for _ in range(5): f()
    cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
def stream(f, n):
    f(); cp.cuda.Device().synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    cp.cuda.Device().synchronize(); return 1e6 * (time.perf_counter() - t) / n
res = {}
for dt, shape in ((np.complex128, (64, 64)), (np.float64, (64, 64)), (np.complex128, (1000, 64, 64)), (np.complex128, (64, 64, 64)),
                  (np.float64, (1000, 64, 64)), (np.complex128, (16, 32, 48)), (np.float32, (64, 64))):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dt)); b = cp.asarray(phi_matrix(rng, shape[:-2] + shape[-1:] + shape[-2:-1], 0.5, dt))
    f = lambda: ozfft.matmul(a, b)
    n = 100 if shape[0] == 1000 else 400
    key = f"{np.dtype(dt).name} {shape}"
    out = f()
    res[key] = dict(sync=sync_median(f, n), stream=stream(f, n), cupy=sync_median(lambda: cp.matmul(a, b), n),
                    bits=hashlib.sha1(cp.asnumpy(out).tobytes()).hexdigest()[:12], shape=list(out.shape))
    print(f"{tag:6s} {key:26s} sync {res[key]['sync']:7.1f} stream {res[key]['stream']:7.1f} cupy {res[key]['cupy']:6.1f} us bits {res[key]['bits']} {tuple(out.shape)}")
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), f"ab_host_{tag}_{os.getpid()}.json"), "w"), indent=1)
