"""Device probe: bisect CudaEngine.residues step by step (CUDA events)."""

import cupy as cp
import numpy as np

from ozfft.engines.cuda.compiler import get_function
from ozfft.engines.cuda.constants import moduli_macros
from ozfft.engines.cuda.engine import _grid_rows
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.moduli import moduli_set

eng = cuda_engine()
mods = moduli_set(16)
kern = get_function("residues.cu", "oz_residues", moduli_macros(mods, with_limbs=False))
x = cp.random.standard_normal((4096, 4096))
shift = cp.full(4096, 40, cp.int64)


def t(fn, reps=3):
    fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    e.synchronize()
    return cp.cuda.get_elapsed_time(s, e) / reps


def step(kind):
    flat, rows, k, parts = eng._as_rows(x)
    planes = cp.empty((16, 1, rows, k), cp.int8)
    sh = cp.ascontiguousarray(shift.reshape(-1).astype(cp.int32))
    grid = _grid_rows(k // 4, rows) if kind != "fixed" else (4, 4096)
    if kind == "alloc":
        return planes
    kern(
        grid, (256,), (flat, np.int64(rows), np.int64(k), np.int64(k), np.int32(parts), sh, planes)
    )
    return planes


print("grid", _grid_rows(1024, 4096))
for kind in ("alloc", "fixed", "engine-grid"):
    print(kind, f"{t(lambda kd=kind: step(kd)):.3f} ms")
print("engine", f"{t(lambda: eng.residues(x, shift, mods)):.3f} ms")
