"""A/B: the prepared default call with B read in place by both the probe and the product (the
probe writes no Bt rows; "shared B"), against the probe writing Bt's rows for the product
("Bt rows", as landed); and the shared-B call with the probe's test on a side stream of
normal priority ("shared B, low prio") instead of the highest. Same process, alternating
rounds: synchronized calls (CUDA events, median of 100 a round) and streams of 50 calls
(per call); median of 5 rounds. Bits compared."""
import json, os, time
import numpy as np, cupy as cp
import ozfft
from ozfft import linalg
from ozfft.bench.timing import median_ms
from ozfft.reference import phi_matrix
from ozfft.engines.cuda import engine as E

OUT = os.environ.get("OUT", ".")
dev = cp.cuda.runtime.getDevice()
ozfft.matmul(cp.ones((64, 64)), cp.ones((64, 64)))  # the side stream exists
high = E._KEPT.side_streams[dev]
low = cp.cuda.Stream(non_blocking=True, priority=0)

def use(shared, prio_high=True):
    if E._SHARED_B != shared:
        E._SHARED_B = shared
        linalg._forget_prepared()
    E._KEPT.side_streams[dev] = high if prio_high else low

def stream_us(f, calls=50):
    f(); cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(calls): f()
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - t) / calls * 1e6

VARIANTS = {"Bt rows": (False, True), "shared B": (True, True), "shared B, low prio": (True, False)}
rng = np.random.default_rng(5)
res = {}
for name, shape, dtype in (("z 1000x64^3", (1000, 64, 64), np.complex128),
                           ("d 1000x64^3", (1000, 64, 64), np.float64),
                           ("z 100x64^3", (100, 64, 64), np.complex128),
                           ("z 64^3", (64, 64), np.complex128), ("d 64^3", (64, 64), np.float64)):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, dtype)); b = cp.asarray(phi_matrix(rng, shape, 0.5, dtype))
    outs = {}
    for v, args in VARIANTS.items():
        use(*args); outs[v] = ozfft.matmul(a, b)
    same = all(bool(cp.array_equal(outs["Bt rows"], o)) for o in outs.values())
    r = {}
    for _ in range(5):
        for v, args in VARIANTS.items():
            use(*args)
            r.setdefault(v, []).append(median_ms(cp, lambda: ozfft.matmul(a, b), 100, warm=5) * 1e3)
            r.setdefault(v + " stream", []).append(stream_us(lambda: ozfft.matmul(a, b)))
        r.setdefault("explicit 16", []).append(median_ms(cp, lambda: ozfft.matmul(a, b, moduli=16), 100, warm=5) * 1e3)
        r.setdefault("cupy", []).append(median_ms(cp, lambda: cp.matmul(a, b), 100, warm=5) * 1e3)
    med = {k: float(np.median(v)) for k, v in r.items()}
    res[name] = {"rounds_us": r, "median_us": med, "same_bits": same}
    print(f"{name:12s} bits {'=' if same else 'DIFFER'} sync " + " ".join(f"{v} {med[v]:6.1f}" for v in VARIANTS)
          + " | stream " + " ".join(f"{med[v + ' stream']:6.1f}" for v in VARIANTS)
          + f" | m16 {med['explicit 16']:6.1f} cupy {med['cupy']:6.1f} us")
use(True, True)
json.dump(res, open(os.path.join(OUT, "ab_shared_b.json"), "w"), indent=1)
