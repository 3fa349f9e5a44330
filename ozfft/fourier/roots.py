"""Roots of unity from a high-precision source (mpmath), never from float64 trig.

``fixed_roots(n, bits)[m] = round(2**bits cos(2 pi m / n)) - i round(2**bits sin(2 pi m / n))``
as exact int64 pairs (the DFT kernel ``exp(-2 pi i m / n)``), and ``float_roots(n)`` the
correctly rounded complex128 values. Conjugate symmetry halves the evaluations.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["MAX_ROOT_BITS", "fixed_roots", "float_roots"]

#: int64 fixed point: |value| <= 2**bits, bits <= 61 leaves headroom
MAX_ROOT_BITS = 61


def _mp():
    try:
        import mpmath
    except ImportError as exc:  # pragma: no cover - mpmath is a dependency
        raise ImportError("ozfft's FFT plans need mpmath: pip install mpmath") from exc
    return mpmath


def _cos_sin(n: int, prec: int):
    """(cos, sin) of 2 pi m / n for m = 0 .. n//2 as mpf at ``prec`` bits."""
    mpmath = _mp()
    with mpmath.workprec(prec):
        vals = []
        for m in range(n // 2 + 1):
            x = mpmath.mpf(2 * m) / n  # angle / pi
            vals.append((mpmath.cospi(x), mpmath.sinpi(x)))
    return vals


@lru_cache(maxsize=64)
def fixed_roots(n: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 ``(re, im)`` of ``round(2**bits exp(-2 pi i m / n))``, m = 0 .. n-1."""
    if not 0 <= bits <= MAX_ROOT_BITS:
        raise ValueError(f"bits must be in [0, {MAX_ROOT_BITS}], got {bits}")
    mpmath = _mp()
    scale = mpmath.mpf(2) ** bits
    re = np.empty(n, np.int64)
    im = np.empty(n, np.int64)
    with mpmath.workprec(bits + 64):
        for m, (c, s) in enumerate(_cos_sin(n, bits + 64)):
            re[m] = int(mpmath.nint(c * scale))
            im[m] = -int(mpmath.nint(s * scale))
    for m in range(n // 2 + 1, n):  # exp(-2 pi i (n - m)/n) = conj(exp(-2 pi i m/n))
        re[m] = re[n - m]
        im[m] = -im[n - m]
    re.setflags(write=False)
    im.setflags(write=False)
    return re, im


@lru_cache(maxsize=64)
def float_roots(n: int) -> np.ndarray:
    """Correctly rounded complex128 ``exp(-2 pi i m / n)``, m = 0 .. n-1."""
    out = np.empty(n, np.complex128)
    for m, (c, s) in enumerate(_cos_sin(n, 96)):
        out[m] = complex(float(c), -float(s))
    for m in range(n // 2 + 1, n):
        out[m] = out[n - m].conjugate()
    out.setflags(write=False)
    return out
