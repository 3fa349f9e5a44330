"""The INT8 moduli table and every constant derived from it, from Python integers.

For ``N`` moduli ``p_1..p_N`` (pairwise coprime, ``|residue| <= 128`` fits INT8):

* ``P = prod p_i``, ``L = floor(log2 P)`` (``P`` is never a power of two for N >= 2);
* ``q_i = (P/p_i)^-1 mod p_i`` and the CRT weights ``W_i = (P/p_i) q_i`` so that
  ``x = sum_i W_i u_i  (mod P)`` for ``u_i = x mod p_i``;
* the weights and ``P`` as little-endian limbs, for the exact Kulisch sum in Phase B.

Nothing here is typed in by hand except the table of moduli itself, which is the
greedy pairwise-coprime sequence (docs/numerics.md) and is re-checked on import.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "INT8_MODULI",
    "MAX_MODULI",
    "MIN_MODULI",
    "CrtConstants",
    "crt_constants",
    "int_to_limbs",
    "limb_table",
    "limbs_needed",
    "limbs_to_int",
]

#: Greedy pairwise-coprime INT8 moduli, largest first (docs/numerics.md; the moduli of
#: Ozaki, Uchino, Imamura, "Ozaki Scheme II: A GEMM-oriented emulation of floating-point
#: matrix multiplication using an integer modular technique").
INT8_MODULI: tuple[int, ...] = (
    256,
    255,
    253,
    251,
    247,
    241,
    239,
    233,
    229,
    227,
    223,
    217,
    211,
    199,
    197,
    193,
    191,
    181,
    179,
    173,
)
MIN_MODULI = 2
MAX_MODULI = len(INT8_MODULI)


def _check_table() -> None:
    for i, p in enumerate(INT8_MODULI):
        if not 2 <= p <= 256:
            raise AssertionError(f"modulus {p} does not give INT8 symmetric residues")
        for q in INT8_MODULI[:i]:
            if math.gcd(p, q) != 1:
                raise AssertionError(f"moduli {q} and {p} are not coprime")


_check_table()


def int_to_limbs(value: int, bits: int, count: int) -> list[int]:
    """Little-endian base-``2**bits`` digits of a non-negative ``value``."""
    if value < 0 or value >> (bits * count):
        raise ValueError(f"{value} does not fit {count} limbs of {bits} bits")
    mask = (1 << bits) - 1
    return [(value >> (bits * i)) & mask for i in range(count)]


def limbs_needed(bound: int, limb_bits: int) -> int:
    """Limbs of ``limb_bits`` bits holding signed values of magnitude below ``bound`` (one
    sign bit of headroom)."""
    return -(-(bound.bit_length() + 1) // limb_bits)


def limb_table(values, limb_bits: int, num_limbs: int) -> np.ndarray:
    """``(num_limbs, len(values))`` int64: limb ``l`` of ``values[i]`` at ``[l, i]``."""
    cols = [int_to_limbs(v, limb_bits, num_limbs) for v in values]
    return np.array(cols, dtype=np.int64).reshape(len(cols), num_limbs).T.copy()


def crt_constants(moduli) -> tuple[int, tuple[int, ...]]:
    """``P = prod m_i`` and the CRT weights ``W_i = (P/m_i) ((P/m_i)^-1 mod m_i)`` of
    pairwise-coprime moduli (``x = sum_i W_i (x mod m_i)  (mod P)``)."""
    product = math.prod(moduli)
    return product, tuple((product // m) * pow(product // m, -1, m) for m in moduli)


class CrtConstants:
    """What the scaling and Phase B read of a set of moduli, from its ``product``,
    ``weights``, ``limb_bits`` and ``num_limbs`` (the residue systems of
    :mod:`.residue_system`)."""

    product: int
    weights: tuple[int, ...]
    limb_bits: int
    num_limbs: int

    @property
    def log2_product(self) -> float:
        """log2 P (bits of the CRT range)."""
        return math.log2(self.product)

    @property
    def budget_bits(self) -> int:
        """The largest L with 2**L < P: floor(log2 P), less one where P is a power of two
        (a single FP8 modulus 32**2); the scaling keeps 2*sum|a'||b'| <= 2**L < P."""
        return (self.product - 1).bit_length() - 1

    def weight_limbs(self) -> np.ndarray:
        """``(num_limbs, count)`` int64 array: limb ``l`` of ``W_i`` at ``[l, i]``."""
        return limb_table(self.weights, self.limb_bits, self.num_limbs)

    def product_limbs(self) -> np.ndarray:
        """``(num_limbs,)`` int64 limbs of ``P``."""
        return limb_table([self.product], self.limb_bits, self.num_limbs)[:, 0].copy()


def limbs_to_int(limbs, bits: int) -> int:
    """Inverse of :func:`int_to_limbs` (limbs may be signed / unnormalized)."""
    return sum(int(d) << (bits * i) for i, d in enumerate(limbs))
