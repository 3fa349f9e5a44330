# ruff: noqa: B023, E402, E501  (a measurement script: closures used within their loop pass)
"""(a) GPU time a call of the complex slices kernel, B read in place against Bt's rows
(copy included / excluded), 1000 x 64^3 complex128: 20 queued calls (counted=True, no
count read), alternating rounds. (b) Where a synchronized explicit stacked call's host
time goes: cProfile of 200 calls, and perf_counter marks of the call's phases."""

import json
import os
import time

import cupy as cp
import numpy as np

import ozfft
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.residue_system import int8_system
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import gaussian_system_for

OUT = os.environ.get("OUT", ".")
gpu = cuda_engine()
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
view = b.swapaxes(-1, -2)
rows = cp.ascontiguousarray(view)
res = {}


def queued(f, n=20):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    f()
    cp.cuda.Device().synchronize()
    s.record()
    for _ in range(n):
        f()
    e.record()
    e.synchronize()
    return cp.cuda.get_elapsed_time(s, e) / n


ar = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.float64))
br = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.float64))
vr = br.swapaxes(-1, -2)
rr = cp.ascontiguousarray(vr)
for count in (14, 15):
    g = int8_system(count)
    L = g.budget_bits
    fs = {
        "real_in_place": lambda: gpu.fused_fast_product(
            ar, vr, L, g, np.float64, rounding="nearest", counted=True
        ),
        "real_rows": lambda: gpu.fused_fast_product(
            ar, rr, L, g, np.float64, rounding="nearest", counted=True
        ),
        "real_copy_then_rows": lambda: gpu.fused_fast_product(
            ar, cp.ascontiguousarray(vr), L, g, np.float64, rounding="nearest", counted=True
        ),
        "real_cupy": lambda: cp.matmul(ar, br),
    }
    x1, x2 = fs["real_in_place"](), fs["real_rows"]()
    print("real bits equal", bool(cp.array_equal(x1, x2)))
    r = {k: [] for k in fs}
    for _ in range(5):
        for k, f in fs.items():
            r[k].append(queued(f))
    med = {k: float(np.median(v)) for k, v in r.items()}
    res[f"real_queued_{count}"] = {"rounds": r, "median_ms": med}
    print(
        f"queued real, moduli {count}: "
        + ", ".join(f"{k} {v * 1000:.1f} us" for k, v in med.items())
    )
for count in (14, 15):
    g = gaussian_system_for(int8_system(count))
    L = int8_system(count).budget_bits
    fs = {
        "in_place": lambda: gpu.fused_fast_product(
            a, view, L, g, np.complex128, rounding="nearest", counted=True
        ),
        "rows": lambda: gpu.fused_fast_product(
            a, rows, L, g, np.complex128, rounding="nearest", counted=True
        ),
        "copy_then_rows": lambda: gpu.fused_fast_product(
            a, cp.ascontiguousarray(view), L, g, np.complex128, rounding="nearest", counted=True
        ),
        "copy": lambda: cp.ascontiguousarray(view),
        "cupy": lambda: cp.matmul(a, b),
    }
    r = {k: [] for k in fs}
    for _ in range(5):
        for k, f in fs.items():
            r[k].append(queued(f))
    med = {k: float(np.median(v)) for k, v in r.items()}
    res[f"queued_{count}"] = {"rounds": r, "median_ms": med}
    print(f"queued, moduli {count}: " + ", ".join(f"{k} {v * 1000:.1f} us" for k, v in med.items()))
# (b) host path of the synchronized explicit call
for count in (14, 15):
    ozfft.matmul(a, b, moduli=count)
    cp.cuda.Device().synchronize()
    t = []
    for _ in range(50):
        t0 = time.perf_counter()
        ozfft.matmul(a, b, moduli=count)
        t.append(time.perf_counter() - t0)
    print(f"sync call moduli {count}: host-to-return median {np.median(t) * 1e3:.3f} ms")
count = 14
# host time before the kernel launch: time from call start until the launcher is entered
from ozfft.engines.cuda import engine as E

marks = []
orig = E.CudaEngine._small_product


def timed(self, *args, **kw):
    marks.append(("enter_small", time.perf_counter()))
    out = orig(self, *args, **kw)
    marks.append(("leave_small", time.perf_counter()))
    return out


E.CudaEngine._small_product = timed
orig_cc = E._counts_check


def cc(*args):
    marks.append(("launched", time.perf_counter()))
    return orig_cc(*args)


E._counts_check = cc

spans = []
for _ in range(50):
    marks.clear()
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    ozfft.matmul(a, b, moduli=count)
    t1 = time.perf_counter()
    d = dict(marks)
    spans.append(
        (
            d["enter_small"] - t0,
            d["launched"] - d["enter_small"],
            d["leave_small"] - d["launched"],
            t1 - d["leave_small"],
            t1 - t0,
        )
    )
sp = np.median(np.array(spans), axis=0) * 1e6
print(
    f"host us: before _small_product {sp[0]:.1f}, to the launch {sp[1]:.1f}, count wait {sp[2]:.1f}, after {sp[3]:.1f}, call {sp[4]:.1f}"
)
res["host_spans_us"] = sp.tolist()
json.dump(res, open(os.path.join(OUT, "stack_host.json"), "w"), indent=1)
