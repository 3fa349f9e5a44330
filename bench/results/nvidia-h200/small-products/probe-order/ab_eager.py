"""A/B: the prepared default call's probe test (pairs, deficits, read) queued right after the
rows kernel, before the product ("eager", the change), against queued at the first wait, after
the product ("lazy", as landed). Same process, alternating rounds: synchronized calls (CUDA
events, median of 100 a round) and streams of 50 calls without a synchronization between
them (per call); median of 5 rounds. Bits compared."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft.bench.timing import median_ms
from ozfft.reference import phi_matrix
from ozfft.engines.cuda import engine as E

OUT = os.environ.get("OUT", ".")
eager_probe = E.CudaEngine._run_probe
def lazy_probe(self, plan, a, bt, stats=None, index=None, *, test_now=False):
    return eager_probe(self, plan, a, bt, stats, index)
def use(eager):
    E.CudaEngine._run_probe = eager_probe if eager else lazy_probe

def stream_us(f, calls=50):
    f(); cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(calls): f()
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - t) / calls * 1e6

rng = np.random.default_rng(5)
res = {}
for name, shape, dtype in (("z 64^3", (64, 64), np.complex128), ("d 64^3", (64, 64), np.float64),
                           ("z 1000x64^3", (1000, 64, 64), np.complex128),
                           ("d 1000x64^3", (1000, 64, 64), np.float64),
                           ("z 100x32^3", (100, 32, 32), np.complex128)):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dtype)); b = cp.asarray(phi_matrix(rng, shape, 0.5, dtype))
    use(False); x = ozfft.matmul(a, b)
    use(True); y = ozfft.matmul(a, b)
    same = bool(cp.array_equal(x, y))
    r = {k: [] for k in ("lazy", "eager", "lazy stream", "eager stream", "explicit 16", "cupy")}
    for _ in range(5):
        for eager in (False, True):
            use(eager); tag = "eager" if eager else "lazy"
            r[tag].append(median_ms(cp, lambda: ozfft.matmul(a, b), 100, warm=5) * 1e3)
            r[tag + " stream"].append(stream_us(lambda: ozfft.matmul(a, b)))
        r["explicit 16"].append(median_ms(cp, lambda: ozfft.matmul(a, b, moduli=16), 100, warm=5) * 1e3)
        r["cupy"].append(median_ms(cp, lambda: cp.matmul(a, b), 100, warm=5) * 1e3)
    med = {k: float(np.median(v)) for k, v in r.items()}
    res[name] = {"rounds_us": r, "median_us": med, "same_bits": same}
    print(f"{name:12s} bits {'=' if same else 'DIFFER'} sync lazy {med['lazy']:6.1f} eager {med['eager']:6.1f} | "
          f"stream lazy {med['lazy stream']:6.1f} eager {med['eager stream']:6.1f} | m16 {med['explicit 16']:6.1f} cupy {med['cupy']:6.1f} us")
use(True)
json.dump(res, open(os.path.join(OUT, "ab_eager.json"), "w"), indent=1)
