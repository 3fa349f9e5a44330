"""cProfile of wide-range single 64x64 default calls on the GPU (phi 8 split, phi 16 native)."""
import cProfile, pstats, io
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
rng = np.random.default_rng(3)
for phi in (8, 16):
    a = cp.asarray(phi_matrix(rng, (64, 64), phi, np.complex128)); b = cp.asarray(phi_matrix(rng, (64, 64), phi, np.complex128))
    for _ in range(3): ozfft.matmul(a, b)
    cp.cuda.Device().synchronize()
    pr = cProfile.Profile(); pr.enable()
    for _ in range(10): ozfft.matmul(a, b)
    cp.cuda.Device().synchronize()
    pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(22)
    print(f"== phi {phi}"); print("\n".join(l for l in s.getvalue().splitlines() if l.strip())[:6000])
