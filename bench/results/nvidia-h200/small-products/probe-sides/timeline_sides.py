"""Kernel timelines (CUPTI via torch.profiler) of one synchronized default call on
1000 x 64^3 complex128 and 528 x 64^3, with the sides kernel and with three launches."""
import json, os
import numpy as np, cupy as cp, torch
import ozfft
from ozfft.engines.cuda import engine as E
from ozfft.linalg import _forget_prepared
from ozfft.reference import phi_matrix
from torch.profiler import profile, ProfilerActivity
out = os.environ.get("OUT", ".")
rng = np.random.default_rng(5)
for batch in (1000, 528):
    a = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, np.complex128)); b = cp.asarray(phi_matrix(rng, (batch, 64, 64), 0.5, np.complex128))
    for tag in ("sides", "three"):
        E._PROBE_SIDES = tag == "sides"; _forget_prepared()
        for _ in range(30): ozfft.matmul(a, b)
        cp.cuda.Device().synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                with torch.profiler.record_function("CALL"):
                    ozfft.matmul(a, b); cp.cuda.Device().synchronize()
        path = os.path.join(out, f"trace_{batch}_{tag}.json")
        prof.export_chrome_trace(path)
        ev = json.load(open(path))["traceEvents"]
        calls = sorted([e for e in ev if e.get("name") == "CALL" and "dur" in e and e.get("cat") == "user_annotation"], key=lambda e: e["ts"])
        for c in calls[-2:]:
            t0 = c["ts"]; t1 = t0 + c["dur"]
            sel = sorted([e for e in ev if "dur" in e and t0 <= e["ts"] <= t1 + 20 and e.get("cat") in
                          ("kernel", "gpu_memcpy", "gpu_memset")], key=lambda e: e["ts"])
            print(f"== {batch} {tag}: {c['dur']:.1f} us")
            for e in sel:
                print(f"  {e['cat'][:6]:6s} +{e['ts'] - t0:7.1f} dur {e['dur']:6.1f} end +{e['ts'] + e['dur'] - t0:7.1f} {e['name'][:50]}")
E._PROBE_SIDES = True
