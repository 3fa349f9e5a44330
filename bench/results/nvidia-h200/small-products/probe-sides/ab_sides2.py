"""Where each probe launch pays: default calls on stacks of 64^3 items, the items kernel
(a block per item), the sides kernel (a block per operand of an item) and three launches,
alternating rounds in one process; bits compared."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(9)
SM = E.CudaEngine._sm_count
eng = __import__("ozfft.engines.select", fromlist=["x"]).cuda_engine()
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
def variant(tag):
    E._PROBE_SIDES = tag != "three"
    E._PROBE_ITEMS_MAX = 64
    if tag == "items":
        eng._probe_items_per_sm = lambda *args: 10**6
    elif tag == "sides":
        eng._probe_items_per_sm = lambda *args: 3 if "sides" in args[0] else 0
    else:
        eng.__dict__.pop("_probe_items_per_sm", None); E._PROBE_ITEMS_MAX = 0
    _forget_prepared()
res = {}
for dt in (np.complex128, np.float64):
    for batch in (66, 132, 264, 396, 528, 660, 792):
        a = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt))
        key = f"{np.dtype(dt).name} {batch}x64^3"; r = res.setdefault(key, {})
        tags = ("items", "sides", "three"); bits = {}
        for rnd in range(4):
            for tag in (tags if rnd % 2 == 0 else tags[::-1]):
                variant(tag)
                bits[tag] = cp.asnumpy(ozfft.matmul(a, b))
                r.setdefault(tag, []).append(sync_median(lambda: ozfft.matmul(a, b), 60))
                r.setdefault(tag + " stream", []).append(stream_per_call(lambda: ozfft.matmul(a, b), 60))
        eng.__dict__.pop("_probe_items_per_sm", None); E._PROBE_ITEMS_MAX = 64; E._PROBE_SIDES = True; _forget_prepared()
        r["bits_equal"] = all(np.array_equal(bits["items"].view(np.uint64), v.view(np.uint64)) for v in bits.values())
        r["cupy"] = sync_median(lambda: cp.matmul(a, b), 60)
        print(f"{key:22s} " + " ".join(f"{t} {np.median(r[t]):6.1f}/{np.median(r[t + ' stream']):6.1f}" for t in tags)
              + f" cupy {r['cupy']:6.1f} bits {r['bits_equal']}", flush=True)
json.dump(res, open(os.path.join(OUT, "ab_sides2.json"), "w"), indent=1)
