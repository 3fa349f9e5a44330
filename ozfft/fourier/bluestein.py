"""Bluestein's chirp-z plan for lengths with a large prime factor.

``X_k = c_k sum_j (x_j c_j) conj(c_{k-j})`` with the chirp ``c_j = exp(-i pi j**2 / n)``
(angles reduced exactly mod 2n): a cyclic convolution of length ``m >= 2n - 1`` (a power
of two), done with two length-``m`` transforms of an inner plan and the spectrum of the
conjugate chirp, which ozfft itself computes once per plan on the NumPy engine.

The chirp products are float64 :func:`~ozfft.fourier.execute.cmul` (the same IEEE
operations on numpy and cupy); the inner plan is a fixed-point plan (one pass or
four-step) unless a moduli count is forced, then an Ozaki-II stage plan. The plan's
scheme is its inner plan's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engines.base import Engine
from .execute import ColumnsExecutor, FFTExecutor, cmul
from .plan import BluesteinPlan, FFTPlan, bluestein_length
from .roots import float_roots

__all__ = ["BluesteinExecutor", "BluesteinPlan", "bluestein_length", "build_bluestein_plan"]


def build_bluestein_plan(n: int, inner: FFTPlan, inner_executor: FFTExecutor) -> FFTPlan:
    """The plan of length ``n`` running Bluestein's algorithm on ``inner``; the kernel
    spectrum comes from ``inner_executor``, the inner plan prepared for the NumPy engine."""
    if inner_executor.plan is not inner:
        raise ValueError("inner_executor must run the inner plan")
    m = inner.n
    roots2n = float_roots(2 * n)
    jj = np.arange(n, dtype=np.int64)
    chirp = roots2n[(jj * jj) % (2 * n)]  # exp(-i pi j^2 / n), exponent exact mod 2n
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = chirp.conj()
    kernel[m - n + 1 :] = chirp[1:][::-1].conj()
    kernel_hat = np.ascontiguousarray(inner_executor.forward(kernel[:, None], 0)[:, 0])
    chirp.setflags(write=False)
    kernel_hat.setflags(write=False)
    blue = BluesteinPlan(n, m, chirp, kernel_hat, inner)
    return FFTPlan(
        n,
        inner.scheme,
        (),
        (),
        num_moduli=inner.num_moduli,
        digit_format=inner.digit_format,
        bluestein=blue,
    )


class BluesteinExecutor(ColumnsExecutor):
    """A Bluestein plan on any engine: the chirp products on the engine's arrays, the two
    inner transforms through ``inner`` (the inner plan prepared for the same engine)."""

    def __init__(self, engine: Engine, plan: FFTPlan, inner: FFTExecutor) -> None:
        if plan.bluestein is None:
            raise ValueError("not a Bluestein plan")
        if inner.plan is not plan.bluestein.inner:
            raise ValueError("inner must run the plan's inner plan")
        self.engine = engine
        self.plan = plan
        self._inner = inner
        self._arrays: tuple[Any, Any] | None = None

    def _xp(self):
        return self.engine.xp

    def transform(self, x: Any) -> Any:
        """Forward DFT of each column of complex128 ``x`` ``(n, B)``."""
        xp = self.engine.xp
        blue = self.plan.bluestein
        if x.shape[1] == 0:
            return x.astype(np.complex128, copy=True)
        if self._arrays is None:
            self._arrays = (xp.asarray(blue.chirp), xp.asarray(blue.kernel_hat))
        chirp, kernel_hat = self._arrays
        n, batch = x.shape
        a = xp.zeros((blue.m, batch), xp.complex128)
        a[:n] = cmul(xp, x, chirp[:, None])
        spec = self._inner.forward(a, 0)
        spec = cmul(xp, spec, kernel_hat[:, None])
        conv = xp.conj(self._inner.forward(xp.conj(spec), 0)) / blue.m
        return cmul(xp, conv[:n], chirp[:, None])
