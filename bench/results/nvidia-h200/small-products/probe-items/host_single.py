"""Where a synchronized single 64^3 default call's host time goes: per-call times (default,
moduli=16, cupy.matmul), then cProfile of 400 default calls (tottime and cumtime)."""
import cProfile, io, os, pstats, time
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
OUT = os.environ.get("OUT", ".")
rng = np.random.default_rng(5)
def per_call(f, n=400):
    for _ in range(30): f()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e6 * float(np.median(ts))
for tag, dt in (("z", np.complex128), ("d", np.float64)):
    a = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt))
    d = per_call(lambda: ozfft.matmul(a, b)); e = per_call(lambda: ozfft.matmul(a, b, moduli=16))
    c = per_call(lambda: cp.matmul(a, b))
    print(f"{tag}: default {d:.1f} us, moduli=16 {e:.1f} us, cupy {c:.1f} us")
    for kw, name in (({}, "default"), ({"moduli": 16}, "m16")):
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(400):
            ozfft.matmul(a, b, **kw); cp.cuda.Device().synchronize()
        pr.disable()
        s = io.StringIO(); st = pstats.Stats(pr, stream=s); st.sort_stats("tottime").print_stats(28)
        st.sort_stats("cumulative").print_stats(30)
        open(os.path.join(OUT, f"prof_{tag}_{name}.txt"), "w").write(s.getvalue())
        if tag == "z": print(s.getvalue()[:6000] if name == "default" else "")
