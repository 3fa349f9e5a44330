"""Independent references used by several test modules (plain Python integers)."""

from __future__ import annotations

from fractions import Fraction


def round_fraction(value: Fraction, prec: int, emin: int, emax: int) -> float:
    """Round ``value`` to the binary format (prec, emin, emax), nearest-even, as float.

    Written from the IEEE 754 definition with Python integers, independent of the
    library's limb code.  Overflow gives +-inf.
    """
    if value == 0:
        return 0.0
    sign = -1.0 if value < 0 else 1.0
    mag = abs(value)
    # exponent e with 2**e <= mag < 2**(e+1)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    elif Fraction(2) ** (e + 1) <= mag:
        e += 1
    quantum = max(e, emin) - (prec - 1)  # exponent of the last kept bit
    scaled = mag / Fraction(2) ** quantum
    q, r = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * r
    if twice > scaled.denominator or (twice == scaled.denominator and q % 2 == 1):
        q += 1
    if q and (q.bit_length() - 1 + quantum) > emax:
        return sign * float("inf")
    return sign * float(Fraction(q) * Fraction(2) ** quantum)


def round_f64(value: Fraction) -> float:
    return round_fraction(value, 53, -1022, 1023)


def round_f32(value: Fraction) -> float:
    return round_fraction(value, 24, -126, 127)
