"""One default call on 1000 x 64^3 stacks (complex128, float64) between profilerStart/Stop: ncu
of the probe's kernels and the product."""
import numpy as np, cupy as cp
import ozfft
from ozfft.reference import phi_matrix
rng = np.random.default_rng(5)
for dt in (np.complex128, np.float64):
    a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, dt)); b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, dt))
    for _ in range(5): ozfft.matmul(a, b)
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStart(); ozfft.matmul(a, b); cp.cuda.Device().synchronize(); cp.cuda.runtime.profilerStop()
