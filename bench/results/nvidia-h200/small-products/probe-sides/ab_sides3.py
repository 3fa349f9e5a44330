"""The landed rule (items kernel to one wave, sides kernel to two, three launches past)
against the rule before it (three launches past one wave): default calls on stacks of 64^3
items, alternating rounds in one process; bits compared."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(11)
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
res = {}
for dt in (np.complex128, np.float64):
    for batch in (400, 528, 660, 792, 1000):
        a = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt))
        key = f"{np.dtype(dt).name} {batch}x64^3"; r = res.setdefault(key, {}); bits = {}
        tags = ("after", "before")
        for rnd in range(6):
            for tag in (tags if rnd % 2 == 0 else tags[::-1]):
                E._PROBE_SIDES_WAVES = 2 if tag == "after" else 0; _forget_prepared()
                bits[tag] = cp.asnumpy(ozfft.matmul(a, b))
                r.setdefault(tag, []).append(sync_median(lambda: ozfft.matmul(a, b), 60))
                r.setdefault(tag + " stream", []).append(stream_per_call(lambda: ozfft.matmul(a, b), 60))
        E._PROBE_SIDES_WAVES = 2; _forget_prepared()
        r["bits_equal"] = np.array_equal(bits["after"].view(np.uint64), bits["before"].view(np.uint64))
        r["cupy"] = sync_median(lambda: cp.matmul(a, b), 60)
        print(f"{key:22s} " + " ".join(f"{t} {np.median(r[t]):6.1f}/{np.median(r[t + ' stream']):6.1f}" for t in tags)
              + f" cupy {r['cupy']:6.1f} bits {r['bits_equal']}", flush=True)
json.dump(res, open(os.path.join(OUT, "ab_sides3.json"), "w"), indent=1)
