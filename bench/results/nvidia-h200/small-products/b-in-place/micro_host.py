"""Host cost of the steps of a synchronized explicit stacked call (each timed alone, 2000
times, median of 5 batches, in us)."""

import time

import cupy as cp
import numpy as np

import ozfft
from ozfft import config
from ozfft.engines.cuda import engine as E
from ozfft.engines.select import cuda_engine, engine_for
from ozfft.ozaki.residue_system import int8_system
from ozfft.profiling import phase
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import _phase_a_moduli, gaussian_system_for

gpu = cuda_engine()
rng = np.random.default_rng(3)
a = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
b = cp.asarray(phi_matrix(rng, (1000, 64, 64), 0.5, np.complex128))
view = b.swapaxes(-1, -2)
g = gaussian_system_for(int8_system(14))
ozfft.matmul(a, b, moduli=14)
kern = gpu._small_product_kernel(g, 2, np.complex128, "nearest", True, slices=7, b_columns=True)
launch = kern[0]
out = cp.empty((1000, 64, 64), cp.complex128)
counts = cp.zeros(4, cp.uint64)


def T(name, f, n=2000):
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        ts.append((time.perf_counter() - t0) / n * 1e6)
    cp.cuda.Device().synchronize()
    print(f"{np.median(ts):8.2f} us  {name}")


T("cp.empty 65 MB", lambda: cp.empty((1000, 64, 64), cp.complex128))
T("cp.zeros(4, uint64)", lambda: cp.zeros(4, cp.uint64))
T(
    "cp.empty(4, uint64) + memsetAsync",
    lambda: cp.cuda.runtime.memsetAsync(
        cp.empty(4, cp.uint64).data.ptr, 0, 32, cp.cuda.get_current_stream().ptr
    ),
)
T("runtime.getDevice()", lambda: cp.cuda.runtime.getDevice())
T("Device().id", lambda: cp.cuda.Device().id)
T("get_current_stream().ptr", lambda: cp.cuda.get_current_stream().ptr)
T("config.small_product_slices()", config.small_product_slices)
T("_small_operands", lambda: E._small_operands(a, view, any_layout=True))
T("_rows_of_transposed", lambda: E._rows_of_transposed(a, view))
T("b.swapaxes", lambda: b.swapaxes(-1, -2))
T("a.flags.c_contiguous", lambda: a.flags.c_contiguous)
T(
    "_small_product_kernel (cached)",
    lambda: gpu._small_product_kernel(
        g, 2, np.complex128, "nearest", True, slices=7, b_columns=True
    ),
)
T("_has_int8_mma", gpu._has_int8_mma)


def ph():
    with phase("fused", gpu._clock):
        pass


T("phase() context, no profiler", ph)
T(
    "launch (driver)",
    lambda: launch(
        (1, 1, 1),
        (256,),
        (a, b, 64, 64, 64, counts, counts, out, 110, counts, 1, 6),
        shared_mem=kern[1],
    ),
    n=200,
)
T("_read_async + read", lambda: E._read_async(cp, counts, 4)(), n=500)
T("engine_for", lambda: engine_for(a, b))
T("_phase_a_moduli", lambda: _phase_a_moduli(int8_system(14), True, "gaussian"))
T("int8_system(14)", lambda: int8_system(14))
T("prepare_operand(a)", lambda: gpu.prepare_operand(a))
T(
    "fused_fast_product (full, sync)",
    lambda: gpu.fused_fast_product(a, view, 110, g, np.complex128, rounding="nearest"),
    n=50,
)
T(
    "fused_fast_product (counted, queued)",
    lambda: gpu.fused_fast_product(
        a, view, 110, g, np.complex128, rounding="nearest", counted=True
    ),
    n=50,
)
T("ozfft.matmul moduli=14 (sync)", lambda: ozfft.matmul(a, b, moduli=14), n=50)
