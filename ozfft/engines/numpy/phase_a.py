"""Stage 3 on numpy: per-modulus exact integer products (Phase A).

``u_i = (A'_i Bt'_i^T) mod p_i`` for residue matrices with ``|r| <= 128``, computed
exactly with :func:`exact_int_matmul` (SGEMM on k-blocks of 1024, summed in float64),
which covers the k-blocking beyond ``2**17`` that an INT32 accumulator needs.

Complex operands use Karatsuba on residues (3 products per modulus):
``T1 = Ar Br``, ``T2 = Ai Bi``, ``T3 = (Ar + Ai)(Br + Bi)`` with the sums reduced
mod p back into INT8 range; ``Re = T1 - T2``, ``Im = T3 - T1 - T2`` (mod p).
``complex_method="4m"`` uses the 4-product form; both give identical residues.
"""

from __future__ import annotations

import numpy as np

from ...ozaki.moduli import ModuliSet
from ..base import ResidueStack
from .exact import exact_int_matmul
from .residues import CHUNK, rmod

__all__ = ["COMPLEX_METHODS", "modular_products"]

COMPLEX_METHODS = ("karatsuba", "4m")
_MAX_RESIDUE_PRODUCT = 128 * 128


def _mod_nonneg(t: np.ndarray, p: int) -> np.ndarray:
    """``t mod p`` in ``[0, p)`` as uint8 for integer-valued ``t`` (float32 ``|t| <= 2**24``
    or float64 ``|t| < 2**50``), in cache-sized chunks.

    ``q = floor(t * fl(1/p))`` is off by at most one (relative error < 2**-23), and
    ``t - q p`` is exact (integers below the format's 2**prec), so one conditional
    correction on each side gives the exact residue.
    """
    flat = t.reshape(-1)
    out = np.empty(flat.shape, np.uint8)
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


def _product(x: np.ndarray, yt: np.ndarray) -> np.ndarray:
    return exact_int_matmul(x, np.swapaxes(yt, -1, -2), _MAX_RESIDUE_PRODUCT)


def _product64(x: np.ndarray, yt: np.ndarray) -> np.ndarray:
    """Exact product in float64, so sums and differences of products stay exact."""
    return _product(x, yt).astype(np.float64, copy=False)


def _reduced_sum(x: np.ndarray, y: np.ndarray, p: int) -> np.ndarray:
    s = x.astype(np.float64) + y
    return rmod(s, p).astype(np.float32)


def modular_products(
    a: ResidueStack, bt: ResidueStack, moduli: ModuliSet, *, complex_method: str = "karatsuba"
) -> np.ndarray:
    """``(N, ..., m, n)`` uint8 residues of the product (``(N, 2, ...)`` for complex)."""
    if complex_method not in COMPLEX_METHODS:
        raise ValueError(f"complex_method must be one of {COMPLEX_METHODS}, got {complex_method!r}")
    if a.is_complex != bt.is_complex:
        raise ValueError("both residue stacks must be real or both complex")
    is_complex = a.is_complex
    ra, rbt = a.planes, bt.planes
    out = None
    for i, p in enumerate(moduli.moduli):
        if not is_complex:
            u = _mod_nonneg(_product(ra[i], rbt[i]), p)
        else:
            ar, ai = ra[i, 0], ra[i, 1]
            br, bi = rbt[i, 0], rbt[i, 1]
            if complex_method == "karatsuba":
                t1 = _product64(ar, br)
                t2 = _product64(ai, bi)
                t3 = _product64(_reduced_sum(ar, ai, p), _reduced_sum(br, bi, p))
                re = t1 - t2
                im = t3 - t1 - t2
            else:
                re = _product64(ar, br) - _product64(ai, bi)
                im = _product64(ar, bi) + _product64(ai, br)
            u = np.stack([_mod_nonneg(re, p), _mod_nonneg(im, p)])
        if out is None:
            out = np.empty((moduli.count, *u.shape), np.uint8)
        out[i] = u
    return out
