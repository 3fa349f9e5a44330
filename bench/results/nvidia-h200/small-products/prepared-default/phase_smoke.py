"""Profiled GPU calls after profiling.phase's change: the phases each reports."""
import numpy as np, cupy as cp, ozfft
from ozfft.profiling import profile_phases
from ozfft.reference import phi_matrix
rng = np.random.default_rng(1)
x = cp.asarray(rng.standard_normal((64, 64, 64)) + 1j * rng.standard_normal((64, 64, 64)))
ozfft.fftn(x)
with profile_phases() as p:
    ozfft.fftn(x)
print("fftn 64^3:", {k: round(v, 3) for k, v in p.ms.items()})
for shape, kw in (((1000, 64, 64), {}), ((64, 64), {}), ((2048, 256), {"moduli": 15})):
    a = cp.asarray(phi_matrix(rng, shape, 0.5, np.complex128))
    b = cp.asarray(phi_matrix(rng, shape[:-2] + shape[::-1][:2] if len(shape) == 2 else shape, 0.5, np.complex128))
    ozfft.matmul(a, b, **kw)
    with profile_phases() as p:
        ozfft.matmul(a, b, **kw)
    print("matmul", shape, kw, {k: round(v, 3) for k, v in p.ms.items()})
