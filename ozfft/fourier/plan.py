"""FFT plans: immutable host descriptions — factorization and stage matrices with the
twiddles folded in. Engines prepare a plan into an executor (:mod:`.execute`); the
cache of plans lives in :mod:`.cache`, and Bluestein's chirp-z is built and run in
:mod:`.bluestein`.

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
  product on byte digits with a static rescale (:mod:`ozfft.ozaki.fixed_point`). Three
  layouts (:func:`fixed_layout`):

  - one pass: ``n <= MAX_PASS`` (1024) with radices <= 64 (``plan.stages``), one fused
    pass per axis on the GPU;
  - four-step: ``n <= MAX_MULTIPASS`` (``2**26``) with prime factors <= 64, in passes of
    length <= ``MAX_PASS`` (``plan.four_step``: :class:`FourStep`, the numerics in
    :mod:`ozfft.ozaki.fixed_point`, "Multi-pass lines"); plan memory O(n);
  - Bluestein: a prime factor > 64, the chirp-z convolution in float64 around a
    power-of-two fixed plan of length ``m >= 2n - 1`` (``plan.bluestein``);

* ``"ozaki"`` — every stage an Ozaki-II product (CRT over INT8 moduli) rounded to float;
  any length (Bluestein for large prime factors); chosen by an explicit ``moduli=``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..ozaki.fixed_point import FORMATS, DigitFormat
from ..ozaki.residue_system import int8_system
from .roots import MAX_ROOT_BITS, fixed_roots

__all__ = [
    "MAX_DIRECT",
    "MAX_FIXED",
    "MAX_MULTIPASS",
    "MAX_PASS",
    "MAX_RADIX",
    "BluesteinPlan",
    "FFTPlan",
    "FourStep",
    "Stage",
    "bluestein_length",
    "build_fixed_plan",
    "build_stage_plan",
    "estimate_fixed_plan_bytes",
    "estimate_stage_plan_bytes",
    "factorize",
    "fixed_layout",
    "fixed_point_radices",
    "fixed_stage_mma_k",
    "fixed_stage_mmas",
    "four_step_split",
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
#: longest line of one pass in a four-step plan (read at planning time: tests lower it
#: to force splits of short lengths; clear the plan cache around such a change)
MAX_PASS = MAX_FIXED
#: longest length the fixed-point scheme runs as a four-step plan (and longest
#: power-of-two convolution of a fixed-point Bluestein plan)
MAX_MULTIPASS = 1 << 26


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
class FourStep:
    """A four-step (multi-pass) fixed-point transform of length ``n = n_a n_b``.

    Data viewed row-major as ``(n_a, n_b)``; ``inner_a`` (length ``n_a``: one pass or
    again four-step) runs down the columns, then one pass of ``inner_b`` (length ``n_b``,
    always one pass) per row after the exact twiddle ``twiddle[(k_a j_b) mod n]``; the
    output is the transpose (``k = k_a + n_a k_b``). Numerics:
    :mod:`ozfft.ozaki.fixed_point`, "Multi-pass lines".
    """

    n: int
    n_a: int
    n_b: int
    inner_a: FFTPlan  #: the column transforms (step A)
    inner_b: FFTPlan  #: the row pass (step B), a one-pass plan
    twiddle_bits: int  #: S: ``twiddle = round(2**S exp(-2 pi i m/n))``
    #: int64 (n,): ``fixed_roots(n, S)[0]`` itself (the cached table, read-only)
    twiddle_re: np.ndarray = field(repr=False)
    #: int64 (n,): ``fixed_roots(n, S)[1]``
    twiddle_im: np.ndarray = field(repr=False)

    @property
    def pass_count(self) -> int:
        return self.inner_a.pass_count + 1


@dataclass(frozen=True)
class BluesteinPlan:
    """Chirp-z for length ``n`` through a length-``m`` power-of-two ``inner`` plan
    (built by :func:`ozfft.fourier.bluestein.build_bluestein_plan`)."""

    n: int
    m: int
    chirp: np.ndarray  #: exp(-i pi j**2 / n), j < n, read-only
    kernel_hat: np.ndarray  #: FFT_m of the wrapped conjugate chirp, read-only
    inner: FFTPlan

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes + self.chirp.nbytes + self.kernel_hat.nbytes


@dataclass(frozen=True)
class FFTPlan:
    """Everything a length-``n`` transform needs, as host data (no device state).

    ``scheme`` is ``"fixed"`` (``digit_format`` set) or ``"ozaki"`` (``num_moduli`` set).
    A plan runs its ``stages`` (one pass), or ``four_step`` (a multi-pass fixed-point plan,
    no stages of its own) or ``bluestein`` (lengths with a prime factor > 64; its scheme
    is its inner plan's).
    """

    n: int
    scheme: str
    radices: tuple[int, ...]
    stages: tuple[Stage, ...]
    num_moduli: int | None = None
    digit_format: DigitFormat | None = None
    bluestein: BluesteinPlan | None = None
    four_step: FourStep | None = None

    @property
    def pass_count(self) -> int:
        """Passes over the data of one transform (Bluestein: its two inner transforms)."""
        if self.four_step is not None:
            return self.four_step.pass_count
        if self.bluestein is not None:
            return 2 * self.bluestein.inner.pass_count
        return 1

    def host_arrays(self) -> dict[int, np.ndarray]:
        """Every host array of the plan and its sub-plans, each once (keyed by ``id``)."""
        out: dict[int, np.ndarray] = {}
        for s in self.stages:
            out[id(s.re)], out[id(s.im)] = s.re, s.im
        if self.bluestein is not None:
            blue = self.bluestein
            out[id(blue.chirp)], out[id(blue.kernel_hat)] = blue.chirp, blue.kernel_hat
            out.update(blue.inner.host_arrays())
        if self.four_step is not None:
            fs = self.four_step
            out[id(fs.twiddle_re)], out[id(fs.twiddle_im)] = fs.twiddle_re, fs.twiddle_im
            out.update(fs.inner_a.host_arrays())
            out.update(fs.inner_b.host_arrays())
        return out

    @property
    def nbytes(self) -> int:
        """Host bytes of the plan: stage matrices, twiddle tables, Bluestein's chirp and
        kernel spectrum, sub-plans (arrays shared between sub-plans counted once)."""
        return sum(a.nbytes for a in self.host_arrays().values())


def stage_bits(num_moduli: int, radix: int) -> int:
    """Fixed-point bits of an Ozaki-II stage matrix: about half of ``L - 2 - log2 r``."""
    budget = int8_system(num_moduli).budget_bits
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


def bluestein_length(n: int) -> int:
    """Bluestein's convolution length: the smallest power of two ``>= 2n - 1``."""
    return 1 << (2 * n - 2).bit_length()


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
    """INT8 MMAs of a radix-``r`` stage per 8-line vector tile, as the fused kernel issues
    them: one m16n8k16 per digit pair when ``2r <= 16`` (:func:`fixed_stage_mma_k` is
    16), else ``ceil(2r/16)`` row tiles x ``ceil(2r/32)`` k chunks x digit pairs of
    m16n8k32."""
    pairs = sum(len(fmt.pairs(d)) for d in range(fmt.first_diagonal, fmt.last_diagonal + 1))
    if 2 * r <= 16:
        return pairs
    return -(-2 * r // 16) * -(-2 * r // 32) * pairs


def fixed_stage_mma_k(r: int) -> int:
    """The k of the fused kernel's MMAs in a radix-``r`` stage (m16n8k16 or m16n8k32)."""
    return 16 if 2 * r <= 16 else 32


def _planning_mmas(r: int, fmt: DigitFormat) -> int:
    """The MMA count the radix choice was made with (two digit pairs of a diagonal packed
    into one m16n8k32 where ``2r <= 16``, the signed top data digit alone): kept so that
    the plans, and with them the results, do not change with the kernel's MMA shape."""
    if 2 * r > 16:
        return fixed_stage_mmas(r, fmt)
    total = 0
    for d in range(fmt.first_diagonal, fmt.last_diagonal + 1):
        pairs = fmt.pairs(d)
        top = sum(1 for _, a in pairs if a == fmt.data_digits - 1)
        total += top + -(-(len(pairs) - top) // 2)
    return total


def _fixed_stage_cost(r: int) -> float:
    """The radix choice's cost of a stage: packed MMAs per element plus a charge for
    its epilogue (:func:`_planning_mmas`)."""
    return _planning_mmas(r, FORMATS["fp64"]) / r + 1.0


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


def _one_pass(n: int, max_pass: int) -> bool:
    return 2 <= n <= max_pass and fixed_point_radices(n) is not None


@lru_cache(maxsize=4096)
def _best_split(n: int, max_pass: int) -> tuple[int, int, int] | None:
    """``(passes, longest, n_b)`` of the four-step split of ``n`` with the fewest passes
    and, among those, the shortest longest pass (then the largest ``n_b``); passes = 1,
    n_b = n for a one-pass length. Balanced passes run faster on a GPU: a block holds 8
    lines, so lines of 1024 fill a multiprocessor's shared memory alone and short lines
    give blocks too small to pay for their entry (docs/perf-notes.md, "round 3")."""
    if _one_pass(n, max_pass):
        return (1, n, n)
    best: tuple[int, int, int] | None = None
    for n_b in range(min(max_pass, n // 2), 1, -1):
        if n % n_b or not _one_pass(n_b, max_pass):
            continue
        sub = _best_split(n // n_b, max_pass)
        if sub is None:
            continue
        candidate = (sub[0] + 1, max(sub[1], n_b), n_b)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    return best


def four_step_split(n: int) -> tuple[int, int] | None:
    """``(n_a, n_b)`` of the four-step plan of ``n``: ``n_b <= MAX_PASS`` one pass, the
    fewest passes in all (``n_a`` splits again when longer than a pass), then the shortest
    longest pass, then the largest ``n_b`` (``2**18 = 512 * 512``, ``2**20 = 1024 * 1024``,
    ``2**24 = (256 * 256) * 256``). None when ``n`` is one pass, longer than
    ``MAX_MULTIPASS``, or has a prime factor > 64."""
    return _split(n, MAX_PASS, MAX_MULTIPASS)


@lru_cache(maxsize=4096)
def _split(n: int, max_pass: int, max_multipass: int) -> tuple[int, int] | None:
    if n > max_multipass or n < 2 or _one_pass(n, max_pass):
        return None
    if max(_prime_factors(n)) > MAX_FIXED_RADIX:
        return None
    best = _best_split(n, max_pass)
    return None if best is None else (n // best[2], best[2])


def fixed_layout(n: int) -> str | None:
    """How the fixed-point scheme runs length ``n``: ``"one-pass"``, ``"four-step"``,
    ``"bluestein"`` (a prime factor > 64, convolution length <= ``MAX_MULTIPASS``), or
    None (n < 2, or too long: the Ozaki-II scheme). Every transform call asks (through
    the plan key), so the answer is cached per length and limits."""
    return _layout(n, MAX_PASS, MAX_MULTIPASS)


@lru_cache(maxsize=4096)
def _layout(n: int, max_pass: int, max_multipass: int) -> str | None:
    if n < 2:
        return None
    if _one_pass(n, max_pass):
        return "one-pass"
    if max(_prime_factors(n)) > MAX_FIXED_RADIX:
        return "bluestein" if bluestein_length(n) <= max_multipass else None
    return "four-step" if _split(n, max_pass, max_multipass) is not None else None


def _one_pass_entries(n: int) -> int:
    """Complex entries of the stage matrices of ``n``'s one-pass plan."""
    radices = fixed_point_radices(n)
    total, m = 0, n
    for idx, r in enumerate(radices):
        m //= r
        total += r * r if idx == 0 else radices[idx - 1] * m * r * r
    return total


def _fixed_parts(n: int, parts: dict[tuple[str, int], int]) -> None:
    layout = fixed_layout(n)
    if layout == "one-pass":
        parts[("stages", n)] = 16 * _one_pass_entries(n)
    elif layout == "four-step":
        n_a, n_b = four_step_split(n)
        parts[("twiddle", n)] = 16 * n
        _fixed_parts(n_a, parts)
        _fixed_parts(n_b, parts)
    elif layout == "bluestein":
        m = bluestein_length(n)
        parts[("chirp", n)] = 16 * n + 16 * m  # chirp and kernel spectrum
        _fixed_parts(m, parts)
    else:
        raise ValueError(f"length {n} has no fixed-point plan")


def estimate_fixed_plan_bytes(n: int, precision: str = "fp64") -> int:
    """Host bytes of the fixed-point plan of ``n`` before building it: what
    :attr:`FFTPlan.nbytes` of the built plan reports (sub-plans of one length shared)."""
    if precision not in FORMATS:
        raise ValueError(f"unknown precision {precision!r}")
    parts: dict[tuple[str, int], int] = {}
    _fixed_parts(n, parts)
    return sum(parts.values())


def build_fixed_plan(
    n: int, precision: str, sub_plan: Callable[[int], FFTPlan] | None = None
) -> FFTPlan:
    """Fixed-point plan of ``n`` at ``precision``: one pass (:func:`fixed_point_radices`)
    or four-step (:func:`four_step_split`; its sub-plans from ``sub_plan(length)``,
    default: built here). Bluestein lengths are built by the plan cache."""
    fmt = FORMATS[precision]
    layout = fixed_layout(n)
    if layout == "one-pass":
        radices = fixed_point_radices(n)
        stages = _build_stages(n, list(radices), lambda r: fmt.matrix_bits)
        return FFTPlan(n, "fixed", radices, stages, digit_format=fmt)
    if layout != "four-step":
        raise ValueError(f"length {n} has no one-pass or four-step fixed-point plan")
    if sub_plan is None:
        sub_plan = lambda m: build_fixed_plan(m, precision)  # noqa: E731
    n_a, n_b = four_step_split(n)
    inner_a, inner_b = sub_plan(n_a), sub_plan(n_b)
    if inner_b.four_step is not None or inner_b.bluestein is not None:
        raise ValueError(f"the row pass of length {n_b} must be one pass")
    tw_re, tw_im = fixed_roots(n, fmt.matrix_bits)
    steps = FourStep(n, n_a, n_b, inner_a, inner_b, fmt.matrix_bits, tw_re, tw_im)
    return FFTPlan(n, "fixed", (), (), digit_format=fmt, four_step=steps)
