"""Diagnostic variants of the complex slices kernel (1000 x 64^3 complex128, the default
call's product: 16 moduli, 8 slices, the probe's shifts, B in place): kernel time from 20
queued launches, alternating rounds; bits of the variants that keep them."""
import json, os
import numpy as np, cupy as cp
from ozfft.engines.cuda import engine as E
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.residue_system import int8_system
from ozfft.scheme.gemm import gaussian_system_for, compute_shifts
from ozfft.reference import phi_matrix
gpu = cuda_engine()
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
view = b.swapaxes(-1, -2)
g16 = int8_system(16); L = g16.budget_bits; g = gaussian_system_for(g16)
sa, sb = compute_shifts(gpu, a, cp.ascontiguousarray(view), g16, "fast")
sa, sb = sa.astype(cp.int32), sb.astype(cp.int32)
orig = E.small_product_macros
VARIANTS = {"base": {}, "one": {"OZ_SP_EXP_BLOCKS": "1"}, "one_nopark": {"OZ_SP_EXP_BLOCKS": "1", "OZ_SP_EXP_NOPARK": "1"},
            "one_nopark_nofill": {"OZ_SP_EXP_BLOCKS": "1", "OZ_SP_EXP_NOPARK": "1", "OZ_SP_EXP_NOFILL": "1"},
            "nofill": {"OZ_SP_EXP_NOFILL": "1"}, "one_nofill": {"OZ_SP_EXP_BLOCKS": "1", "OZ_SP_EXP_NOFILL": "1"}}
def use(extra):
    def macros(*args, **kw):
        m = orig(*args, **kw)
        return m if not extra else type(m)(dict(m) | extra)
    E.small_product_macros = macros
    gpu._small.clear(); gpu.forget_plans()
def run():
    return gpu.fused_fast_product(a, view, L, g, np.complex128, rounding="nearest", counted=True, shifts=(sa, sb))
def queued(n=20):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    run(); cp.cuda.Device().synchronize(); s.record()
    for _ in range(n): run()
    e.record(); e.synchronize(); return 1000 * cp.cuda.get_elapsed_time(s, e) / n
res = {k: [] for k in VARIANTS}; bits = {}
for tag, extra in VARIANTS.items():
    use(extra); out = run(); bits[tag] = cp.asnumpy(out).tobytes().__hash__()
for rnd in range(4):
    for tag, extra in (VARIANTS.items() if rnd % 2 == 0 else reversed(list(VARIANTS.items()))):
        use(extra); res[tag].append(queued())
use({})
print("cupy.matmul kernel+launch (queued):", end=" ")
s, e = cp.cuda.Event(), cp.cuda.Event(); cp.matmul(a, b); cp.cuda.Device().synchronize(); s.record()
for _ in range(20): cp.matmul(a, b)
e.record(); e.synchronize(); print(f"{1000 * cp.cuda.get_elapsed_time(s, e) / 20:.1f} us")
for tag in VARIANTS:
    print(f"{tag:20s} median {np.median(res[tag]):7.1f} us  rounds {[round(x, 1) for x in res[tag]]}  bits {'= base' if bits[tag] == bits['base'] else 'differ'}")
json.dump({"us": res, "bits_equal_base": {k: bits[k] == bits["base"] for k in bits}}, open(os.path.join(os.environ.get("OUT", "."), "ws_counts.json"), "w"), indent=1)
