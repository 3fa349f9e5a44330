"""One emulated complex product (1024 x 64 x 1024, 16 moduli) for ``ncu`` to count the
executed instructions of the residue and Phase-B kernels (``python -m
ozfft.bench.ncu_probe``; run by ``ozfft bench ceilings`` when ncu is installed)."""

import cupy as cp
import numpy as np

import ozfft

rng = np.random.default_rng(0)
a = cp.asarray(rng.standard_normal((1024, 64)) + 1j * rng.standard_normal((1024, 64)))
b = cp.asarray(rng.standard_normal((64, 1024)) + 1j * rng.standard_normal((64, 1024)))
ozfft.matmul(a, b)
cp.cuda.Device().synchronize()
