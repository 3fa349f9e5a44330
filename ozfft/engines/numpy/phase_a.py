"""Stage 3 on numpy: per-modulus exact integer products (Phase A).

``u_i = (A'_i Bt'_i^T) mod p_i`` for residue matrices with ``|r| <= 128``, computed
exactly with :func:`exact_int_matmul` (SGEMM on k-blocks of 1024, summed in float64),
which covers the k-blocking beyond ``2**17`` that an INT32 accumulator needs.

Complex operands use Karatsuba on residues (3 products per modulus):
``T1 = Ar Br``, ``T2 = Ai Bi``, ``T3 = (Ar + Ai)(Br + Bi)`` with the sums reduced
mod p back into INT8 range; ``Re = T1 - T2``, ``Im = T3 - T1 - T2`` (mod p).
``complex_method="4m"`` uses the 4-product form; both give identical residues. On a
Gaussian system (``complex_method="gaussian"``, :mod:`ozfft.ozaki.residue_system`) two
products per modulus: ``T+ = A+ B+``, ``T- = A- B-`` for ``X+- = rmod(Xr +- j Xi)``
(``j**2 = -1 mod p``); ``Re = (T+ + T-) / 2``, ``Im = (T+ - T-) / (2 j)`` (mod p).

With an FP8 residue system (:func:`~ozfft.ozaki.residue_system.fp8_system`) each product
is formed as the FP8 tensor cores form it: the residues modulo ``m = s**d`` split into
``d`` balanced base-``s`` digits of magnitude at most 16 (exact in e4m3), the digit
products ``P_t = sum_{a+b=t} C_a C'_b^T`` (every term at most 256 in magnitude), and
``sum_t s**t P_t``, which is congruent to the product modulo ``m``. Every quantity is an
exact integer, so the residues ``u_i`` are those of the exact product whichever engine
forms them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from ...ozaki.residue_system import ResidueSystem
from ..base import ResidueStack, complex_products
from .exact import exact_int_matmul
from .residues import CHUNK, rmod

__all__ = ["modular_products"]

_MAX_RESIDUE_PRODUCT = 128 * 128


def _mod_nonneg(t: np.ndarray, p: int, dtype: type = np.uint8) -> np.ndarray:
    """``t mod p`` in ``[0, p)`` as ``dtype`` for integer-valued ``t`` (float32 ``|t| <=
    2**24`` or float64 ``|t| < 2**50``), in cache-sized chunks.

    ``q = floor(t * fl(1/p))`` is off by at most one (relative error < 2**-23), and
    ``t - q p`` is exact (integers below the format's 2**prec), so one conditional
    correction on each side gives the exact residue.
    """
    flat = t.reshape(-1)
    out = np.empty(flat.shape, dtype)
    inv = flat.dtype.type(1.0 / p)
    for start in range(0, flat.size, CHUNK):
        r = flat[start : start + CHUNK]
        q = np.multiply(r, inv)
        np.floor(q, out=q)
        q *= p
        r = r - q
        r[r < 0] += p
        r[r >= p] -= p
        out[start : start + CHUNK] = r
    return out.reshape(t.shape)


def _int8_product(x: np.ndarray, yt: np.ndarray) -> np.ndarray:
    return exact_int_matmul(x, np.swapaxes(yt, -1, -2), _MAX_RESIDUE_PRODUCT)


def _int8_product64(x: np.ndarray, yt: np.ndarray) -> np.ndarray:
    """Exact product in float64, so sums and differences of products stay exact."""
    return _int8_product(x, yt).astype(np.float64, copy=False)


def _fp8_product(x: np.ndarray, yt: np.ndarray, system: ResidueSystem, i: int) -> np.ndarray:
    """``sum_t s**t P_t`` (float64, exact) for the symmetric residues ``x`` and ``yt``
    modulo ``m_i = s**d``: congruent to ``x yt^T`` modulo ``m_i``."""
    s, d = system.bases[i], system.digits[i]
    k = x.shape[-1]
    # |sum_t s**t P_t| <= 256 k sum_t (t + 1) s**t, three of them in a complex part: exact in
    # float64 and within _mod_nonneg's |t| < 2**50
    if 3 * 256 * k * sum((t + 1) * s**t for t in range(d)) >= 2**50:
        raise ValueError(f"k = {k} is too long for the FP8 Phase A's float64 combination")
    cx, cy = system.split_array(i, x), system.split_array(i, yt)
    batch = np.broadcast_shapes(x.shape[:-2], yt.shape[:-2])
    total = np.zeros((*batch, x.shape[-2], yt.shape[-2]))
    for t in range(d):
        for a in range(t + 1):
            p = exact_int_matmul(cx[a], np.swapaxes(cy[t - a], -1, -2), system.digit_max**2)
            total += p.astype(np.float64, copy=False) * float(s**t)
    return total


def _product_rules(moduli: ResidueSystem, i: int) -> tuple[Callable, Callable]:
    """The exact product of modulus ``i``'s residue planes, as Phase A forms it, and the
    same in float64 (sums and differences of products stay exact)."""
    if moduli.phase_a == "fp8":
        product = partial(_fp8_product, system=moduli, i=i)
        return product, product
    return _int8_product, _int8_product64


def _reduced_sum(x: np.ndarray, y: np.ndarray, p: int, c: int = 1) -> np.ndarray:
    """``rmod(x + c y, p)`` as float32 (symmetric residues; exact in float64)."""
    s = x.astype(np.float64) + float(c) * y.astype(np.float64)
    return rmod(s, p).astype(np.float32)


def _gaussian_parts(product, ar, ai, br, bi, p: int, roots: tuple[int, int, int]):
    """``Re`` and ``Im`` of the complex product, congruent mod p (float64 integers, ``|.| <
    2 p**2``; the caller reduces them once), from the two products ``T+- = rmod(Ar +- j Ai)
    rmod(Br +- j Bi)^T``: ``(T+ + T-) / 2`` and ``(T+ - T-) / (2 j)``."""
    j, inv2, inv2j = roots
    tp, tm = (
        _mod_nonneg(product(_reduced_sum(ar, ai, p, c), _reduced_sum(br, bi, p, c)), p, np.int64)
        for c in (j, -j)
    )
    return ((tp + tm) * inv2).astype(np.float64), ((tp - tm) * inv2j).astype(np.float64)


def modular_products(
    a: ResidueStack,
    bt: ResidueStack,
    moduli: ResidueSystem,
    *,
    complex_method: str = "karatsuba",
) -> np.ndarray:
    """``(N, ..., m, n)`` residues of the product (``(N, 2, ...)`` for complex): uint8 for
    the INT8 moduli, uint16 for FP8 systems (moduli up to 32**3)."""
    if a.is_complex != bt.is_complex:
        raise ValueError("both residue stacks must be real or both complex")
    is_complex = a.is_complex
    if is_complex:
        complex_products(moduli, complex_method)
    ra, rbt = a.planes, bt.planes
    dtype = np.uint8 if max(moduli.moduli) <= 256 else np.uint16
    out = None
    for i, p in enumerate(moduli.moduli):
        _product, _product64 = _product_rules(moduli, i)
        if not is_complex:
            u = _mod_nonneg(_product(ra[i], rbt[i]), p, dtype)
        else:
            ar, ai = ra[i, 0], ra[i, 1]
            br, bi = rbt[i, 0], rbt[i, 1]
            if complex_method == "gaussian":
                re, im = _gaussian_parts(_product, ar, ai, br, bi, p, moduli.roots[i])
            elif complex_method == "karatsuba":
                t1 = _product64(ar, br)
                t2 = _product64(ai, bi)
                t3 = _product64(_reduced_sum(ar, ai, p), _reduced_sum(br, bi, p))
                re = t1 - t2
                im = t3 - t1 - t2
            else:
                re = _product64(ar, br) - _product64(ai, bi)
                im = _product64(ar, bi) + _product64(ai, br)
            u = np.stack([_mod_nonneg(re, p, dtype), _mod_nonneg(im, p, dtype)])
        if out is None:
            out = np.empty((moduli.count, *u.shape), dtype)
        out[i] = u
    return out
