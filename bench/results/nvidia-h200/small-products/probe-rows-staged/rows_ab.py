"""One process of the rows-staging A/B: default calls on stacks (synchronized and streamed
medians, cupy.matmul beside) and the probe kernels' mean CUPTI durations; prints one JSON
line tagged with TAG. The bits of each call are saved for comparison across processes."""
import json, os, sys, time
import numpy as np, cupy as cp, torch
import ozfft
from ozfft.reference import phi_matrix
from torch.profiler import profile, ProfilerActivity
TAG = os.environ["TAG"]; OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(3)
def sync_median(f, n):
    for _ in range(5): f()
    cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
def stream_per_call(f, n):
    for _ in range(5): f()
    cp.cuda.Device().synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    cp.cuda.Device().synchronize(); return 1e6 * (time.perf_counter() - t) / n
res = {"tag": TAG}
for dt, shape in ((np.complex128, (1000, 64, 64)), (np.float64, (1000, 64, 64)), (np.complex128, (200, 64, 64)),
                  (np.complex128, (64, 64)), (np.complex128, (700, 48, 40))):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dt)); b = cp.asarray(phi_matrix(rng, shape[:-2] + shape[-1:] + shape[-2:-1], 0.5, dt))
    key = f"{np.dtype(dt).name} {shape}"
    got = cp.asnumpy(ozfft.matmul(a, b))
    np.save(os.path.join(OUT, f"bits_{TAG}_{len(res)}.npy"), got)
    r = {"sync": sync_median(lambda: ozfft.matmul(a, b), 100), "stream": stream_per_call(lambda: ozfft.matmul(a, b), 100),
         "cupy": sync_median(lambda: cp.matmul(a, b), 100)}
    cp.cuda.Device().synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(10): ozfft.matmul(a, b)
        cp.cuda.Device().synchronize()
    ks = {}
    for e in prof.key_averages():
        if e.key.startswith("oz_probe"): ks[e.key] = e.device_time_total / max(1, e.count) if hasattr(e, "device_time_total") else e.cuda_time_total / max(1, e.count)
    r["kernels"] = ks
    res[key] = r
print(json.dumps(res), flush=True)
