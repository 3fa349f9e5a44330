"""The probe's pairs kernels a pair a thread (256 threads; four or three blocks an SM)
against 2 x 2 pairs a thread (64 threads): default calls that take the three launches,
alternating rounds in one process (synchronized / streamed medians), the pairs kernel's
CUPTI mean, bits compared."""
import json, os, time
import numpy as np, cupy as cp, torch
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
from torch.profiler import profile, ProfilerActivity
OUT = os.environ.get("OUT", "."); rng = np.random.default_rng(12)
def sync_median(f, n):
    for _ in range(3): f()
    cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
def stream_per_call(f, n):
    for _ in range(3): f()
    cp.cuda.Device().synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    cp.cuda.Device().synchronize(); return 1e6 * (time.perf_counter() - t) / n
def kernel_means(f, n=5):
    cp.cuda.Device().synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n): f()
        cp.cuda.Device().synchronize()
    return {e.key: e.device_time_total / max(1, e.count) for e in prof.key_averages() if e.key.startswith("oz_probe_pairs")}
VARIANTS = {"2x2": False, "spread4": "spread_", "spread3": "spread3_"}
CASES = [((1000, 64, 64, 64), np.complex128, 60), ((1000, 64, 64, 64), np.float64, 60), ((528, 64, 64, 64), np.complex128, 60),
         ((100, 130, 64, 130), np.complex128, 60), ((1, 4096, 256, 4096), np.float64, 10), ((1, 2048, 256, 2048), np.complex128, 10)]
res = {}
for (batch, m, k, n), dt, reps in CASES:
    sa = (batch, m, k) if batch > 1 else (m, k); sb = (batch, k, n) if batch > 1 else (k, n)
    a = cp.asarray(phi_matrix(rng, sa, 0.5, dt)); b = cp.asarray(phi_matrix(rng, sb, 0.5, dt))
    key = f"{np.dtype(dt).name} {(batch, m, k, n)}"; r = res.setdefault(key, {}); bits = {}
    for rnd in range(4):
        for tag in (list(VARIANTS) if rnd % 2 == 0 else list(VARIANTS)[::-1]):
            E._PROBE_PAIRS_SPREAD = VARIANTS[tag]; _forget_prepared()
            bits[tag] = cp.asnumpy(ozfft.matmul(a, b))
            r.setdefault(tag, []).append(sync_median(lambda: ozfft.matmul(a, b), reps))
            r.setdefault(tag + " stream", []).append(stream_per_call(lambda: ozfft.matmul(a, b), reps))
            if rnd == 0:
                r[tag + " kernels"] = kernel_means(lambda: ozfft.matmul(a, b))
    E._PROBE_PAIRS_SPREAD = True; _forget_prepared()
    r["bits_equal"] = all(np.array_equal(bits["2x2"].view(np.uint8), v.view(np.uint8)) for v in bits.values())
    r["cupy"] = sync_median(lambda: cp.matmul(a, b), reps)
    print(f"{key:34s} " + " ".join(f"{t} {np.median(r[t]):8.1f}/{np.median(r[t + ' stream']):8.1f} [{' '.join(f'{v:.1f}' for v in r[t + ' kernels'].values())}]" for t in VARIANTS)
          + f" cupy {r['cupy']:7.1f} bits {r['bits_equal']}", flush=True)
json.dump(res, open(os.path.join(OUT, "ab_pairs.json"), "w"), indent=1)
