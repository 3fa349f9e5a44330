"""A/B in one process, alternating rounds: ozfft.matmul on the NumPy engine with the old
row_stats (git show 17f00cf:ozfft/engines/numpy/scaling.py > /tmp/scaling_old.py) and the
new one, median of 7 rounds each, and numpy.matmul on the same operands (ratio: numpy's
time over ozfft's). Writes row_stats_ab.json next to it."""
import json, os
import time, numpy as np, ozfft
from ozfft.engines.numpy import scaling as new
from ozfft.reference import phi_matrix
src = open("/tmp/scaling_old.py").read().replace("from ...", "from ozfft.").replace("from .exact", "from ozfft.engines.numpy.exact")
old = {}; exec(compile(src, "old", "exec"), old)
new_rs = new.row_stats
rng = np.random.default_rng(5)
cases = [("d 512^3", (512,512), (512,512), np.float64, 0.5), ("z 100x64^3", (100,64,64), (100,64,64), np.complex128, 0.5),
         ("d 16x64^3 phi 8", (16,64,64), (16,64,64), np.float64, 8.0), ("d 2048x256 @ 256x2048", (2048,256), (256,2048), np.float64, 0.5)]
res = {}
for name, ash, bsh, dt, phi in cases:
    a, b = phi_matrix(rng, ash, phi, dt), phi_matrix(rng, bsh, phi, dt)
    r = {"old": [], "new": []}
    for _ in range(7):
        for tag, f in (("old", old["row_stats"]), ("new", new_rs)):
            new.row_stats = f
            t = time.perf_counter(); ozfft.matmul(a, b); r[tag].append((time.perf_counter() - t) * 1e3)
    new.row_stats = new_rs
    nat = []
    for _ in range(7):
        t = time.perf_counter(); np.matmul(a, b); nat.append((time.perf_counter() - t) * 1e3)
    mo, mn, mp = np.median(r["old"]), np.median(r["new"]), np.median(nat)
    res[name] = {"old_ms": float(mo), "new_ms": float(mn), "numpy_ms": float(mp), "rounds": r}
    print(f"{name:24s} old {mo:8.1f} new {mn:8.1f} ms ({(mn/mo-1)*100:+.1f} %)  numpy {mp:6.2f} ms  ratio new {mp/mn:.4f}")
json.dump(res, open(os.path.join(os.path.dirname(__file__), "row_stats_ab.json"), "w"), indent=1)
