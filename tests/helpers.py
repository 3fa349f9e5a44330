"""Independent references used by several test modules: plain Python integers, and the
staged accuracy decision that one-pass probes are checked against."""

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


def staged_tiled_probe(engine, a, bt, *, budget_bits: int, r: int):
    """The accuracy plan's tiled test as ``ozfft.scheme.gemm`` stages it on ``engine``
    (statistics, 1-norm exponents, ``_Pairing.tiled``, ``_side_deficit``) for prepared
    operands ``a``, ``bt`` (fast mode), a truncation budget ``2**-r`` and the shifts of the
    CRT budget ``budget_bits``: ``(TiledProbe, rules, index)``, the ``ProbeRules`` of
    ``Engine.tiled_plan_probe`` that ask for the same test, ``index`` the inner indices of
    its lower-bound products (None: all of k)."""
    from ozfft.engines.base import ProbeRules, TiledProbe
    from ozfft.ozaki import bounds
    from ozfft.scheme import gemm as scheme

    xp = engine.xp
    planner = scheme._Planner(
        engine, a, bt, precision="fp64", mode="fast", out_bits=53, exact_bits=(53, 53),
        timer=scheme._no_timer,
    )  # fmt: skip
    ra, rb = planner.pairing.tiled()
    sa, sb, _ = planner.stats
    g = planner.pairing.g
    deficits = []
    for op, st, pair in ((planner.a, sa, ra), (planner.b, sb, rb)):
        sigma = engine.fast_shift(st.max_exp, st.sumsq, budget_bits)
        deficits.append(int(scheme._side_deficit(xp, op, sigma, op.zero, pair, g, r)))
    maxima = tuple(int(v) for v in scheme._to_host(xp, planner._maxima_on_device()))
    k = a.shape[-1]
    rules = ProbeRules(
        budget_bits=budget_bits,
        lower_bound_bits=g,
        pairing_offset=bounds.pairing_offset(r, g),
        terms=2 * k if xp.iscomplexobj(a) else k,
        never=scheme._NEVER,
        tile=scheme.TILE,
    )
    index = scheme._subset(engine, a, bt, k)
    return TiledProbe(deficits[0], deficits[1], maxima), rules, index
