"""Residue systems of Phase A: the moduli, how a residue is split into the digits a tensor
core multiplies, and how the digit products give the product's residue back.

One object serves both arithmetics (docs/numerics.md, "FP8 accumulation"):

* **INT8** (today's Phase A): moduli ``p <= 256``, the symmetric residue itself is the one
  digit (``|digit| <= 128``), one INT8 product per modulus, exact INT32 sums.
* **FP8** (e4m3, for the FP8 Phase A): e4m3 holds every integer of magnitude at most 16,
  so a residue modulo ``m = s**d`` (``s <= 33``) is written in ``d`` balanced base-``s``
  digits, ``r = sum_j c_j s**j``. Because ``s**d = 0 (mod m)``,

      r r' = sum_{t < d} s**t P_t  (mod m),   P_t = sum_{i + j = t} c_i c'_j,

  so ``d (d + 1) / 2`` digit products per modulus: 3 for squares, 6 for cubes. ``P_t`` is one
  product over ``(t + 1) K`` terms (the digit planes concatenated along k), each at most
  256 in magnitude: exact while ``256 (t + 1) K < 2**24`` (the measured FP32
  accumulation of an H200, ``ozfft bench fp8``).

**Gaussian** INT8 systems (complex products): odd moduli ``p <= 255`` whose every prime
factor is 1 mod 4, so that ``-1`` has a square root ``j`` modulo ``p``. Then ``a + b i ->
a + j b`` and ``a + b i -> a - j b`` are ring maps ``Z[i] -> Z/p``, and a complex product
``C = A B`` needs two real products per modulus instead of Karatsuba's three:

    C+ = (Ar + j Ai)(Br + j Bi),  C- = (Ar - j Ai)(Br - j Bi)     (mod p)
    Re C = (C+ + C-) / 2,         Im C = (C+ - C-) / (2 j)         (mod p).

The moduli are smaller (~7.3 bits each against INT8's ~7.9), so a Gaussian system stands
in for an INT8 count with one or two moduli more, and 2/3 of the products per modulus.

The CRT constants (``P``, the weights ``W_i``) follow from the moduli as in
:mod:`.moduli` (:func:`~.moduli.crt_constants`). :func:`int8_system` is the INT8 table, the
system every layer takes where a count of moduli is asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache, cached_property

import numpy as np

from .moduli import INT8_MODULI, MAX_MODULI, MIN_MODULI, CrtConstants, crt_constants, limbs_needed

__all__ = [
    "E4M3_MAX",
    "FP8_BASES",
    "FP8_DIGIT_MAX",
    "FP8_EXACT_BITS",
    "GAUSSIAN_MODULI",
    "PHASE_A_KINDS",
    "ResidueSystem",
    "e4m3_codes",
    "fp8_system",
    "gaussian_system",
    "int8_system",
    "sqrt_minus_one",
]

#: the arithmetics of Phase A a residue system can name
PHASE_A_KINDS = ("int8", "fp8")
#: e4m3 holds every integer of at most this magnitude exactly
FP8_DIGIT_MAX = 16
#: bits of an FP32 accumulator's integer sums that stay exact (24: measured on an H200,
#: docs/numerics.md "FP8 accumulation")
FP8_EXACT_BITS = 24
#: pairwise-coprime bases s <= 33 for FP8 moduli s**d, largest first (33 = 3 * 11 would
#: exclude 27 and 11, which give more bits together)
FP8_BASES: tuple[int, ...] = (32, 31, 29, 27, 25, 23, 19, 17, 13, 11, 7)


#: Gaussian INT8 moduli, largest first: the greedy pairwise-coprime sequence of odd
#: ``m <= 255`` whose every prime factor is 1 mod 4 (re-checked on import)
GAUSSIAN_MODULI: tuple[int, ...] = (
    241, 233, 229, 221, 205, 197, 193, 181, 173, 157, 149,
    137, 113, 109, 101, 97, 89, 73, 61, 53, 37, 29,
)  # fmt: skip


def sqrt_minus_one(m: int) -> int | None:
    """The least ``j`` in ``[1, m)`` with ``j**2 = -1 (mod m)``, or None (odd ``m >= 5``
    has one exactly when every prime factor of ``m`` is 1 mod 4)."""
    return next((j for j in range(1, m) if (j * j + 1) % m == 0), None)


def _check_gaussian_table() -> None:
    expected: list[int] = []
    for m in range(255, 4, -2):
        if sqrt_minus_one(m) is not None and all(math.gcd(m, q) == 1 for q in expected):
            expected.append(m)
    if tuple(expected) != GAUSSIAN_MODULI:
        raise AssertionError(f"GAUSSIAN_MODULI is not the greedy sequence {expected}")


_check_gaussian_table()


#: the largest e4m3 magnitude (OCP FP8 "fn": 1.75 * 2**8; 0x7f is NaN)
E4M3_MAX = 448


@cache
def _e4m3_table() -> np.ndarray:
    """e4m3 code of every magnitude 0..448 that e4m3 holds exactly (at most 4 significant
    bits: exponent bits (bias 7), three mantissa bits), -1 for the others."""
    table = np.full(E4M3_MAX + 1, -1, np.int16)
    table[0] = 0
    for m in range(1, E4M3_MAX + 1):
        e = m.bit_length() - 1
        if m & ((1 << max(e - 3, 0)) - 1) == 0:
            table[m] = ((e + 7) << 3) | (((m - (1 << e)) << 3) >> e)
    return table


def e4m3_codes(v: np.ndarray) -> np.ndarray:
    """The e4m3 bytes (uint8) of integers that e4m3 holds exactly; raises otherwise."""
    v = np.asarray(v, np.int64)
    mag = np.abs(v)
    if (mag > E4M3_MAX).any():
        raise ValueError("an integer is not exactly an e4m3 number")
    codes = _e4m3_table()[mag]
    if (codes < 0).any():
        raise ValueError("an integer is not exactly an e4m3 number")
    return (codes | np.where(v < 0, 0x80, 0)).astype(np.uint8)


@dataclass(frozen=True)
class ResidueSystem(CrtConstants):
    """Moduli ``m_i = bases[i] ** digits[i]`` and the rules of one Phase-A arithmetic.

    ``digit_max``: the largest digit magnitude the tensor core takes exactly (128 for
    INT8, 16 for FP8); ``exact_bits``: the accumulator's exact integer bits (31 for INT32,
    24 for FP32); ``gaussian``: complex products run as two real products per modulus
    through a square root of -1 (:attr:`roots`; module docstring), not Karatsuba's three.
    """

    name: str
    bases: tuple[int, ...]
    digits: tuple[int, ...]
    digit_max: int
    exact_bits: int
    gaussian: bool = False
    moduli: tuple[int, ...] = field(init=False)
    product: int = field(init=False)  #: P
    weights: tuple[int, ...] = field(init=False)  #: W_i = (P/m_i) ((P/m_i)^-1 mod m_i)

    def __post_init__(self) -> None:
        if self.name not in PHASE_A_KINDS:
            raise ValueError(
                f"a residue system's Phase A is one of {PHASE_A_KINDS}, not {self.name!r}"
            )
        if len(self.bases) != len(self.digits) or not self.bases:
            raise ValueError("one digit count per base, and at least one base")
        moduli = tuple(s**d for s, d in zip(self.bases, self.digits, strict=True))
        for i, m in enumerate(moduli):
            if any(math.gcd(m, q) != 1 for q in moduli[:i]):
                raise ValueError(f"modulus {m} shares a factor with an earlier one")
        if self.gaussian and (
            self.name != "int8" or any(sqrt_minus_one(m) is None or m % 2 == 0 for m in moduli)
        ):
            raise ValueError("a Gaussian system takes INT8 odd moduli with a square root of -1")
        product, weights = crt_constants(moduli)
        object.__setattr__(self, "moduli", moduli)
        object.__setattr__(self, "product", product)
        object.__setattr__(self, "weights", weights)

    @property
    def count(self) -> int:
        return len(self.moduli)

    @cached_property
    def roots(self) -> tuple[tuple[int, int, int], ...]:
        """Per modulus of a Gaussian system: ``(j, 2**-1 mod m, (2 j)**-1 mod m)``, ``j`` the
        least root of ``j**2 = -1 (mod m)`` (below ``m / 2``: ``m - j`` is the other)."""
        if not self.gaussian:
            raise ValueError("only a Gaussian system has square roots of -1")
        out = []
        for m in self.moduli:
            j = sqrt_minus_one(m)
            out.append((j, pow(2, -1, m), pow(2 * j, -1, m)))
        return tuple(out)

    @property
    def phase_a(self) -> str:
        """The arithmetic of Phase A: ``"int8"`` or ``"fp8"``."""
        return self.name

    # -- what the scaling and Phase B read (the rest from CrtConstants) ---------------
    limb_bits = 24  #: Kulisch limb width of Phase B

    @property
    def num_limbs(self) -> int:
        """Limbs holding the signed Kulisch sum ``sum_i W_i u_i < N max(m_i) P``."""
        return limbs_needed(self.count * max(self.moduli) * self.product, self.limb_bits)

    def products(self, i: int) -> int:
        """Digit products of modulus ``i``: ``d (d + 1) / 2``."""
        d = self.digits[i]
        return d * (d + 1) // 2

    @property
    def total_products(self) -> int:
        """Tensor-core products per real Phase A (all moduli)."""
        return sum(self.products(i) for i in range(self.count))

    def max_k(self) -> int:
        """The longest k whose every digit-product sum ``P_t`` stays exact:
        ``digit_max**2 (t + 1) k < 2**exact_bits`` for the longest ``t`` of any modulus."""
        longest = max(self.digits)
        return ((1 << self.exact_bits) - 1) // (self.digit_max**2 * longest)

    def split(self, i: int, r: int) -> list[int]:
        """The digits ``c_0 .. c_{d-1}`` of the symmetric residue ``r`` modulo ``m_i``
        (``r = sum_j c_j s**j``): balanced base-``s`` digits, the top one the remainder;
        every ``|c_j| <= digit_max``."""
        return [int(c) for c in self.split_array(i, np.asarray(r))]

    def split_array(self, i: int, r: np.ndarray) -> np.ndarray:
        """:meth:`split` of every symmetric residue of an integer-valued array: ``(d,
        *r.shape)`` float32 digits (exact integers, ``|c_j| <= digit_max``: the operands of
        the FP32-accumulated digit products)."""
        s, d = self.bases[i], self.digits[i]
        rest = np.asarray(r, np.float64)
        out = np.empty((d, *rest.shape), np.float32)
        for j in range(d - 1):
            c = np.mod(rest + s // 2, s) - s // 2
            out[j] = c
            rest = (rest - c) / s  # exact: rest - c is a multiple of s
        out[d - 1] = rest
        if np.abs(out).max(initial=0) > self.digit_max:
            raise ValueError(f"a residue does not fit {d} digits of at most {self.digit_max}")
        return out

    def combine(self, i: int, partial: list[int]) -> int:
        """The product's residue modulo ``m_i`` from its digit-product sums ``P_0 ..
        P_{d-1}`` (``P_t = sum_{a + b = t} c_a c'_b``): ``sum_t s**t P_t mod m_i``."""
        s, m = self.bases[i], self.moduli[i]
        return sum(p * s**t for t, p in enumerate(partial)) % m

    @staticmethod
    def pairs(d: int, t: int) -> list[tuple[int, int]]:
        """The digit pairs ``(a, b)``, ``a + b = t``, whose products make ``P_t``."""
        return [(a, t - a) for a in range(t + 1) if t - a < d]


@cache
def int8_system(count: int) -> ResidueSystem:
    """The INT8 system of ``count`` moduli (:data:`~.moduli.INT8_MODULI`, one digit each)."""
    if not MIN_MODULI <= count <= MAX_MODULI:
        raise ValueError(f"moduli must be between {MIN_MODULI} and {MAX_MODULI}, got {count}")
    moduli = INT8_MODULI[:count]
    return ResidueSystem("int8", moduli, (1,) * count, 128, 31)


@cache
def gaussian_system(min_budget: int) -> ResidueSystem:
    """The Gaussian INT8 system of fewest leading :data:`GAUSSIAN_MODULI` whose budget
    (``floor(log2 P)``, :attr:`~.moduli.CrtConstants.budget_bits`) is at least
    ``min_budget``; raises ``ValueError`` past the table (152 bits)."""
    for count in range(1, len(GAUSSIAN_MODULI) + 1):
        moduli = GAUSSIAN_MODULI[:count]
        if (math.prod(moduli) - 1).bit_length() - 1 >= min_budget:
            return ResidueSystem("int8", moduli, (1,) * count, 128, 31, gaussian=True)
    raise ValueError(
        f"Gaussian moduli reach a budget of at most "
        f"{(math.prod(GAUSSIAN_MODULI) - 1).bit_length() - 1} bits, asked for {min_budget}"
    )


@cache
def fp8_system(min_bits: int) -> ResidueSystem:
    """The FP8 system of fewest digit products whose CRT range has at least ``min_bits``
    bits: squares of the largest bases first (3 products, ~2 log2 s bits each), then bases
    made cubes, largest first (3 more products, log2 s more bits each)."""
    bases = list(FP8_BASES)
    digits = [2] * len(bases)
    ceiling = sum(3 * math.log2(s) for s in bases)
    if min_bits > ceiling:
        raise ValueError(f"FP8 moduli reach at most {ceiling:.1f} bits, asked for {min_bits}")
    bits = 0.0
    for count, s in enumerate(bases, start=1):
        bits += 2 * math.log2(s)
        if bits >= min_bits:
            return ResidueSystem(
                "fp8", tuple(bases[:count]), (2,) * count, FP8_DIGIT_MAX, FP8_EXACT_BITS
            )
    for i, s in enumerate(bases):
        digits[i] = 3
        bits += math.log2(s)
        if bits >= min_bits:
            break
    return ResidueSystem("fp8", tuple(bases), tuple(digits), FP8_DIGIT_MAX, FP8_EXACT_BITS)
