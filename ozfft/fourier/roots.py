"""Exact roots of unity: vectorised double-double candidates, certified, mpmath where unsure.

``fixed_roots(n, bits)[m] = nint(2**bits cos(2 pi m/n)) - i nint(2**bits sin(2 pi m/n))`` as
exact int64 pairs (the DFT kernel ``exp(-2 pi i m/n)``), and ``float_roots(n)`` the correctly
rounded complex128 values. ``nint`` is :func:`mpmath.nint`: nearest integer, exact ties to
even. The results are those of a direct high-precision mpmath evaluation; float64 trig is
never trusted.

Method
------
1. Symmetry. Only a core ``m = 0 .. L`` is evaluated: ``L = n//8`` when ``4 | n``
   (``w_m = i conj(w_{n/4-m})`` swaps cos and sin), ``n//4`` when ``n = 2 (mod 4)``
   (``w_{n/2-m} = -conj(w_m)``), ``n//2`` when n is odd; conjugate symmetry
   ``w_{n-m} = conj(w_m)`` gives the rest. Rounding (``nint`` and round-to-nearest-even)
   commutes with negation, so the symmetries hold exactly for the rounded values.
2. Candidate. ``m = a B + b`` with ``B = ceil(sqrt(L + 1))``; two small tables
   ``T1[a] = exp(2 pi i aB/n)``, ``T0[b] = exp(2 pi i b/n)`` come from mpmath at 160 bits,
   rounded to double-double (``hi + lo``, ``hi = fl(hi + lo)``); the core is the outer
   product ``T1[a] T0[b]``, one complex double-double multiplication per value (Dekker's
   exact product, exact two-sums, NumPy in cache-sized blocks, no Python loop over m).
3. Certificate. With ``u = 2**-53`` and every component of magnitude <= 1: a table entry is
   within ``u**2 + 2**-150 <= 2 u**2`` of the truth; table errors move a product component
   by <= ``2 (2 u**2 + 2 u**2 (1 + u)) <= 9 u**2``; the dropped ``lo*lo`` terms are
   <= ``2 u**2``; the four rounded cross products (each <= u) err by <= ``4 u**2``; the seven
   terms of the low-order sum (each <= 1.01 u) take six roundings of <= ``7.1 u**2`` each,
   <= ``43 u**2``; ``two_prod``/``two_sum`` are exact. So every candidate component is
   within ``58 u**2 < 2**-100`` of the true value; we use ``_DD_ERROR = 2**-90`` (1024x
   slack). A fixed value ``2**bits x`` rounds certainly when its computed distance to the
   nearest half-integer exceeds ``2 (2**bits _DD_ERROR + 2**-52)`` (the ``2**-52`` covers
   the one rounding in forming the fractional part); a float value when the distance of
   ``hi + lo`` to the midpoint between ``hi`` and its neighbour (on ``lo``'s side) exceeds
   ``2 _DD_ERROR``. Anything else -- in practice only exact ties, i.e. ``bits = 0`` and a
   value ``+-1/2`` -- is recomputed by mpmath with doubling precision until decided; rational
   values (Niven: ``0, +-1/2, +-1``) are handled exactly. The chance that an irrational
   value needs the fallback is about ``2**(bits - 88)`` per value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from functools import lru_cache

import numpy as np

__all__ = ["MAX_ROOT_BITS", "fixed_roots", "float_roots"]

#: int64 fixed point: |value| <= 2**bits, bits <= 61 leaves headroom
MAX_ROOT_BITS = 61

#: certified absolute error bound of a double-double candidate component (see module doc)
_DD_ERROR = 2.0**-90
#: working precision (bits) of the mpmath tables
_TABLE_PREC = 160
#: target number of values per NumPy block (keeps the temporaries in cache)
_BLOCK = 1 << 15
#: precision cap of the mpmath fallback; reaching it means something is badly wrong
_MAX_PREC = 1 << 16
_SPLITTER = float(2**27 + 1)
#: fallback counters (values recomputed by mpmath), for diagnostics
_STATS = {"fixed": 0, "float": 0}


def _mp():
    try:
        import mpmath
    except ImportError as exc:  # pragma: no cover - mpmath is a dependency
        raise ImportError("ozfft's FFT plans need mpmath: pip install mpmath") from exc
    return mpmath


def _core_length(n: int) -> int:
    """Last index L of the evaluated core ``0 .. L`` (see step 1 of the module doc)."""
    if n % 4 == 0:
        return n // 8
    if n % 2 == 0:
        return n // 4
    return n // 2


# --- exact rational values (Niven: cos of a rational multiple of pi is rational only at
# --- 0, +-1/2, +-1) ------------------------------------------------------------------------

_RATIONAL_COS = {
    Fraction(0): Fraction(1),
    Fraction(1, 2): Fraction(-1),
    Fraction(1, 3): Fraction(-1, 2),
    Fraction(2, 3): Fraction(-1, 2),
    Fraction(1, 4): Fraction(0),
    Fraction(3, 4): Fraction(0),
    Fraction(1, 6): Fraction(1, 2),
    Fraction(5, 6): Fraction(1, 2),
}


def _exact_value(m: int, n: int, sine: bool) -> Fraction | None:
    """``cos(2 pi m/n)`` (or ``sin``) as a Fraction when it is rational, else None."""
    turns = Fraction(m, n) % 1
    if sine:  # sin(2 pi t) = cos(2 pi (1/4 - t))
        turns = (Fraction(1, 4) - turns) % 1
    return _RATIONAL_COS.get(turns)


def _mp_value(mpmath, m: int, n: int, sine: bool):
    """``cos(2 pi m/n)`` or ``sin`` at the current mpmath precision (error < 8 ulp of 1)."""
    x = mpmath.mpf(2 * m) / n
    return mpmath.sinpi(x) if sine else mpmath.cospi(x)


def _mp_fixed(m: int, n: int, bits: int, sine: bool) -> int:
    """``nint(2**bits cos(2 pi m/n))`` (or sin), decided by mpmath at rising precision."""
    mpmath = _mp()
    exact = _exact_value(m, n, sine)
    if exact is not None:  # the only possible exact ties: bits = 0, value +-1/2
        with mpmath.workprec(bits + 8):
            return int(mpmath.nint(mpmath.mpf(exact.numerator * 2**bits) / exact.denominator))
    prec = bits + 96
    while prec <= _MAX_PREC:
        with mpmath.workprec(prec):
            v = mpmath.ldexp(_mp_value(mpmath, m, n, sine), bits)
            k = mpmath.nint(v)
            if abs(abs(v - k) - mpmath.mpf(0.5)) > mpmath.ldexp(1, bits + 4 - prec):
                return int(k)
        prec *= 2
    raise ArithmeticError(f"cannot round the root {m}/{n} at {bits} bits")  # pragma: no cover


def _mp_float(m: int, n: int, sine: bool) -> float:
    """Correctly rounded float64 ``cos(2 pi m/n)`` (or sin), by mpmath at rising precision."""
    mpmath = _mp()
    exact = _exact_value(m, n, sine)
    if exact is not None:
        return float(exact)
    prec = 128
    while prec <= _MAX_PREC:
        with mpmath.workprec(prec):
            v = _mp_value(mpmath, m, n, sine)
            hi = float(v)
            side = math.inf if v > hi else -math.inf
            mid = (mpmath.mpf(hi) + mpmath.mpf(math.nextafter(hi, side))) / 2
            if abs(v - mid) > mpmath.ldexp(1, 4 - prec):
                return hi
        prec *= 2
    raise ArithmeticError(f"cannot round the root {m}/{n} to float64")  # pragma: no cover


# --- double-double arithmetic ------------------------------------------------------------


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp split ``a = hi + lo`` into two 26-bit halves (exact)."""
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth: ``s + t = a + b`` exactly, ``s = fl(a + b)``."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod_err(a, a1, a2, b, b1, b2, p):
    """Dekker: the exact error ``a b - p`` of ``p = fl(a b)`` from presplit operands."""
    return ((a1 * b1 - p) + a1 * b2 + a2 * b1) + a2 * b2


def _dd_table(values: list[tuple]) -> np.ndarray:
    """Rows ``(hi, lo, hi_1, hi_2)`` per raw mpf: nearest double-double and the split of hi."""
    from mpmath.libmp import from_float, mpf_sub, round_nearest, to_float

    out = np.empty((len(values), 4))
    for k, v in enumerate(values):
        hi = to_float(v, rnd=round_nearest)
        out[k, 0] = hi
        out[k, 1] = to_float(mpf_sub(v, from_float(hi), _TABLE_PREC), rnd=round_nearest)
    out[:, 2], out[:, 3] = _split(out[:, 0])
    return out


def _cos_sin_table(n: int, step: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Double-double tables of ``cos, sin (2 pi k step/n)``, k < count (mpmath, 160 bits)."""
    _mp()
    from mpmath.libmp import from_rational, mpf_cos_sin_pi, round_nearest

    pairs = [
        mpf_cos_sin_pi(from_rational(2 * k * step, n, _TABLE_PREC, round_nearest), _TABLE_PREC)
        for k in range(count)
    ]
    return _dd_table([c for c, _ in pairs]), _dd_table([s for _, s in pairs])


@lru_cache(maxsize=16)
def _tables(n: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(B, T1re, T1im, T0re, T0im)``: ``T1[a] = exp(2 pi i a B/n)``, ``T0[b] = exp(2 pi i b/n)``.

    ``B = ceil(sqrt(L + 1))`` so both tables hold about ``sqrt(L)`` entries.
    """
    count = _core_length(n) + 1
    base = math.isqrt(count - 1) + 1
    tabs = (*_cos_sin_table(n, base, (count - 1) // base + 1), *_cos_sin_table(n, 1, base))
    for t in tabs:
        t.setflags(write=False)
    return (base, *tabs)


def _core_blocks(n: int) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Blocks ``(start, cos_hi, cos_lo, sin_hi, sin_lo)`` of ``exp(2 pi i m/n)``, m = 0 .. L.

    Each block is an outer product ``T1[a0:a1] x T0``, flattened to consecutive m; every
    component is within ``_DD_ERROR`` of the truth (module doc, step 3).
    """
    count = _core_length(n) + 1
    base, c1, s1, c0, s0 = _tables(n)
    step = max(1, _BLOCK // base)
    for a0 in range(0, c1.shape[0], step):
        a1 = min(a0 + step, c1.shape[0])
        xr, xi = c1[a0:a1, :, None], s1[a0:a1, :, None]  # (rows, 4, 1)
        yr, yi = c0.T[:, None, :], s0.T[:, None, :]  # (4, 1, B)
        xrh, xrl, xr1, xr2 = xr[:, 0], xr[:, 1], xr[:, 2], xr[:, 3]
        xih, xil, xi1, xi2 = xi[:, 0], xi[:, 1], xi[:, 2], xi[:, 3]
        yrh, yrl, yr1, yr2 = yr
        yih, yil, yi1, yi2 = yi
        # real part: xr yr - xi yi
        p1 = xrh * yrh
        e1 = _two_prod_err(xrh, xr1, xr2, yrh, yr1, yr2, p1)
        p2 = xih * yih
        e2 = _two_prod_err(xih, xi1, xi2, yih, yi1, yi2, p2)
        s, t = _two_sum(p1, -p2)
        t = t + (e1 - e2)
        t = t + (xrh * yrl + xrl * yrh)
        t = t - (xih * yil + xil * yih)
        re_hi, re_lo = _two_sum(s, t)
        # imaginary part: xr yi + xi yr
        p1 = xrh * yih
        e1 = _two_prod_err(xrh, xr1, xr2, yih, yi1, yi2, p1)
        p2 = xih * yrh
        e2 = _two_prod_err(xih, xi1, xi2, yrh, yr1, yr2, p2)
        s, t = _two_sum(p1, p2)
        t = t + (e1 + e2)
        t = t + (xrh * yil + xrl * yih)
        t = t + (xih * yrl + xil * yrh)
        im_hi, im_lo = _two_sum(s, t)
        start = a0 * base
        size = min((a1 - a0) * base, count - start)
        yield start, *(v.reshape(-1)[:size] for v in (re_hi, re_lo, im_hi, im_lo))


def _round_fixed(hi: np.ndarray, lo: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(nint(2**bits (hi + lo)), certain)``: the candidate and where it is certified."""
    hs, ls = np.ldexp(hi, bits), np.ldexp(lo, bits)
    r1, r2 = np.rint(hs), np.rint(ls)
    s, _ = _two_sum(hs - r1, ls - r2)  # fractional part, |s| <= 1, exact up to 2**-53
    mag = np.abs(s)
    step = np.where(mag > 0.5, np.sign(s), 0.0)
    certain = np.abs(mag - 0.5) > 2 * (math.ldexp(_DD_ERROR, bits) + 2.0**-52)
    value = r1.astype(np.int64) + r2.astype(np.int64) + step.astype(np.int64)
    return value, certain


def _round_float(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Where ``hi`` is certainly the float64 nearest to the value that ``hi + lo`` approximates."""
    up = np.nextafter(hi, np.inf) - hi
    down = hi - np.nextafter(hi, -np.inf)
    gap = np.where(lo > 0, up, np.where(lo < 0, down, np.minimum(up, down)))
    return 0.5 * gap - np.abs(lo) > 2 * _DD_ERROR


def _unfold(re: np.ndarray, im: np.ndarray, n: int) -> None:
    """Fill ``m = L+1 .. n-1`` of ``re + i im = exp(-2 pi i m/n)`` from the core, in place."""
    f = _core_length(n) + 1
    if n % 4 == 0:  # w_m = -i conj(w_{n/4 - m}): re_m = -im_{m'}, im_m = -re_{m'}
        q = n // 4
        np.negative(im[q - f :: -1], out=re[f : q + 1])
        np.negative(re[q - f :: -1], out=im[f : q + 1])
        f = q + 1
    if n % 2 == 0:  # w_m = -conj(w_{n/2 - m})
        h = n // 2
        np.negative(re[h - f :: -1], out=re[f : h + 1])
        im[f : h + 1] = im[h - f :: -1]
        f = h + 1
    re[f:n] = re[n - f : 0 : -1]  # w_m = conj(w_{n - m})
    np.negative(im[n - f : 0 : -1], out=im[f:n])


def _check_n(n: int) -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


@lru_cache(maxsize=64)
def fixed_roots(n: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 ``(re, im)`` of ``nint(2**bits exp(-2 pi i m / n))``, m = 0 .. n-1."""
    if not 0 <= bits <= MAX_ROOT_BITS:
        raise ValueError(f"bits must be in [0, {MAX_ROOT_BITS}], got {bits}")
    n, bits = _check_n(n), int(bits)
    re = np.empty(n, np.int64)
    im = np.empty(n, np.int64)
    for start, c_hi, c_lo, s_hi, s_lo in _core_blocks(n):
        stop = start + c_hi.size
        c, c_ok = _round_fixed(c_hi, c_lo, bits)
        s, s_ok = _round_fixed(s_hi, s_lo, bits)
        re[start:stop] = c
        im[start:stop] = -s
        for k in np.flatnonzero(~c_ok):
            re[start + k] = _mp_fixed(start + int(k), n, bits, sine=False)
            _STATS["fixed"] += 1
        for k in np.flatnonzero(~s_ok):
            im[start + k] = -_mp_fixed(start + int(k), n, bits, sine=True)
            _STATS["fixed"] += 1
    _unfold(re, im, n)
    re.setflags(write=False)
    im.setflags(write=False)
    return re, im


@lru_cache(maxsize=64)
def float_roots(n: int) -> np.ndarray:
    """Correctly rounded complex128 ``exp(-2 pi i m / n)``, m = 0 .. n-1."""
    n = _check_n(n)
    out = np.empty(n, np.complex128)
    re, im = out.real, out.imag
    for start, c_hi, c_lo, s_hi, s_lo in _core_blocks(n):
        stop = start + c_hi.size
        c_ok, s_ok = _round_float(c_hi, c_lo), _round_float(s_hi, s_lo)
        if start == 0:  # w_0 = 1 exactly (the zero sine defeats the gap test)
            c_hi[0], s_hi[0], c_ok[0], s_ok[0] = 1.0, 0.0, True, True
        re[start:stop] = c_hi
        im[start:stop] = -s_hi  # -0.0 at m = 0, as complex(cos, -sin) gives
        for k in np.flatnonzero(~c_ok):
            re[start + k] = _mp_float(start + int(k), n, sine=False)
            _STATS["float"] += 1
        for k in np.flatnonzero(~s_ok):
            im[start + k] = -_mp_float(start + int(k), n, sine=True)
            _STATS["float"] += 1
    _unfold(re, im, n)
    out.setflags(write=False)
    return out
