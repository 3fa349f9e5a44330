"""The warp-specialized persistent complex slices kernel (experiment, branch wip/ws-counts)
against the landed kernel: the same bits, and kernel time (20 queued launches, alternating
rounds) on the default call's product (complex128 stacks, 16 moduli, 8 slices, given shifts,
B in place)."""
import json, os, sys
import numpy as np, cupy as cp
from ozfft.engines.cuda import engine as E
from ozfft.engines.cuda.compiler import get_function
from ozfft.engines.cuda.constants import small_product_macros, small_complex_slice_shared
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.residue_system import int8_system
from ozfft.scheme.gemm import gaussian_system_for, compute_shifts
from ozfft.reference import phi_matrix
gpu = cuda_engine()
rng = np.random.default_rng(3)
g16 = int8_system(16); L = g16.budget_bits; g = gaussian_system_for(g16)
mac = small_product_macros(g, out_float=False, rounding="nearest", chunk=g.count, shifts=False, slices=8, b_columns=True)
stage = small_complex_slice_shared(8, 16)
def build(extra):
    f = get_function("gemm/small_product.cu", "oz_small_product_slices_gaussian_ws", type(mac)(dict(mac) | {"OZ_SP_WS": "1"} | extra))
    f.max_dynamic_shared_size_bytes = 2 * stage
    return f
ws = build({})
diag = {"producers_only": build({"OZ_SP_WS_NOCONSUME": "1"}), "consumers_only": build({"OZ_SP_WS_NOPRODUCE": "1"})}
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
print("ws kernel regs", ws.num_regs, "local", ws.local_size_bytes, "stage", stage, "SMs", sms)
res = {}
for shape in ((1000, 64, 64, 64), (264, 64, 64, 64), (7, 50, 40, 45), (40, 100, 64, 70), (1, 64, 64, 64)):
    batch, m, k, n = shape
    a = cp.asarray(phi_matrix(rng, (batch, m, k), 0.5, np.complex128))
    b = cp.asarray(phi_matrix(rng, (batch, k, n), 0.5, np.complex128))
    view = b.swapaxes(-1, -2)
    sa, sb = compute_shifts(gpu, a, cp.ascontiguousarray(view), g16, "fast")
    sa, sb = cp.ascontiguousarray(sa.astype(cp.int32)), cp.ascontiguousarray(sb.astype(cp.int32))
    counts = cp.zeros(8, cp.uint64)
    def landed():
        return gpu.fused_fast_product(a, view, L, g, np.complex128, rounding="nearest", counted=True, shifts=(sa, sb))
    def proto(kern=ws):
        out = cp.empty((batch, m, n), cp.complex128)
        units = batch * -(-m // 64) * -(-n // 32)
        kern((min(units, sms),), (384,), (a, b, np.int64(m), np.int64(n), np.int64(k), sa, sb, out,
             np.int32(L), counts, np.int64(batch), np.int32(6)), shared_mem=2 * stage)
        return out
    x, y = landed(), proto(); cp.cuda.Device().synchronize()
    equal = bool(cp.array_equal(x.view(cp.uint64), y.view(cp.uint64)))
    def queued(f, n=20):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        f(); cp.cuda.Device().synchronize(); s.record()
        for _ in range(n): f()
        e.record(); e.synchronize(); return 1000 * cp.cuda.get_elapsed_time(s, e) / n
    t = {"landed": [], "ws": [], "cupy": []}
    for rnd in range(4):
        order = (("landed", landed), ("ws", proto)) if rnd % 2 == 0 else (("ws", proto), ("landed", landed))
        for tag, f in order: t[tag].append(queued(f))
        t["cupy"].append(queued(lambda: cp.matmul(a, b)))
    if batch == 1000:
        for name, kern in diag.items():
            t[name] = [queued(lambda: proto(kern)) for _ in range(3)]
    med = {k2: float(np.median(v)) for k2, v in t.items()}
    res[str(shape)] = {"bits_equal": equal, "us": t, "median": med}
    print(f"{str(shape):22s} bits equal {equal}  " + "  ".join(f"{k2} {v:7.1f}" for k2, v in med.items()) + " us")
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "ws_proto.json"), "w"), indent=1)
