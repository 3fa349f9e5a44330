import time, json, sys, numpy as np, ozfft
from ozfft.reference import phi_matrix
rng = np.random.default_rng(5)
res = {}
for name, ashape, bshape, dt, phi in (("d 512^3", (512,512), (512,512), np.float64, 0.5),
                                      ("z 100x64^3", (100,64,64), (100,64,64), np.complex128, 0.5),
                                      ("d 16x64^3 phi 8", (16,64,64), (16,64,64), np.float64, 8.0),
                                      ("d 2048x256 @ 256x2048", (2048,256), (256,2048), np.float64, 0.5)):
    a = phi_matrix(rng, ashape, phi, dt); b = phi_matrix(rng, bshape, phi, dt)
    ozfft.matmul(a, b); ts = []
    for _ in range(5):
        t = time.perf_counter(); ozfft.matmul(a, b); ts.append(time.perf_counter() - t)
    res[name] = float(np.median(ts)) * 1e3
    print(f"{name:24s} {res[name]:8.1f} ms")
json.dump(res, open(sys.argv[1], "w"))
