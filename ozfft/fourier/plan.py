"""FFT plans: factorization, stage matrices with the twiddles folded in, plan cache.

For ``n = r_1 r_2 ... r_s`` (input digits ``j_1`` most significant, output digits ``k_1``
least significant) stage 1 is ``F_{r_1}`` on the leading input digit; stage ``l >= 2``
applies, for each previous output digit ``k_{l-1}`` and each remaining input suffix
``j'``, the ``r_l x r_l`` matrix

    M[k, j] = w_{r_l}^{j k} * w_{m_{l-1}}^{(j m_{l+1} + j') k_{l-1}}     (w_m = e^{-2 pi i/m})

with ``m_l = r_l ... r_s`` — the four-step twiddle folded into the stage matrix, so every
stage is a pure (batched) complex GEMM with constant integer matrices
``round(2**bits M)`` (exact, from :mod:`ozfft.fourier.roots`). Lengths with a prime factor
above ``MAX_RADIX`` use Bluestein's algorithm on a power-of-two length.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from threading import Lock
from typing import Any

import numpy as np

from .. import config
from ..errors import PlanMemoryError
from ..ozaki.moduli import moduli_set
from .roots import MAX_ROOT_BITS, fixed_roots, float_roots

__all__ = [
    "MAX_DIRECT",
    "MAX_RADIX",
    "BluesteinPlan",
    "FFTPlan",
    "Stage",
    "clear_plan_cache",
    "factorize",
    "get_plan",
    "plan_cache_info",
]

#: lengths up to this run as one direct DFT stage (one INT8 GEMM per modulus and
#: product, k = n): fewer passes over the data than a split, exact fixed-point matrix
MAX_DIRECT = 1024
#: longer lengths split into stages of at most this radix; larger prime factors go
#: through Bluestein
MAX_RADIX = 64
#: later stages use at most this radix (plan storage is n * r per stage)
MAX_LATER_RADIX = 32


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


@dataclass
class Stage:
    """One batched GEMM: ``groups`` matrices of ``radix x radix`` Gaussian integers."""

    radix: int
    prev_radix: int  #: r_{l-1} (1 for the first stage)
    suffix: int  #: m_{l+1}: remaining input positions after this digit
    bits: int  #: matrix = round(2**bits * M)
    re: np.ndarray  #: int64 (prev_radix, suffix, radix, radix)
    im: np.ndarray
    residues: dict = field(default_factory=dict, repr=False)  #: per engine key

    @property
    def squared_row_bound_log2(self) -> int:
        """``G_a`` with every row's ``sum |w|**2 <= 2**G_a`` (|w| <= 2**bits + 1/sqrt 2)."""
        return 2 * self.bits + math.ceil(math.log2(self.radix)) + 1

    @property
    def nbytes(self) -> int:
        return self.re.nbytes + self.im.nbytes


@dataclass
class BluesteinPlan:
    """Chirp-z for lengths with a large prime factor: a length-``m`` power-of-two plan."""

    n: int
    m: int
    chirp: np.ndarray  #: exp(-i pi j**2 / n), j < n (angles reduced exactly mod 2n)
    kernel_hat: np.ndarray  #: FFT_m of the conjugate chirp, wrapped (computed by ozfft)
    inner: FFTPlan
    device: dict = field(default_factory=dict, repr=False)


@dataclass
class FFTPlan:
    """Everything a length-``n`` transform needs at one precision and moduli count."""

    n: int
    num_moduli: int
    radices: list[int]
    stages: list[Stage]
    bluestein: BluesteinPlan | None = None

    @property
    def nbytes(self) -> int:
        own = sum(s.nbytes for s in self.stages)
        if self.bluestein is not None:
            own += self.bluestein.inner.nbytes + 32 * self.bluestein.m
        return own


def stage_bits(num_moduli: int, radix: int) -> int:
    """Fixed-point bits of a stage matrix: about half of ``L - 2 - log2 r``."""
    budget = moduli_set(num_moduli).budget_bits
    return max(1, min(MAX_ROOT_BITS, (budget - 2 - math.ceil(math.log2(max(radix, 2)))) // 2))


def _build_stages(n: int, radices: list[int], num_moduli: int) -> list[Stage]:
    stages = []
    m = [n]
    for r in radices:
        m.append(m[-1] // r)  # m[l] = r_{l+1} ... r_s  (0-based: m[0] = n)
    for idx, r in enumerate(radices):
        bits = stage_bits(num_moduli, r)
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
        stages.append(Stage(r, prev, suffix, bits, re_tab[e], im_tab[e]))
    return stages


def _estimate_bytes(n: int, num_moduli: int) -> int:
    radices = factorize(n)
    if radices is None:
        return 48 * 2 ** math.ceil(math.log2(2 * n - 1)) + _estimate_bytes(
            2 ** math.ceil(math.log2(2 * n - 1)), num_moduli
        )
    per_entry = 16 + num_moduli * 2 * 4  # int64 pair + NumPy-engine residue planes
    entries = radices[0] ** 2 + sum(n * r for r in radices[1:])
    return entries * per_entry


def _build(n: int, num_moduli: int) -> FFTPlan:
    needed = _estimate_bytes(n, num_moduli)
    limit = config.plan_memory_limit()
    if needed > limit:
        raise PlanMemoryError(n, needed, limit)
    radices = factorize(n)
    if radices is not None:
        return FFTPlan(n, num_moduli, radices, _build_stages(n, radices, num_moduli))
    m = 1 << math.ceil(math.log2(2 * n - 1))
    inner = get_plan(m, num_moduli)
    roots2n = float_roots(2 * n)
    jj = np.arange(n, dtype=np.int64)
    chirp = roots2n[(jj * jj) % (2 * n)]  # exp(-i pi j^2 / n), exponent exact mod 2n
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = chirp.conj()
    kernel[m - n + 1 :] = chirp[1:][::-1].conj()
    from .execute import transform_numpy  # the kernel's spectrum, computed by ozfft

    kernel_hat = transform_numpy(kernel[:, None], inner)[:, 0]
    blue = BluesteinPlan(n, m, chirp, kernel_hat, inner)
    return FFTPlan(n, num_moduli, [], [], bluestein=blue)


_CACHE: OrderedDict[tuple[int, int], FFTPlan] = OrderedDict()
_LOCK = Lock()
_HITS = [0, 0]


def get_plan(n: int, num_moduli: int) -> FFTPlan:
    """Cached plan for length ``n`` with ``num_moduli`` moduli (bounded LRU)."""
    key = (n, num_moduli)
    with _LOCK:
        plan = _CACHE.get(key)
        if plan is not None:
            _CACHE.move_to_end(key)
            _HITS[0] += 1
            return plan
    plan = _build(n, num_moduli)
    with _LOCK:
        _HITS[1] += 1
        _CACHE[key] = plan
        _CACHE.move_to_end(key)
        while len(_CACHE) > config.plan_cache_size():
            _CACHE.popitem(last=False)
    return plan


def clear_plan_cache() -> None:
    """Empty the plan cache (stage matrices and their residues on every engine)."""
    with _LOCK:
        _CACHE.clear()
        _HITS[:] = [0, 0]


def plan_cache_info() -> dict[str, Any]:
    """``{"size", "hits", "misses", "maxsize"}`` of the plan cache."""
    with _LOCK:
        return {
            "size": len(_CACHE),
            "hits": _HITS[0],
            "misses": _HITS[1],
            "maxsize": config.plan_cache_size(),
        }
