"""Bluestein's chirp-z plan for lengths with a large prime factor.

``X_k = c_k sum_j (x_j c_j) conj(c_{k-j})`` with the chirp ``c_j = exp(-i pi j**2 / n)``
(angles reduced exactly mod 2n): a cyclic convolution of length ``m >= 2n - 1`` (a power
of two), done with two length-``m`` transforms of an inner plan and the spectrum of the
conjugate chirp, which ozfft itself computes once per plan on the NumPy engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engines.select import numpy_engine
from .execute import StageExecutor
from .plan import FFTPlan
from .roots import float_roots

__all__ = ["BluesteinPlan", "bluestein_length", "build_bluestein_plan"]


@dataclass(frozen=True)
class BluesteinPlan:
    """Chirp-z for length ``n`` through a length-``m`` power-of-two ``inner`` plan."""

    n: int
    m: int
    chirp: np.ndarray  #: exp(-i pi j**2 / n), j < n, read-only
    kernel_hat: np.ndarray  #: FFT_m of the wrapped conjugate chirp, read-only
    inner: FFTPlan

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes + self.chirp.nbytes + self.kernel_hat.nbytes


def bluestein_length(n: int) -> int:
    """The convolution length: the smallest power of two ``>= 2n - 1``."""
    return 1 << (2 * n - 2).bit_length()


def build_bluestein_plan(n: int, inner: FFTPlan) -> FFTPlan:
    """The plan of length ``n`` running Bluestein's algorithm on ``inner``."""
    m = inner.n
    roots2n = float_roots(2 * n)
    jj = np.arange(n, dtype=np.int64)
    chirp = roots2n[(jj * jj) % (2 * n)]  # exp(-i pi j^2 / n), exponent exact mod 2n
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = chirp.conj()
    kernel[m - n + 1 :] = chirp[1:][::-1].conj()
    kernel_hat = StageExecutor(numpy_engine(), inner).transform(kernel[:, None])[:, 0]
    chirp.setflags(write=False)
    kernel_hat.setflags(write=False)
    blue = BluesteinPlan(n, m, chirp, kernel_hat, inner)
    return FFTPlan(n, "ozaki", (), (), num_moduli=inner.num_moduli, bluestein=blue)
