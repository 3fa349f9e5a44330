"""One emulated complex product for ``ncu`` to count the executed instructions of the
Karatsuba residue and Phase-B kernels (those of the unfused FFT stage path; ``matmul``
itself runs complex products on Gaussian moduli): ``(M x K) @ (K x N)`` = 1024 x 64 x
1024 with 16 moduli.

Run as ``python -m ozfft.bench.ncu_probe`` (``ozfft bench ceilings`` does so under
ncu when ncu is installed). Importing this module does nothing.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["NUM_MODULI", "SHAPE", "main"]

SHAPE = (1024, 64, 1024)  #: (M, K, N) of the probe's product
NUM_MODULI = 16


def main() -> int:
    """Run the product once on the GPU and wait for it (needs cupy and a GPU)."""
    from ..engines.select import cuda_engine

    cuda_engine()  # DeviceUnavailableError saying what is missing, before any work
    import cupy as cp

    from ..scheme.gemm import emulated_matmul

    m, k, n = SHAPE
    rng = np.random.default_rng(0)
    a = cp.asarray(rng.standard_normal((m, k)) + 1j * rng.standard_normal((m, k)))
    b = cp.asarray(rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n)))
    emulated_matmul(
        cuda_engine(),
        a,
        b,
        num_moduli=NUM_MODULI,
        mode="fast",
        out_dtype=np.complex128,
        complex_method="karatsuba",
    )
    cp.cuda.Device().synchronize()
    return 0


if __name__ == "__main__":  # pragma: no cover - needs a GPU
    from ..errors import DeviceUnavailableError

    try:
        sys.exit(main())
    except DeviceUnavailableError as exc:
        print(f"ozfft.bench.ncu_probe: {exc}", file=sys.stderr)
        sys.exit(2)
