"""Device probe: residue-kernel time per launch shape, and its SASS histogram."""

import collections
import re
import subprocess

import cupy as cp
import numpy as np

from ozfft.engines.cuda.compiler import config, get_function
from ozfft.engines.cuda.constants import moduli_macros
from ozfft.engines.select import cuda_engine
from ozfft.ozaki.moduli import moduli_set

eng = cuda_engine()
mods = moduli_set(16)
x = cp.random.standard_normal((4096, 4096))
shift = cp.full(4096, 40, cp.int32)
planes = cp.empty((16, 1, 4096, 4096), cp.int8)
kern = get_function("residues.cu", "oz_residues", moduli_macros(mods, with_limbs=False))


def t(fn, reps=5):
    fn()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    e.synchronize()
    return cp.cuda.get_elapsed_time(s, e) / reps


args = (x, np.int64(4096), np.int64(4096), np.int64(4096), np.int32(1), shift, planes)
for grid in [(4, 4096), (64, 256), (1024, 16), (4, 65535)]:
    print("grid", grid, f"{t(lambda g=grid: kern(g, (256,), args)):.3f} ms")
for cubin in sorted(config.cache_dir().glob("residues-*.cubin")):
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
    ops = collections.Counter(re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass))
    print(cubin.name, sum(ops.values()), ops.most_common(30))
