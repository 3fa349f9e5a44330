# ruff: noqa
"""Host path of small products: event-timed sync calls against cupy, cProfile of the
explicit and default stacked calls (1000 x 64^3 complex128), and of one 64x64 product."""

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
cases = {
    "z stack explicit 14": lambda: ozfft.matmul(a, b, moduli=14),
    "z stack default": lambda: ozfft.matmul(a, b),
    "z stack cupy": lambda: cp.matmul(a, b),
    "d stack explicit 14": lambda: ozfft.matmul(ar, br, moduli=14),
    "d stack cupy": lambda: cp.matmul(ar, br),
    "z 64^2 explicit 14": lambda: ozfft.matmul(a1, b1, moduli=14),
    "z 64^2 default": lambda: ozfft.matmul(a1, b1),
    "z 64^2 cupy": lambda: cp.matmul(a1, b1),
}
res = {"event_ms": {}, "host_us": {}}
for _ in range(2):
    for name, f in cases.items():
        res["event_ms"].setdefault(name, []).append(median_ms(cp, f, 100, warm=5))
        t = []
        for _ in range(100):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
        cp.cuda.Device().synchronize()
        res["host_us"].setdefault(name, []).append(float(np.median(t)) * 1e6)
for name in cases:
    print(
        f"{name:24s} event {min(res['event_ms'][name]) * 1e3:7.1f} us   host {min(res['host_us'][name]):7.1f} us"
    )
for name, f, n in (
    ("z stack explicit 14", cases["z stack explicit 14"], 400),
    ("z 64^2 explicit 14", cases["z 64^2 explicit 14"], 400),
    ("z stack default", cases["z stack default"], 200),
):
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(n):
        f()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(45)
    text = s.getvalue()
    open(os.path.join(OUT, f"cprofile {name}.txt".replace(" ", "_")), "w").write(text)
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(60)
    open(os.path.join(OUT, f"cprofile cum {name}.txt".replace(" ", "_")), "w").write(s.getvalue())
json.dump(res, open(os.path.join(OUT, "host_path.json"), "w"), indent=1)
