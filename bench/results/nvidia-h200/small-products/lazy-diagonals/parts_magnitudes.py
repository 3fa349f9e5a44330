import numpy as np
from ozfft.engines.select import numpy_engine
from ozfft.scheme.gemm import compute_shifts
from ozfft.ozaki.residue_system import int8_system
from ozfft.reference import phi_matrix
rng = np.random.default_rng(5); eng = numpy_engine()
a = phi_matrix(rng, (50, 64, 64), 0.5, np.complex128); b = phi_matrix(rng, (50, 64, 64), 0.5, np.complex128)
bt = np.ascontiguousarray(b.swapaxes(-1, -2))
sa, sb = compute_shifts(eng, a, bt, int8_system(16), "fast")
A = a * np.ldexp(1.0, sa.astype(np.int64))[..., None]; B = bt * np.ldexp(1.0, sb.astype(np.int64))[..., None]
C = A @ B.swapaxes(-1, -2)
parts = np.concatenate([C.real.ravel(), C.imag.ravel()])
lead = np.floor(np.log2(np.abs(parts))) + 1
print("max log2 |a'|", np.log2(np.abs(A.real).max()), "bitlen(|V|) quantiles", np.percentile(lead, [1, 10, 50, 90, 99]))
for slack in (48, 40, 32):
    width = lead - 53 - 2 - slack
    fail = np.where(width >= 2, 2.0 ** (1 - np.minimum(width, 32)), 1.0)
    # warps: 512 parts each (256 outputs x re/im), grouped in order
    w = fail[: len(fail) // 512 * 512].reshape(-1, 512)
    print(f"slack 2**{slack}: per-part fail {fail.mean():.2e}, warps falling back {1 - np.prod(1 - w, axis=1).mean():.3f}")
