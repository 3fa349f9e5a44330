"""Independent references: exact products in Python integers, long-double transforms,
test matrices, and the error measures that compare against them.

Used by the tests, by ``ozfft check`` and by ``ozfft bench``; nothing here is on a hot
path, and nothing here uses ozfft's own engines (a reference must not share the code
it checks).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

__all__ = [
    "correctly_rounded_fraction",
    "exact_matmul",
    "exact_parts",
    "long_double_fftn",
    "long_double_rfftn",
    "long_double_source",
    "max_relative_error",
    "phi_matrix",
    "relative_l2_error",
    "to_scaled_ints",
]


def phi_matrix(rng: np.random.Generator, shape, phi: float, dtype=np.float64) -> np.ndarray:
    """The papers' test matrices ``(U(0,1) - 0.5) * exp(phi * N(0,1))`` (complex: per part)."""
    dtype = np.dtype(dtype)

    def real(shape):
        return (rng.random(shape) - 0.5) * np.exp(phi * rng.standard_normal(shape))

    if dtype.kind == "c":
        return (real(shape) + 1j * real(shape)).astype(dtype)
    return real(shape).astype(dtype)


def to_scaled_ints(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact ``x = ints * 2**-shift`` with an object array of Python ints (real ``x``)."""
    x = np.asarray(x, dtype=np.float64)
    _, exps = np.frexp(x[x != 0]) if np.any(x != 0) else (None, np.array([0]))
    shift = max(0, 53 - int(exps.min()))
    ints = np.empty(x.shape, dtype=object)
    flat = ints.reshape(-1)
    for i, v in enumerate(x.reshape(-1).tolist()):
        num, den = v.as_integer_ratio()
        flat[i] = num * ((1 << shift) // den)
    return ints, shift


def exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact ``a @ b`` of 2-D real or complex arrays as an object array of Fractions."""
    a = np.asarray(a)
    b = np.asarray(b)
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        ar, ai = exact_parts(a)
        br, bi = exact_parts(b)
        re = _int_matmul(ar, br, "sub", ai, bi)
        im = _int_matmul(ar, bi, "add", ai, br)
        return np.vectorize(lambda r, i: (r, i), otypes=[object])(re, im)
    (ai, sa), (bi, sb) = to_scaled_ints(a), to_scaled_ints(b)
    prod = ai.dot(bi)
    den = 1 << (sa + sb)
    return np.vectorize(lambda v: Fraction(v, den), otypes=[object])(prod)


def exact_parts(x: np.ndarray):
    """``(re, im)`` as (ints, shift) pairs for exact complex arithmetic."""
    x = np.asarray(x, dtype=np.complex128)
    return to_scaled_ints(x.real), to_scaled_ints(x.imag)


def _int_matmul(x1, y1, op, x2, y2):
    (xi1, sx1), (yi1, sy1) = x1, y1
    (xi2, sx2), (yi2, sy2) = x2, y2
    p1 = xi1.dot(yi1)
    p2 = xi2.dot(yi2)
    s1, s2 = sx1 + sy1, sx2 + sy2
    s = max(s1, s2)
    p1 = p1 * (1 << (s - s1))
    p2 = p2 * (1 << (s - s2))
    tot = p1 - p2 if op == "sub" else p1 + p2
    den = 1 << s
    return np.vectorize(lambda v: Fraction(v, den), otypes=[object])(tot)


def max_relative_error(approx: np.ndarray, exact: np.ndarray) -> float:
    """``max_ij |approx - exact| / |exact|`` (exact zeros use absolute error).

    ``exact`` holds Fractions (real) or ``(re, im)`` Fraction pairs (complex; the
    error is the max over both parts, as the papers report).
    """
    approx = np.asarray(approx)
    worst = Fraction(0)
    for got, ref in zip(approx.reshape(-1).tolist(), exact.reshape(-1).tolist(), strict=True):
        pairs = [(got.real, ref[0]), (got.imag, ref[1])] if isinstance(ref, tuple) else [(got, ref)]
        for g, r in pairs:
            err = abs(Fraction(g) - r)
            rel = err / abs(r) if r != 0 else err
            worst = max(worst, rel)
    return float(worst)


# -- transforms ------------------------------------------------------------------------
# The FFT reference of docs/numerics.md ("The FFT on the same engine"): the DFT
# X_k = sum_j x_j exp(-2 pi i j.k / n) evaluated in long double. On x86-64 that is the
# 80-bit format (64-bit significand, unit roundoff 2**-64), eleven bits below float64's
# 2**-53, so its own error is negligible next to a float64 transform's.


def long_double_source() -> str:
    """Which library :func:`long_double_fftn` uses (``"pyfftw"`` or ``"numpy"``)."""
    try:
        import pyfftw.interfaces.numpy_fft  # noqa: F401
    except ImportError:
        return "numpy"
    return "pyfftw"


def long_double_fftn(x: np.ndarray, axes: Sequence[int] | None = None) -> np.ndarray:
    """``fftn(x, axes=axes)`` in complex long double (all axes when ``axes`` is None).

    FFTW's long-double plans through pyfftw's numpy interface when installed, else
    numpy's pocketfft, which keeps ``clongdouble`` (numpy >= 2.0).
    """
    x = np.asarray(x).astype(np.clongdouble)
    if long_double_source() == "pyfftw":
        import pyfftw.interfaces.numpy_fft as fft_module
    else:
        fft_module = np.fft
    out = fft_module.fftn(x, axes=None if axes is None else tuple(axes))
    return np.asarray(out, dtype=np.clongdouble)


def long_double_rfftn(x: np.ndarray, axes: Sequence[int] | None = None) -> np.ndarray:
    """``rfftn(x, axes=axes)`` of real ``x`` in long double.

    The c2c transform of the real input, keeping the non-negative frequencies
    ``0 .. n // 2`` of the last transformed axis (the rest follow by Hermitian symmetry
    ``X_{-k} = conj(X_k)``), exactly what ``numpy.fft.rfftn`` returns.
    """
    x = np.asarray(x)
    if np.iscomplexobj(x):
        raise TypeError("long_double_rfftn needs real input")
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    last = axes[-1] % x.ndim
    full = long_double_fftn(x, axes)
    return np.take(full, np.arange(x.shape[last] // 2 + 1), axis=last)


def relative_l2_error(got: np.ndarray, ref: np.ndarray) -> float:
    """``||got - ref||_2 / ||ref||_2`` over all components, computed in long double."""
    got = np.asarray(got).astype(np.clongdouble)
    ref = np.asarray(ref).astype(np.clongdouble)
    if got.shape != ref.shape:
        raise ValueError(f"shapes differ: {got.shape} vs {ref.shape}")
    return float(np.linalg.norm((got - ref).ravel()) / np.linalg.norm(ref.ravel()))


def correctly_rounded_fraction(got: np.ndarray, ref: np.ndarray) -> float:
    """Fraction of components of ``got`` equal to ``fl64(ref)``, the reference rounded
    to float64 (round to nearest, each part separately).

    A complex component counts when its real and its imaginary part both equal the
    rounding of the reference's. With a long-double ``ref`` this is the fraction of
    correctly rounded outputs, up to the reference's own error (2**-64 relative): a
    component whose exact value lies that close to a float64 rounding midpoint may be
    misjudged. 1.0 means every output is the float64 nearest the exact DFT.
    """
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.dtype not in (np.float64, np.complex128):
        raise TypeError(f"got must be float64 or complex128, not {got.dtype}")
    if got.shape != ref.shape:
        raise ValueError(f"shapes differ: {got.shape} vs {ref.shape}")
    if got.size == 0:
        return 1.0
    if np.iscomplexobj(got) or np.iscomplexobj(ref):
        rounded = ref.astype(np.complex128)  # rounds the real and imaginary parts
        got = got.astype(np.complex128)
        same = (got.real == rounded.real) & (got.imag == rounded.imag)
    else:
        same = got == ref.astype(np.float64)
    return float(np.count_nonzero(same) / same.size)
