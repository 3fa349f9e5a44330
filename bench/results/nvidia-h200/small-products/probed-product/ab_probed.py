"""A/B: the default call's probe and product in one kernel (oz_probed_slices_*)
against the separate launches, same process, alternating rounds; cupy.matmul beside."""
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
def stream(f, n):
    f(); cp.cuda.Device().synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    cp.cuda.Device().synchronize(); return 1e6 * (time.perf_counter() - t) / n
res = {}
for dt, batch in [(d, n) for d in (np.complex128, np.float64) for n in (1, 64, 264, 396, 1000)]:
    a = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt))
    b = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, dt))
    r = res.setdefault(f"{np.dtype(dt).name} {batch}", {"fused": [], "separate": [], "fused_stream": [], "separate_stream": []})
    bits = {}
    for rnd in range(4):
        for tag, v in (("fused", True), ("separate", False)) if rnd % 2 == 0 else (("separate", False), ("fused", True)):
            E._PROBED_PRODUCT = v; _forget_prepared()
            f = lambda: ozfft.matmul(a, b)
            bits[tag] = cp.asnumpy(f()).view(np.uint64)
            r[tag].append(sync_median(f, 100)); r[tag + "_stream"].append(stream(f, 100))
    E._PROBED_PRODUCT = True; _forget_prepared()
    r["cupy"] = sync_median(lambda: cp.matmul(a, b), 100)
    r["m14"] = sync_median(lambda: ozfft.matmul(a, b, moduli=14), 100)
    r["bits_equal"] = bool(np.array_equal(bits["fused"], bits["separate"]))
    print(f"{np.dtype(dt).name} {batch:5d}x64^3 fused {np.median(r['fused']):7.1f} separate {np.median(r['separate']):7.1f} | stream {np.median(r['fused_stream']):7.1f} / {np.median(r['separate_stream']):7.1f} | m14 {r['m14']:7.1f} cupy {r['cupy']:6.1f} | bits {r['bits_equal']}")
json.dump(res, open(os.path.join(OUT, "ab_probed.json"), "w"), indent=1)
