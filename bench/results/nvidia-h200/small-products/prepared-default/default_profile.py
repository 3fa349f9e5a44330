"""Default (guaranteed) small calls: event time and host time against the explicit count
and cupy; cProfile (own and cumulative) of the default single 64^2 complex call and of the
default stacked complex call."""
import cProfile, io, json, os, pstats, time
import numpy as np, cupy as cp
import ozfft
from ozfft.bench.timing import median_ms
from ozfft.reference import phi_matrix

OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
ar = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.float64))
br = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.float64))
a1, b1 = a[0].copy(), b[0].copy()
r1, s1 = ar[0].copy(), br[0].copy()
cases = {
    "z stack default": lambda: ozfft.matmul(a, b),
    "z stack explicit 16": lambda: ozfft.matmul(a, b, moduli=16),
    "z stack cupy": lambda: cp.matmul(a, b),
    "d stack default": lambda: ozfft.matmul(ar, br),
    "d stack explicit 16": lambda: ozfft.matmul(ar, br, moduli=16),
    "d stack cupy": lambda: cp.matmul(ar, br),
    "z 64^2 default": lambda: ozfft.matmul(a1, b1),
    "z 64^2 explicit 16": lambda: ozfft.matmul(a1, b1, moduli=16),
    "z 64^2 cupy": lambda: cp.matmul(a1, b1),
    "d 64^2 default": lambda: ozfft.matmul(r1, s1),
    "d 64^2 explicit 16": lambda: ozfft.matmul(r1, s1, moduli=16),
    "d 64^2 cupy": lambda: cp.matmul(r1, s1),
}
res = {"event_ms": {}, "host_us": {}}
for _ in range(2):
    for name, f in cases.items():
        res["event_ms"].setdefault(name, []).append(median_ms(cp, f, 100, warm=5))
        t = []
        for _ in range(100):
            t0 = time.perf_counter(); f(); t.append(time.perf_counter() - t0)
        cp.cuda.Device().synchronize()
        res["host_us"].setdefault(name, []).append(float(np.median(t)) * 1e6)
for name in cases:
    print(f"{name:22s} event {min(res['event_ms'][name])*1e3:7.1f} us   host {min(res['host_us'][name]):7.1f} us")
for name, n in (("z 64^2 default", 400), ("z stack default", 200)):
    f = cases[name]
    pr = cProfile.Profile(); pr.enable()
    for _ in range(n): f()
    pr.disable()
    for order, tag in (("tottime", "own"), ("cumulative", "cum")):
        s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats(order).print_stats(70)
        open(os.path.join(OUT, f"cprofile_{tag}_{name}.txt".replace(" ", "_").replace("^", "")), "w").write(s.getvalue())
json.dump(res, open(os.path.join(OUT, "default_profile.json"), "w"), indent=1)
