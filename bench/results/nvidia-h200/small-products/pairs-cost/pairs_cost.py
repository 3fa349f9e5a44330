"""The complex slices kernel on 1000 x 64^3 complex128 (B in place), kernel alone (20 queued
launches, alternating rounds): 16 moduli (8 slices) against 14 (7 slices), each with the
probe's shifts given and with the shifts formed in the kernel."""
import json, os
import numpy as np, cupy as cp
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.residue_system import int8_system
from ozfft.scheme.gemm import gaussian_system_for, compute_shifts
from ozfft.reference import phi_matrix
gpu = cuda_engine()
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
view = b.swapaxes(-1, -2); rows = cp.ascontiguousarray(view)
fs = {}
for count in (16, 14):
    s = int8_system(count); L = s.budget_bits; g = gaussian_system_for(s)
    sa, sb = compute_shifts(gpu, a, rows, s, "fast")
    sa, sb = cp.ascontiguousarray(sa.astype(cp.int32)), cp.ascontiguousarray(sb.astype(cp.int32))
    fs[f"{count} given"] = (lambda L=L, g=g, sa=sa, sb=sb: gpu.fused_fast_product(a, view, L, g, np.complex128, rounding="nearest", counted=True, shifts=(sa, sb)))
    fs[f"{count} in-kernel"] = (lambda L=L, g=g: gpu.fused_fast_product(a, view, L, g, np.complex128, rounding="nearest", counted=True))
    x, y = fs[f"{count} given"](), fs[f"{count} in-kernel"]()
    print(count, "given and in-kernel shifts: bits equal", bool(cp.array_equal(x.view(cp.uint64), y.view(cp.uint64))))
fs["cupy"] = lambda: cp.matmul(a, b)
def queued(f, n=20):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    f(); cp.cuda.Device().synchronize(); s.record()
    for _ in range(n): f()
    e.record(); e.synchronize(); return 1000 * cp.cuda.get_elapsed_time(s, e) / n
t = {k: [] for k in fs}
for rnd in range(4):
    for k, f in (fs.items() if rnd % 2 == 0 else reversed(list(fs.items()))): t[k].append(queued(f))
for k, v in t.items(): print(f"{k:14s} {np.median(v):7.1f} us  {[round(x, 1) for x in v]}")
json.dump(t, open(os.path.join(os.environ.get("OUT", "."), "pairs_cost.json"), "w"), indent=1)
