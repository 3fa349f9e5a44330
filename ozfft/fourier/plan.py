"""FFT plans: immutable host descriptions — factorization and stage matrices with the
twiddles folded in. Engines prepare a plan into an executor (:mod:`.executors`); the
cache of plans lives in :mod:`.cache`, Bluestein's chirp-z in :mod:`.bluestein`.

For ``n = r_1 r_2 ... r_s`` (input digits ``j_1`` most significant, output digits ``k_1``
least significant) stage 1 is ``F_{r_1}`` on the leading input digit; stage ``l >= 2``
applies, for each previous output digit ``k_{l-1}`` and each remaining input suffix
``j'``, the ``r_l x r_l`` matrix

    M[k, j] = w_{r_l}^{j k} * w_{m_{l-1}}^{(j m_{l+1} + j') k_{l-1}}     (w_m = e^{-2 pi i/m})

with ``m_l = r_l ... r_s`` — the four-step twiddle folded into the stage matrix, so every
stage is a pure (batched) complex GEMM with constant integer matrices
``round(2**bits M)`` (exact, from :mod:`ozfft.fourier.roots`).

Two schemes run these stages (docs/numerics.md, "FFT"):

* ``"fixed"`` — lines in fixed point with one exponent per line, every stage an exact
  product on byte digits with a static rescale (:mod:`ozfft.ozaki.fixed_point`); lengths
  up to ``MAX_FIXED`` with radices <= 64, one fused pass per axis on the GPU;
* ``"ozaki"`` — every stage an Ozaki-II product (CRT over INT8 moduli) rounded to float;
  any length (Bluestein for large prime factors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..ozaki.fixed_point import FORMATS, DigitFormat
from ..ozaki.moduli import moduli_set
from .roots import MAX_ROOT_BITS, fixed_roots

if TYPE_CHECKING:
    from .bluestein import BluesteinPlan

__all__ = [
    "MAX_DIRECT",
    "MAX_FIXED",
    "MAX_RADIX",
    "FFTPlan",
    "Stage",
    "build_fixed_plan",
    "build_stage_plan",
    "estimate_stage_plan_bytes",
    "factorize",
    "fixed_point_radices",
    "fixed_stage_mmas",
    "stage_bits",
]

#: lengths up to this run as one direct DFT stage (one INT8 GEMM per modulus and
#: product, k = n): fewer passes over the data than a split, exact fixed-point matrix
MAX_DIRECT = 1024
#: longer lengths split into stages of at most this radix; larger prime factors go
#: through Bluestein
MAX_RADIX = 64
#: later stages use at most this radix (plan storage is n * r per stage)
MAX_LATER_RADIX = 32
#: longest line the fixed-point scheme runs in one pass (8 lines of it fit a GPU
#: multiprocessor's shared memory as 16-byte fixed-point complex numbers)
MAX_FIXED = 1024
#: largest radix of a fixed-point stage (its real embedding is at most 128 x 128)
MAX_FIXED_RADIX = 64


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def factorize(n: int) -> list[int] | None:
    """Radices ``[r_1, ..., r_s]`` with product n: ``[n]`` up to MAX_DIRECT; else ``r_1``
    the largest divisor <= MAX_RADIX and the rest split into the fewest balanced factors
    <= MAX_LATER_RADIX. None if n > MAX_DIRECT has a prime factor > MAX_RADIX."""
    if n <= MAX_DIRECT:
        return [n]
    primes = _prime_factors(n)
    if max(primes) > MAX_RADIX:
        return None
    first = max(d for d in range(1, MAX_RADIX + 1) if n % d == 0)
    rest = n // first
    radices = [first]
    if rest > 1:
        rest_primes = sorted(_prime_factors(rest), reverse=True)
        count = max(1, math.ceil(math.log(rest) / math.log(MAX_LATER_RADIX) - 1e-12))
        while True:
            bins = [1] * count
            ok = True
            for p in rest_primes:
                i = min(range(count), key=lambda b: bins[b])
                if bins[i] * p > MAX_LATER_RADIX and max(rest_primes) <= MAX_LATER_RADIX:
                    ok = False
                    break
                bins[i] *= p
            if ok:
                break
            count += 1
        radices += sorted((b for b in bins if b > 1), reverse=True)
    return radices


@dataclass(frozen=True)
class Stage:
    """One batched GEMM: ``groups`` matrices of ``radix x radix`` Gaussian integers."""

    radix: int
    prev_radix: int  #: r_{l-1} (1 for the first stage)
    suffix: int  #: m_{l+1}: remaining input positions after this digit
    bits: int  #: matrix = round(2**bits * M)
    re: np.ndarray  #: int64 (prev_radix, suffix, radix, radix), read-only
    im: np.ndarray

    @property
    def squared_row_bound_log2(self) -> int:
        """``G_a`` with every row's ``sum |w|**2 <= 2**G_a`` (|w| <= 2**bits + 1/sqrt 2)."""
        return 2 * self.bits + math.ceil(math.log2(self.radix)) + 1

    @property
    def nbytes(self) -> int:
        return self.re.nbytes + self.im.nbytes

    def real_embedding(self) -> np.ndarray:
        """int64 ``(prev_radix, suffix, 2r, 2r)``: each complex matrix as the real matrix
        ``[[Wr, -Wi], [Wi, Wr]]`` on interleaved ``(re, im)`` rows and columns."""
        shape = (*self.re.shape[:2], 2 * self.radix, 2 * self.radix)
        out = np.empty(shape, np.int64)
        out[..., 0::2, 0::2] = self.re
        out[..., 0::2, 1::2] = -self.im
        out[..., 1::2, 0::2] = self.im
        out[..., 1::2, 1::2] = self.re
        return out


@dataclass(frozen=True)
class FFTPlan:
    """Everything a length-``n`` transform needs, as host data (no device state).

    ``scheme`` is ``"fixed"`` (``digit_format`` set) or ``"ozaki"`` (``num_moduli`` set);
    ``bluestein`` replaces the stages for lengths with a large prime factor.
    """

    n: int
    scheme: str
    radices: tuple[int, ...]
    stages: tuple[Stage, ...]
    num_moduli: int | None = None
    digit_format: DigitFormat | None = None
    bluestein: BluesteinPlan | None = None

    @property
    def nbytes(self) -> int:
        """Host bytes of the plan (stage matrices, Bluestein's chirp and inner plan)."""
        own = sum(s.nbytes for s in self.stages)
        if self.bluestein is not None:
            own += self.bluestein.nbytes
        return own


def stage_bits(num_moduli: int, radix: int) -> int:
    """Fixed-point bits of an Ozaki-II stage matrix: about half of ``L - 2 - log2 r``."""
    budget = moduli_set(num_moduli).budget_bits
    return max(1, min(MAX_ROOT_BITS, (budget - 2 - math.ceil(math.log2(max(radix, 2)))) // 2))


def _build_stages(n: int, radices: list[int], bits_of) -> tuple[Stage, ...]:
    stages = []
    m = [n]
    for r in radices:
        m.append(m[-1] // r)  # m[l] = r_{l+1} ... r_s  (0-based: m[0] = n)
    for idx, r in enumerate(radices):
        bits = bits_of(r)
        re_tab, im_tab = fixed_roots(n, bits)
        k = np.arange(r)
        j = np.arange(r)
        base = (np.outer(k, j) * (n // r)) % n  # w_r^{jk} as w_n^{...}
        if idx == 0:
            e = base[None, None]
            prev, suffix = 1, 1
        else:
            prev, suffix = radices[idx - 1], m[idx + 1]
            kprev = np.arange(prev)[:, None, None, None]
            jp = np.arange(suffix)[None, :, None, None]
            jj = j[None, None, None, :]
            twiddle = (jj * suffix + jp) * kprev * (n // m[idx - 1])
            e = (base[None, None] + twiddle) % n
        re, im = re_tab[e], im_tab[e]
        re.setflags(write=False)
        im.setflags(write=False)
        stages.append(Stage(r, prev, suffix, bits, re, im))
    return tuple(stages)


def estimate_stage_plan_bytes(n: int, num_moduli: int) -> int:
    """Bytes of an Ozaki-II plan for ``n`` (stage matrices + NumPy-engine residues),
    Bluestein's inner plan included."""
    radices = factorize(n)
    if radices is None:
        m = 2 ** math.ceil(math.log2(2 * n - 1))
        return 48 * m + estimate_stage_plan_bytes(m, num_moduli)
    per_entry = 16 + num_moduli * 2 * 4  # int64 pair + NumPy-engine residue planes
    entries = radices[0] ** 2 + sum(n * r for r in radices[1:])
    return entries * per_entry


def build_stage_plan(n: int, num_moduli: int) -> FFTPlan:
    """Ozaki-II stage plan of a factorizable ``n`` (see :func:`factorize`)."""
    radices = factorize(n)
    if radices is None:
        raise ValueError(f"length {n} has a prime factor above {MAX_RADIX}: use Bluestein")
    stages = _build_stages(n, radices, lambda r: stage_bits(num_moduli, r))
    return FFTPlan(n, "ozaki", tuple(radices), stages, num_moduli=num_moduli)


def fixed_stage_mmas(r: int, fmt: DigitFormat) -> int:
    """m16n8k32 INT8 MMAs of a radix-``r`` stage per 8-line vector tile, as the fused
    kernel issues them: ``ceil(2r/16)`` row tiles x ``ceil(2r/32)`` k chunks x digit
    pairs; when ``2r <= 16`` two pairs of a diagonal share one MMA (the top data digit,
    signed, goes alone)."""
    if 2 * r > 16:
        pairs = sum(len(fmt.pairs(d)) for d in range(fmt.first_diagonal, fmt.last_diagonal + 1))
        return -(-2 * r // 16) * -(-2 * r // 32) * pairs
    total = 0
    for d in range(fmt.first_diagonal, fmt.last_diagonal + 1):
        pairs = fmt.pairs(d)
        top = sum(1 for _, a in pairs if a == fmt.data_digits - 1)
        total += top + -(-(len(pairs) - top) // 2)
    return total


def _fixed_stage_cost(r: int) -> float:
    """MMAs per element of a radix-``r`` stage plus a charge for its epilogue."""
    return fixed_stage_mmas(r, FORMATS["fp64"]) / r + 1.0


@lru_cache(maxsize=1024)
def fixed_point_radices(n: int) -> tuple[int, ...] | None:
    """Radices of the fixed-point scheme for ``n`` (cheapest of the splits into at most
    three factors <= 64), or None when ``n > MAX_FIXED`` or a prime factor exceeds 64."""
    if n < 2 or n > MAX_FIXED:
        return None
    best: tuple[float, tuple[int, ...]] | None = None

    def consider(radices: tuple[int, ...]) -> None:
        nonlocal best
        if any(r > MAX_FIXED_RADIX for r in radices):
            return
        cost = sum(_fixed_stage_cost(r) for r in radices)
        if best is None or cost < best[0]:
            best = (cost, radices)

    consider((n,))
    for r1 in range(2, n):
        if n % r1:
            continue
        consider((r1, n // r1))
        rest = n // r1
        for r2 in range(2, rest):
            if rest % r2 == 0:
                consider((r1, r2, rest // r2))
    return None if best is None else best[1]


def build_fixed_plan(n: int, precision: str) -> FFTPlan:
    """Fixed-point digit-stage plan of ``n`` at ``precision`` (see
    :func:`fixed_point_radices`)."""
    radices = fixed_point_radices(n)
    if radices is None:
        raise ValueError(f"length {n} has no fixed-point plan")
    fmt = FORMATS[precision]
    stages = _build_stages(n, list(radices), lambda r: fmt.matrix_bits)
    return FFTPlan(n, "fixed", radices, stages, digit_format=fmt)
