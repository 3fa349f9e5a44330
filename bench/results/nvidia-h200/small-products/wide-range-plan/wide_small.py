"""Wide-range small default calls on the GPU against the NumPy engine's plan of the same
operands on this host (the decision only) and cupy.matmul."""
import time, json, os
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
from ozfft.linalg import matmul_plan
rng = np.random.default_rng(3)
def med(f, n):
    f(); cp.cuda.Device().synchronize(); ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))
res = []
for phi in (0.5, 2, 4, 8, 16):
    for dt in (np.complex128, np.float64):
        for shape in ((64, 64), (16, 64, 64)):
            a = phi_matrix(rng, shape, phi, dt); b = phi_matrix(rng, shape, phi, dt)
            da, db = cp.asarray(a), cp.asarray(b)
            plan = matmul_plan(a, b).describe()
            r = dict(phi=phi, dtype=np.dtype(dt).name, shape=shape, plan=plan,
                     gpu_call_ms=med(lambda: ozfft.matmul(da, db), 15),
                     gpu_plan_ms=med(lambda: matmul_plan(da, db), 15),
                     host_plan_ms=med(lambda: matmul_plan(a, b), 15),
                     cupy_ms=med(lambda: cp.matmul(da, db), 15))
            res.append(r)
            print(f"phi {phi:4} {r['dtype']:10s} {str(shape):13s} {plan:24s} gpu call {r['gpu_call_ms']:7.2f} gpu plan {r['gpu_plan_ms']:7.2f} host plan {r['host_plan_ms']:7.2f} cupy {r['cupy_ms']:6.3f} ms")
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "wide_small.json"), "w"), indent=1)
