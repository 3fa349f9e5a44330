"""The probe's test inside its rows launch (oz_probe_sides_*) against the three launches
(rows, pairs, deficits) on stacks past one wave, and against the items kernel below one
wave: default complex128 / float64 calls on stacks of 64^3 items, alternating rounds, same
process; bits compared; cupy.matmul beside."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(8)
SM = E.CudaEngine._sm_count
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
    E.CudaEngine._sm_count = property(lambda _: 0) if tag == "sides_forced" else SM
    _forget_prepared()
res = {}
CASES = [(np.complex128, 1000, ("sides", "three")), (np.float64, 1000, ("sides", "three")),
         (np.complex128, 2000, ("sides", "three")), (np.complex128, 528, ("sides", "three")),
         (np.complex128, 264, ("items", "sides_forced")), (np.float64, 264, ("items", "sides_forced")),
         (np.complex128, 1, ("items", "sides_forced")), (np.float64, 1, ("items", "sides_forced"))]
for dt, batch, tags in CASES:
    shape = (batch, 64, 64) if batch > 1 else (64, 64)
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dt)); b = cp.asarray(phi_matrix(rng, shape, 0.5, dt))
    key = f"{np.dtype(dt).name} {batch}x64^3"; r = res.setdefault(key, {})
    bits = {}
    for rnd in range(4):
        for tag in (tags if rnd % 2 == 0 else tags[::-1]):
            variant(tag)
            bits[tag] = cp.asnumpy(ozfft.matmul(a, b))
            r.setdefault(tag, []).append(sync_median(lambda: ozfft.matmul(a, b), 100))
            r.setdefault(tag + " stream", []).append(stream_per_call(lambda: ozfft.matmul(a, b), 100))
    variant("sides")
    same = all(np.array_equal(bits[tags[0]].view(np.uint64), v.view(np.uint64)) for v in bits.values())
    r["bits_equal"] = same
    r["cupy"] = sync_median(lambda: cp.matmul(a, b), 100)
    r["m16"] = sync_median(lambda: ozfft.matmul(a, b, moduli=16), 100)
    line = f"{key:22s} " + " ".join(f"{t} {np.median(r[t]):7.1f} (str {np.median(r[t + ' stream']):6.1f})" for t in tags)
    print(line + f" m16 {r['m16']:6.1f} cupy {r['cupy']:6.1f} bits {same}", flush=True)
json.dump(res, open(os.path.join(OUT, "ab_sides.json"), "w"), indent=1)
