"""One synchronized default 64^3 complex call after warm-up (for ncu), and host profile."""
import cProfile, io, os, pstats, sys, time
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
rng = np.random.default_rng(5)
dt = np.complex128 if sys.argv[1] == "z" else np.float64
a = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt))
for _ in range(20):
    ozfft.matmul(a, b)
cp.cuda.Device().synchronize()
if len(sys.argv) > 2:
    OUT = os.environ.get("OUT", ".")
    t = []
    for _ in range(200):
        t0 = time.perf_counter(); ozfft.matmul(a, b); t.append(time.perf_counter() - t0)
    print("host wall per call", np.median(t) * 1e6, "us")
    pr = cProfile.Profile(); pr.enable()
    for _ in range(300): ozfft.matmul(a, b)
    pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(40)
    open(os.path.join(OUT, f"cprofile_prepared_default_{sys.argv[1]}64.txt"), "w").write(s.getvalue())
    print(s.getvalue()[:3500])
else:
    cp.cuda.runtime.profilerStart()
    ozfft.matmul(a, b)
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStop()
