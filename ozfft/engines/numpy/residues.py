"""Stage 2 on numpy: exact symmetric residues of the scaled operand.

``a' = trunc(2**sigma a)`` (or its ``"nearest"`` rounding,
:func:`ozfft.ozaki.scaling.scaled_integers`) is an integer, ``|a'| < 2**79`` (the scaling keeps
``|a'| <= 2**((L-1)/2)``), that may exceed ``2**53``. Split it exactly into 24-bit
digits ``a' = d2 2**48 + d1 2**24 + d0`` (each subtraction is exact: the operands
share a's grid and the difference is < 2**53) and reduce per modulus in float64
without rounding:

    r = d2 (2**48 mod p) + d1 (2**24 mod p) + d0      |r| < 2**40, exact
    r = r - p * rint(r / p)                           symmetric residue

``rint(r * fl(1/p))`` equals round-half-even(r/p): the product's error (< 2**-12) is
far below the distance 1/(2p) of r/p from a half-integer for odd p, and for
p = 256 the product is exact. The result lies in ``[-p/2, p/2]`` and fits INT8
(+128 for p = 256 wraps to -128, the same class). The moduli of an FP8 residue system
(up to 32**3) give ``|r| < 2**47`` and an error below 2**-21, still far below 1/(2p) >=
2**-16 for odd p (powers of two are exact); their residues are exact in float32. The work
runs over cache-sized chunks, all moduli per chunk.
"""

from __future__ import annotations

import numpy as np

from ...ozaki.residue_system import ResidueSystem
from ...ozaki.residues import symmetric_int_residues
from ...ozaki.scaling import scaled_integers
from ..base import ResidueStack
from .scaling import real_parts

__all__ = [
    "CHUNK",
    "integer_residues",
    "residues",
    "rmod",
]

#: elements per cache-resident chunk
CHUNK = 1 << 16
_DIGIT = 2.0**24


def rmod(r: np.ndarray, p: int, tmp: np.ndarray | None = None) -> np.ndarray:
    """Symmetric residue (in place) of integer-valued float64 ``r``, ``|r| < 2**40`` (``<
    2**47`` for moduli up to 32**3)."""
    q = np.multiply(r, 1.0 / p, out=tmp)
    np.rint(q, out=q)
    q *= p
    r -= q
    return r


def _residues_real(
    x: np.ndarray, shift: np.ndarray, moduli: ResidueSystem, rounding: str
) -> np.ndarray:
    scaled = scaled_integers(np, x, shift[..., None].astype(np.int32), rounding).reshape(-1)
    d2 = np.trunc(scaled * _DIGIT**-2)
    rest = scaled - d2 * _DIGIT**2
    d1 = np.trunc(rest * _DIGIT**-1)
    d0 = rest - d1 * _DIGIT
    has_d2 = bool(d2.any())
    consts = [(float(pow(2, 48, p)), float(pow(2, 24, p)), p) for p in moduli.moduli]
    out = np.empty((moduli.count, scaled.size), np.float32)
    buf = np.empty(min(CHUNK, scaled.size))
    tmp = np.empty_like(buf)
    for start in range(0, scaled.size, CHUNK):
        stop = min(start + CHUNK, scaled.size)
        n = stop - start
        b, t = buf[:n], tmp[:n]
        for i, (c48, c24, p) in enumerate(consts):
            np.multiply(d1[start:stop], c24, out=b)
            b += d0[start:stop]
            if has_d2:
                np.multiply(d2[start:stop], c48, out=t)
                b += t
            out[i, start:stop] = rmod(b, p, t)
    return out.reshape(moduli.count, *x.shape)


def residues(
    x: np.ndarray, shift: np.ndarray, moduli: ResidueSystem, rounding: str = "trunc"
) -> ResidueStack:
    """float32 residue planes ``(N, ..., rows, k)``; complex input gives ``(N, 2, ...)``."""
    parts = [_residues_real(part, shift, moduli, rounding) for part in real_parts(x)]
    if len(parts) == 1:
        return ResidueStack(parts[0], is_complex=False)
    return ResidueStack(np.stack(parts, axis=1), is_complex=True)


def integer_residues(re: np.ndarray, im: np.ndarray, moduli: ResidueSystem) -> ResidueStack:
    """Residue stack ``(N, 2, ..., rows, k)`` (float32) of the integer operand re + i im."""
    planes = np.stack(
        [
            symmetric_int_residues(np.asarray(re, np.int64), moduli),
            symmetric_int_residues(np.asarray(im, np.int64), moduli),
        ],
        axis=1,
    )
    return ResidueStack(planes.astype(np.float32), is_complex=True)
