"""Independent references: exact products in Python integers, test matrices.

Used by the tests and by ``ozfft check``; nothing here is on a hot path.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["exact_matmul", "max_relative_error", "phi_matrix", "to_scaled_ints"]


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
