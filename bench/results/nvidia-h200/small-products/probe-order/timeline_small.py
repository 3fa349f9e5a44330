"""Timeline of one synchronized 64^3 call (default and moduli=16; complex and real): torch.profiler
(CUPTI) records kernels, copies, memsets and runtime/driver calls; prints them relative to the
call's start (host perf_counter mark as a runtime-less anchor: the first API call)."""
import json, os, time
import numpy as np, cupy as cp, torch
import ozfft
from ozfft.reference import phi_matrix
from torch.profiler import profile, ProfilerActivity
out = os.environ.get("OUT", ".")
rng = np.random.default_rng(5)
for tag, dt in (("z", np.complex128), ("d", np.float64)):
    a = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (64, 64), 0.5, dt))
    for kw in ({}, {"moduli": 16}):
        for _ in range(30): ozfft.matmul(a, b, **kw)
        cp.cuda.Device().synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                with torch.profiler.record_function("CALL"):
                    ozfft.matmul(a, b, **kw); cp.cuda.Device().synchronize()
        path = os.path.join(out, f"trace_{tag}_{'default' if not kw else 'm16'}.json")
        prof.export_chrome_trace(path)
        ev = json.load(open(path))["traceEvents"]
        calls = sorted([e for e in ev if e.get("name") == "CALL" and "dur" in e], key=lambda e: e["ts"])
        c = calls[-1]; t0 = c["ts"]; t1 = t0 + c["dur"]
        sel = sorted([e for e in ev if "dur" in e and t0 <= e["ts"] <= t1 + 200 and e.get("cat") in
                      ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver")], key=lambda e: e["ts"])
        print(f"== {tag} {'default' if not kw else 'moduli=16'}: call {c['dur']:.1f} us")
        for e in sel:
            print(f"  {e['cat'][:6]:6s} +{e['ts'] - t0:7.1f} dur {e['dur']:6.1f}  {e['name'][:60]}")
