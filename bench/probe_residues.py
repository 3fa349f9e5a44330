"""Device probe: residue kernel direct vs through CudaEngine.residues (CUDA events)."""

import cupy as cp
import numpy as np

from ozfft.engines.cuda.compiler import get_function
from ozfft.engines.cuda.constants import moduli_macros
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.moduli import moduli_set

eng = cuda_engine()
mods = moduli_set(16)
kern = get_function("residues.cu", "oz_residues", moduli_macros(mods, with_limbs=False))


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


for name, x in [("normal", cp.random.standard_normal((4096, 4096))),
                ("phi0.5", (cp.random.random((4096, 4096)) - 0.5)
                 * cp.exp(0.5 * cp.random.standard_normal((4096, 4096))))]:
    for sval in (10, 40, 60):
        shift = cp.full(4096, sval, cp.int32)
        planes = cp.empty((16, 1, 4096, 4096), cp.int8)
        args = (x, np.int64(4096), np.int64(4096), np.int64(4096), np.int32(1), shift, planes)
        direct = t(lambda a=args: kern((4, 4096), (256,), a))
        via = t(lambda x=x, s=shift: eng.residues(x, s.astype(cp.int64), mods))
        print(f"{name} shift {sval}: direct {direct:.3f} ms, engine {via:.3f} ms")
