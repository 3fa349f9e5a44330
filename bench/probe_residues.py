"""Device probe: where the time of ``CudaEngine.residues`` goes (host profile)."""

import cProfile
import pstats
import time

import cupy as cp

from ozfft.engines.select import cuda_engine
from ozfft.ozaki.moduli import moduli_set

eng = cuda_engine()
mods = moduli_set(16)
x = cp.random.standard_normal((4096, 4096))
shift = cp.full(4096, 40, cp.int64)
eng.residues(x, shift, mods)
cp.cuda.Device().synchronize()
t0 = time.perf_counter()
eng.residues(x, shift, mods)
cp.cuda.Device().synchronize()
print(f"residues {1e3 * (time.perf_counter() - t0):.2f} ms")
prof = cProfile.Profile()
prof.enable()
eng.residues(x, shift, mods)
cp.cuda.Device().synchronize()
prof.disable()
pstats.Stats(prof).sort_stats("cumtime").print_stats(12)
