# ruff: noqa
"""Host cost of the pieces of a prepared explicit call (each timed alone, median of 5
batches, in us), 1000 x 64^3 complex128 and one 64^2 complex product."""

import time
import numpy as np, cupy as cp
import ozfft
from ozfft import linalg
from ozfft.engines.select import cuda_engine
from ozfft.engines.cuda import engine as E
from ozfft.profiling import phase
from ozfft.reference import phi_matrix

gpu = cuda_engine()
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
a1, b1 = a[0].copy(), b[0].copy()
ozfft.matmul(a1, b1, moduli=14)
ozfft.matmul(a, b, moduli=14)
plan = (
    next(p for p in gpu._small_plans.values() if p is not None and p.batch == 1)
    if gpu._small_plans
    else None
)
prepared = [p for p in linalg._PREPARED.values() if p is not None]
print("plans", len(gpu._small_plans), "prepared", len(linalg._PREPARED), len(prepared))


def T(name, f, n=2000):
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        ts.append((time.perf_counter() - t0) / n * 1e6)
    cp.cuda.Device().synchronize()
    print(f"{np.median(ts):8.2f} us  {name}")


counts = cp.zeros(4, cp.uint64)
T("matmul 64^2 explicit (sync)", lambda: ozfft.matmul(a1, b1, moduli=14), n=500)
T("_prepared_product lookup", lambda: linalg._prepared_product(a1, b1, "fp64", 14, "fast", None))
T("config.product_switches", ozfft.config.product_switches)
T("runtime.getDevice", cp.cuda.runtime.getDevice)
T("key attrs a.shape,strides,dtype", lambda: (a1.shape, a1.strides, a1.dtype))
T("b.data.ptr", lambda: b1.data.ptr)
T("cp.empty out 64^2", lambda: cp.empty((1, 64, 64), cp.complex128))
T("cp.zeros(4)", lambda: cp.zeros(4, cp.uint64))
T("phase() no profiler", lambda: phase("fused", gpu._clock).__enter__())
launch = plan.launch if plan else None
if plan:
    args = (
        a1.data.ptr,
        b1.data.ptr,
        64,
        64,
        64,
        counts.data.ptr,
        counts.data.ptr,
        counts.data.ptr,
        110,
        counts.data.ptr,
        1,
        6,
    )
    T(
        "launch ints",
        lambda: launch((*plan.grid, 1), (plan.threads,), args, shared_mem=plan.smem),
        n=300,
    )
T("_counts_check read (idle)", lambda: E._counts_check(cp, counts, "a", "b")(), n=500)
T("stream.synchronize (idle)", lambda: cp.cuda.get_current_stream().synchronize(), n=500)
ev = cp.cuda.Event(disable_timing=True)
T("event record+sync (idle)", lambda: (ev.record(), ev.synchronize()), n=500)
T("reshape", lambda: a1.reshape(1, 64, 64))
T(
    "cupy.matmul 64^2 (sync)",
    lambda: (cp.matmul(a1, b1), cp.cuda.get_current_stream().synchronize()),
    n=500,
)
