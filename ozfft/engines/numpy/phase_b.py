"""Stage 4 on numpy: exact Kulisch reconstruction and one correct rounding (Phase B).

For residues ``u_i`` of the exact integer ``x = (A'B')_ij`` (``2|x| < P``):

1. ``X = sum_i W_i u_i`` as base-2**24 limbs: a tiny float64 GEMM of the weight
   limbs against ``u`` (every partial sum < N max(p_i) 2**24: < 2**37 for the INT8
   moduli, < 2**43 for FP8 systems of moduli up to 32**3; exact), then carry propagation.
2. ``Q = round(X / P)`` estimated in float64 from the limbs (error < 2**-36 for the INT8
   moduli, < 2**-31 for FP8 systems; the tie test below allows 2**-30), and
   ``R = X - Q P`` exactly in limbs; where the estimate sits within 2**-30 of a tie,
   ``R`` is corrected by ``±P`` after exact limb comparisons with ``±P/2``.  Then
   ``R = x`` exactly (CRT uniqueness).
3. ``|x| 2**s`` (``s = -(sigma_i + tau_j)``) is rounded **once** to the output format,
   nearest-even, from the leading bits and a sticky bit, with the precision reduced
   for subnormal results and overflow to infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ozaki.residue_system import ResidueSystem

__all__ = ["FLOAT32", "FLOAT64", "FloatFormat", "kulisch_reconstruct", "round_limbs"]


@dataclass(frozen=True)
class FloatFormat:
    """Binary floating-point target: significand bits and normal exponent range."""

    prec: int
    emin: int
    emax: int

    @property
    def max_finite(self) -> float:
        """Largest finite value of the format (as a float64)."""
        return float(np.ldexp(2.0 - 2.0 ** (1 - self.prec), self.emax))


FLOAT64 = FloatFormat(53, -1022, 1023)
FLOAT32 = FloatFormat(24, -126, 127)


def _normalize(limbs: np.ndarray, bits: int) -> np.ndarray:
    """Carry-propagate signed limbs in place: limbs ``0..L-2`` end in ``[0, 2**bits)``."""
    mask = (1 << bits) - 1
    for i in range(limbs.shape[0] - 1):
        carry = limbs[i] >> bits  # arithmetic shift: floor division
        limbs[i] &= mask
        limbs[i + 1] += carry
    return limbs


def _sign(limbs: np.ndarray) -> np.ndarray:
    """Sign (-1, 0, +1) of normalized signed limbs (the top limb carries the sign)."""
    negative = limbs[-1] < 0
    nonzero = (limbs != 0).any(axis=0)
    return np.where(negative, -1, np.where(nonzero, 1, 0))


def _top_window(limbs: np.ndarray, bits: int, index: np.ndarray, width: int) -> list:
    """Limbs ``index .. index+width-1`` per column (zero beyond the top)."""
    padded = np.concatenate([limbs, np.zeros((width + 1, limbs.shape[1]), limbs.dtype)])
    idx = np.minimum(index, limbs.shape[0])
    return [np.take_along_axis(padded, (idx + j)[None, :], axis=0)[0] for j in range(width)]


def round_limbs(mag: np.ndarray, shift: np.ndarray, bits: int, fmt: FloatFormat) -> np.ndarray:
    """Correctly rounded float64 of ``mag * 2**shift`` for normalized non-negative limbs.

    The result is exactly representable in ``fmt`` (or infinite), so a cast to a
    narrower dtype afterwards is exact.
    """
    num_limbs, count = mag.shape
    nz = mag != 0
    any_nz = nz.any(axis=0)
    top = num_limbs - 1 - np.argmax(nz[::-1], axis=0)
    top_limb = np.take_along_axis(mag, top[None, :], axis=0)[0]
    _, top_bits = np.frexp(top_limb.astype(np.float64))  # bit length, exact (< 2**24)
    bitlen = bits * top + top_bits
    lead_exp = bitlen - 1 + shift  # exponent of the leading bit of the result
    prec = np.where(lead_exp >= fmt.emin, fmt.prec, fmt.prec - (fmt.emin - lead_exp))
    drop = np.maximum(bitlen - prec, 0)  # bits below the kept significand

    limb_shift, bit_shift = np.divmod(drop, bits)
    window = _top_window(mag, bits, limb_shift, 4)
    mask = (1 << bits) - 1
    kept = np.zeros(count, np.int64)
    for j in range(3):  # significand <= 2**53 lies within 3 shifted limbs
        low = window[j] >> bit_shift
        high = (window[j + 1] << (bits - bit_shift)) & mask
        kept += (low | high) << (bits * j)

    # round bit at position drop-1, sticky = any bit below it
    has_drop = drop > 0
    rpos = np.maximum(drop - 1, 0)
    rlimb_idx, rbit = np.divmod(rpos, bits)
    rlimb = _top_window(mag, bits, rlimb_idx, 1)[0]
    round_bit = ((rlimb >> rbit) & 1).astype(bool) & has_drop
    below = np.zeros_like(nz)
    below[1:] = np.logical_or.accumulate(nz[:-1], axis=0)  # any nonzero limb below l
    sticky_limbs = np.take_along_axis(below, np.minimum(rlimb_idx, num_limbs - 1)[None], 0)[0]
    sticky = (sticky_limbs | ((rlimb & ((1 << rbit) - 1)) != 0)) & has_drop
    kept += (round_bit & (sticky | (kept & 1).astype(bool))).astype(np.int64)

    with np.errstate(over="ignore"):
        value = np.ldexp(kept.astype(np.float64), (drop + shift).astype(np.int32))
    value[value > fmt.max_finite] = np.inf  # overflow of a narrower format
    return np.where(any_nz, value, 0.0)


def kulisch_reconstruct(
    u: np.ndarray, shift: np.ndarray, moduli: ResidueSystem, fmt: FloatFormat
) -> np.ndarray:
    """Round ``x * 2**shift`` where ``x`` is the CRT integer of ``u`` (``(N, M)`` uint8, or
    uint16 for an FP8 residue system)."""
    bits = moduli.limb_bits
    weights = moduli.weight_limbs().astype(np.float64)  # (L, N), < 2**24
    plimbs = moduli.product_limbs()  # (L,)
    x = (weights @ u.astype(np.float64)).astype(np.int64)  # exact: < N max(p_i) 2**24
    _normalize(x, bits)

    approx = np.zeros(x.shape[1])
    for i in range(x.shape[0] - 1, -1, -1):
        approx = approx * 2.0**bits + x[i]
    ratio = approx * (1.0 / float(moduli.product))
    quotient = np.floor(ratio + 0.5)
    rem = x - quotient.astype(np.int64)[None, :] * plimbs[:, None]  # |.| < N max(p_i) 2**24
    _normalize(rem, bits)

    near_tie = np.nonzero(np.abs(ratio - quotient) > 0.5 - 2.0**-30)[0]
    if near_tie.size:
        r = rem[:, near_tie]
        twice = 2 * r
        above = _sign(_normalize(twice - plimbs[:, None], bits)) > 0  # x > P/2
        below = _sign(_normalize(twice + plimbs[:, None], bits)) < 0  # x < -P/2
        r = r - above[None, :] * plimbs[:, None] + below[None, :] * plimbs[:, None]
        rem[:, near_tie] = _normalize(r, bits)

    negative = rem[-1] < 0
    if negative.any():
        rem[:, negative] = _normalize(-rem[:, negative], bits)
    value = round_limbs(rem, shift, bits, fmt)
    return np.where(negative, -value, value)
