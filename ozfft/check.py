"""``ozfft check``: the main job — emulated products on the best engine, checked
against an independent exact reference, next to the native routine."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .engines.select import best_engine_name, cuda_engine, numpy_engine, resolve_phase_a
from .linalg import matmul, matmul_plan
from .reference import (
    exact_matmul,
    long_double_fftn,
    long_double_source,
    max_relative_error,
    phi_matrix,
    relative_l2_error,
)

__all__ = ["CheckResult", "FFTCheckResult", "run_fft_check", "run_gemm_check"]


@dataclass(frozen=True)
class CheckResult:
    """One checked operation."""

    op: str
    engine: str
    shape: str
    moduli: int | str  #: moduli count, or "-" for the fixed-point FFT (digits, no moduli)
    mode: str
    error: float  #: max relative error of ozfft on the sampled entries
    native_error: float  #: same for the native float routine (numpy)
    seconds: float
    native_seconds: float

    @property
    def passed(self) -> bool:
        """ozfft is at least as accurate as native, up to one unit roundoff of slack."""
        unit = 2.0**-53 if self.op in ("dgemm", "zgemm") else 2.0**-24
        return self.error <= max(self.native_error, unit)


def _timed(fn: Callable[[], Any], repeats: int = 3) -> tuple[Any, float]:
    """Result and best-of-``repeats`` wall seconds of ``fn()``."""
    best = float("inf")
    out = None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


_Pair = Callable[..., Any]  #: ``f(xp, *inputs)``: an operation on one array module


def _run_pair(
    engine: str, ours: _Pair, native: _Pair, *inputs: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray, float]:
    """Time ``ours(xp, *inputs)`` and ``native(xp, *inputs)`` on the engine's arrays
    (synchronized on a GPU); return host results and best-of-3 seconds."""
    if engine != "cuda":
        got, seconds = _timed(lambda: ours(np, *inputs))
        ref, native_seconds = _timed(lambda: native(np, *inputs))
        return got, seconds, ref, native_seconds
    import cupy  # pragma: no cover - exercised on GPU machines

    device_inputs = [cupy.asarray(x) for x in inputs]

    def synced(fn: _Pair) -> Callable[[], Any]:
        def run() -> Any:
            out = fn(cupy, *device_inputs)
            cupy.cuda.get_current_stream().synchronize()
            return out

        return run

    got, seconds = _timed(synced(ours))
    ref, native_seconds = _timed(synced(native))
    return cupy.asnumpy(got), seconds, cupy.asnumpy(ref), native_seconds


def run_gemm_check(
    size: int = 512,
    *,
    dtype: DTypeLike = np.float64,
    phi: float = 0.5,
    mode: str = "fast",
    moduli: int | None = None,
    samples: int = 48,
    seed: int = 0,
) -> CheckResult:
    """Multiply two ``size``-cube phi-matrices; compare sampled entries to exact rationals."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    a = phi_matrix(rng, (size, size), phi, dtype)
    b = phi_matrix(rng, (size, size), phi, dtype)
    precision = "fp32" if dtype in (np.float32, np.complex64) else "fp64"
    engine = best_engine_name()
    runner = cuda_engine() if engine == "cuda" else numpy_engine()
    # the chosen count, with Phase A resolved as the run on ``engine`` resolves it
    plan = matmul_plan(
        a, b, precision=precision, moduli=moduli, mode=mode, phase_a=resolve_phase_a(None, runner)
    )
    got, seconds, native, native_seconds = _run_pair(
        engine,
        lambda xp, x, y: matmul(x, y, precision=precision, moduli=moduli, mode=mode),
        lambda xp, x, y: x @ y,
        a,
        b,
    )
    rows = rng.choice(size, samples)
    cols = rng.choice(size, samples)
    errors = []
    native_errors = []
    for i, j in zip(rows, cols, strict=True):
        exact = exact_matmul(a[i : i + 1], b[:, j : j + 1])
        errors.append(max_relative_error(got[i : i + 1, j : j + 1], exact))
        native_errors.append(max_relative_error(native[i : i + 1, j : j + 1], exact))
    op = {"float64": "dgemm", "complex128": "zgemm", "float32": "sgemm", "complex64": "cgemm"}
    shown = plan.describe()
    system = None if plan.native else plan.phase_a_system
    if system.gaussian:  # a complex product's stand-in (same bits)
        shown += f" ({system.count} Gaussian)"
    return CheckResult(
        op=op[dtype.name],
        engine=engine,
        shape=f"{size}x{size}x{size}",
        moduli=shown,
        mode=mode,
        error=max(errors),
        native_error=max(native_errors),
        seconds=seconds,
        native_seconds=native_seconds,
    )


@dataclass(frozen=True)
class FFTCheckResult(CheckResult):
    """A checked 3-D FFT (errors are relative L2 norms)."""

    reference: str = ""

    @property
    def passed(self) -> bool:
        """Within 1.5x of the native FFT's error (the library's accuracy contract)."""
        return self.error <= 1.5 * self.native_error


def run_fft_check(size: int = 32, *, seed: int = 0) -> FFTCheckResult:
    """3-D complex FFT of a random cube on the best engine, against long double."""
    from .fourier.api import fftn as oz_fftn
    from .fourier.cache import get_plan
    from .options import FFTOptions

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((size,) * 3) + 1j * rng.standard_normal((size,) * 3)
    engine = best_engine_name()
    got, seconds, native, native_seconds = _run_pair(
        engine, lambda xp, v: oz_fftn(v), lambda xp, v: xp.fft.fftn(v), x
    )
    reference = {"pyfftw": "pyfftw", "numpy": "numpy pocketfft"}[long_double_source()]
    ref = long_double_fftn(x)
    return FFTCheckResult(
        op="zfft3d",
        engine=engine,
        shape=f"{size}x{size}x{size}",
        moduli="-",  # the default fixed-point scheme has digits, not moduli
        mode=get_plan(size, FFTOptions()).scheme,
        error=relative_l2_error(got, ref),
        native_error=relative_l2_error(native, ref),
        seconds=seconds,
        native_seconds=native_seconds,
        reference=f"{reference}, clongdouble",
    )
