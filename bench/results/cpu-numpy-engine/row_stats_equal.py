import importlib.util, time, numpy as np
spec = importlib.util.spec_from_file_location("old", "/tmp/scaling_old.py")
from ozfft.engines.numpy import scaling as new
import sys
src = open("/tmp/scaling_old.py").read().replace("from ...", "from ozfft.").replace("from .exact", "from ozfft.engines.numpy.exact")
old = {}; exec(compile(src, "old", "exec"), old)
from ozfft.reference import phi_matrix
rng = np.random.default_rng(1)
cases = []
for shape in [(3, 5), (1, 1), (7, 0), (0, 4), (2, 3, 17), (16, 64, 64), (300, 300), (5, 20000), (1000, 3), (4, 4096)]:
    for dt in (np.float64, np.complex128):
        for phi in (0.5, 8.0, 40.0):
            x = phi_matrix(rng, shape, phi, dt) if 0 not in shape else np.zeros(shape, dt)
            if x.size:
                f = x.reshape(-1)
                f[::7] = 0; f[3::11] *= 2.0**-1070; f[5::13] = np.sign(f[5::13]) * 2.0**1000 + f[5::13] * 0
                if x.ndim >= 2 and x.shape[-2] > 1: x[..., 1, :] = 0
            cases.append(x)
            cases.append(np.swapaxes(x, -1, -2) if x.ndim >= 2 else x)
bad = 0
for x in cases:
    for need in (False, True):
        a = old["row_stats"](x, "a", need_sumsq=need); b = new.row_stats(x, "a", need_sumsq=need)
        ok = np.array_equal(a[0], b[0]) and np.shape(a[0]) == np.shape(b[0]) and (a[1] is None) == (b[1] is None) and (a[1] is None or (np.array_equal(a[1], b[1]) and a[1].dtype == b[1].dtype))
        if not ok: bad += 1; print("DIFF", x.shape, x.dtype, need)
print("cases", len(cases)*2, "bad", bad)
for shape, dt, phi in (((16,64,64), np.float64, 8.0), ((1000,64,64), np.complex128, 0.5), ((512,512), np.float64, 0.5), ((64,64), np.complex128, 8.0)):
    x = phi_matrix(rng, shape, phi, dt)
    for name, f in (("old", old["row_stats"]), ("new", new.row_stats)):
        f(x, "a", need_sumsq=True); t = time.perf_counter()
        for _ in range(20): f(x, "a", need_sumsq=True)
        print(shape, dt.__name__, name, f"{(time.perf_counter()-t)/20*1e3:.3f} ms")
