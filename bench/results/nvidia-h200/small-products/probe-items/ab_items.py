"""A/B: the whole probe in one launch (oz_probe_items_*) against three launches, default
calls (prepared), same process, alternating rounds; explicit moduli=16 and cupy.matmul as
references. Synchronized calls (median of N) and streams of calls (N queued, one sync)."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(7)
ONE = E._PROBE_ITEMS_MAX
def sync_median(f, n):
    for _ in range(5): f()
    cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
def stream_per_call(f, n):
    f(); cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(n): f()
    cp.cuda.Device().synchronize()
    return 1e6 * (time.perf_counter() - t) / n
cases = []
for dt in (np.complex128, np.float64):
    for shape in ((64, 64, 64), (1000, 64, 64), (100, 32, 32)):
        a = cp.asarray(phi_matrix(rng, shape, 0.5, dt)); b = cp.asarray(phi_matrix(rng, shape, 0.5, dt))
        cases.append((np.dtype(dt).name, shape, a, b))
res = {}
for name, shape, a, b in cases:
    n = 300 if shape[0] == 64 else 60
    key = f"{name} {'x'.join(map(str, shape))}"
    r = res.setdefault(key, {"one": [], "three": [], "one_stream": [], "three_stream": []})
    bits = {}
    for rnd in range(4):
        for tag, v in (("one", ONE), ("three", 0)) if rnd % 2 == 0 else (("three", 0), ("one", ONE)):
            E._PROBE_ITEMS_MAX = v; _forget_prepared()
            f = lambda: ozfft.matmul(a, b)
            bits[tag] = cp.asnumpy(f())
            r[tag].append(sync_median(f, n)); r[tag + "_stream"].append(stream_per_call(f, n))
    E._PROBE_ITEMS_MAX = ONE; _forget_prepared()
    r["m16"] = sync_median(lambda: ozfft.matmul(a, b, moduli=16), n)
    r["cupy"] = sync_median(lambda: cp.matmul(a, b), n)
    r["bits_equal"] = bool(np.array_equal(bits["one"].view(np.uint64), bits["three"].view(np.uint64)))
    print(f"{key:26s} one {np.median(r['one']):7.1f} three {np.median(r['three']):7.1f} | stream one {np.median(r['one_stream']):7.1f} three {np.median(r['three_stream']):7.1f} | m16 {r['m16']:7.1f} cupy {r['cupy']:6.1f} | bits {r['bits_equal']}")
json.dump(res, open(os.path.join(OUT, "ab_items.json"), "w"), indent=1)
