"""Timeline of one synchronized call (default and moduli=14) on stacks: torch.profiler (CUPTI)
kernels, copies, memsets and runtime/driver calls relative to the call's CPU annotation."""
import json, os
import numpy as np, cupy as cp, torch
import ozfft
from ozfft.reference import phi_matrix
from torch.profiler import profile, ProfilerActivity
out = os.environ.get("OUT", ".")
rng = np.random.default_rng(5)
for tag, shape, dt in (("z1000", (1000, 64, 64), np.complex128), ("d1000", (1000, 64, 64), np.float64),)[:2]:#
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dt)); b = cp.asarray(phi_matrix(rng, shape, 0.5, dt))
    for kw in ({}, {"moduli": 14}):
        for _ in range(30): ozfft.matmul(a, b, **kw)
        cp.matmul(a, b)
        cp.cuda.Device().synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                with torch.profiler.record_function("CALL"):
                    ozfft.matmul(a, b, **kw); cp.cuda.Device().synchronize()
            with torch.profiler.record_function("CUPY"):
                cp.matmul(a, b); cp.cuda.Device().synchronize()
        path = os.path.join(out, f"trace_{tag}_{'default' if not kw else 'm14'}.json")
        prof.export_chrome_trace(path)
        ev = json.load(open(path))["traceEvents"]
        for name in ("CALL", "CUPY"):
            calls = sorted([e for e in ev if e.get("name") == name and "dur" in e and e.get("cat") == "user_annotation"], key=lambda e: e["ts"])
            c = calls[-1]; t0 = c["ts"]; t1 = t0 + c["dur"]
            sel = sorted([e for e in ev if "dur" in e and t0 <= e["ts"] <= t1 + 20 and e.get("cat") in
                          ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver")], key=lambda e: e["ts"])
            print(f"== {tag} {'default' if not kw else 'moduli=14'} {name}: {c['dur']:.1f} us")
            for e in sel:
                if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset") or e["dur"] > 3:
                    print(f"  {e['cat'][:6]:6s} +{e['ts'] - t0:7.1f} dur {e['dur']:6.1f}  {e['name'][:60]}")
