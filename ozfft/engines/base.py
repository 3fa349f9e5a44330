"""The engine interface: the four stages of an Ozaki-II product.

An engine owns one array library (numpy, cupy) and implements each stage of the
scheme on it. Operands arrive "row-major over k": ``A`` as ``(..., m, k)`` and ``B``
transposed as ``Bt = (..., n, k)``, so one code path scales rows of both. The
engine-independent driver (:mod:`ozfft.scheme.gemm`) turns the statistics into
shifts with the integer rules of :mod:`ozfft.ozaki.scaling` and calls the stages in
order. Two engines given the same input must return bit-identical results.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from .. import config
from ..errors import DeviceUnavailableError
from ..ozaki.bounds import INDEX_HASH_MULT, index_hash_weights
from ..ozaki.residue_system import ResidueSystem
from ..ozaki.scaling import fast_shift, norm1_exponent_fast
from ..profiling import Clock, HostClock

__all__ = [
    "AUTO_PHASE_A",
    "COMPLEX_PRODUCTS",
    "FP8_MIN_COMPUTE_CAPABILITY",
    "ArrayFlag",
    "Engine",
    "PendingProbe",
    "ProbeRules",
    "ResidueStack",
    "RowStats",
    "TiledProbe",
    "auto_phase_a",
    "check_complex_method",
    "check_fp8_tensor_cores",
    "complex_products",
    "compute_capability",
    "parse_compute_capability",
    "phase_a_for_device",
]


#: real Phase-A products per modulus of a complex product, by ``complex_method``:
#: "gaussian" (a Gaussian residue system only, ozfft.ozaki.residue_system), "karatsuba",
#: "4m"; every method gives the same residues
COMPLEX_PRODUCTS = {"gaussian": 2, "karatsuba": 3, "4m": 4}


def check_complex_method(complex_method: str) -> None:
    """``ValueError`` unless ``complex_method`` is one of :data:`COMPLEX_PRODUCTS`."""
    if complex_method not in COMPLEX_PRODUCTS:
        raise ValueError(
            f"complex_method must be one of {tuple(COMPLEX_PRODUCTS)}, got {complex_method!r}"
        )


def complex_products(moduli: Any, complex_method: str) -> int:
    """Products per modulus of a complex product by ``complex_method`` on ``moduli``; raises
    ``ValueError`` for an unknown method, or ``"gaussian"`` on any but a Gaussian system
    (and another method on one: its residue planes are ``rmod(re +- j im)``)."""
    check_complex_method(complex_method)
    if moduli.gaussian != (complex_method == "gaussian"):
        raise ValueError(
            "complex_method='gaussian' runs on a Gaussian residue system, and only it: got "
            f"{complex_method!r} on moduli {moduli.moduli}"
        )
    return COMPLEX_PRODUCTS[complex_method]


@dataclass(frozen=True)
class RowStats:
    """Integer statistics of the rows of an operand (shape ``(..., rows)``).

    max_exp: ``E``, the largest frexp exponent in the row (``ZERO_ROW_EXP`` if all zero).
    sumsq: fixed-point upper bound ``S`` of the row's squared 2-norm (fast mode only).
    pending_check: the operand's NaN/Inf test when it was deferred
    (``row_stats(..., defer_check=True)``): :meth:`check_finite` runs it; None when
    ``row_stats`` has checked already.
    """

    max_exp: Any
    sumsq: Any | None
    pending_check: Callable[[], None] | None = None

    def check_finite(self) -> None:
        """Raise :class:`~ozfft.errors.NonFiniteInputError` if the operand had NaN or
        Inf (a deferred test waits for the statistics only, not for later work)."""
        if self.pending_check is not None:
            self.pending_check()


@dataclass(frozen=True)
class TiledProbe:
    """What the accuracy plan's tiled test reads at one moduli count
    (:meth:`Engine.tiled_plan_probe`), as host integers.

    deficit_a, deficit_b: the largest deficit (bits missing) over the rows of A and of
    ``Bt`` under the tiled pairing rule (0: every row passes).
    maxima: ``max nb`` of A, ``max E`` of Bt, ``max nb`` of Bt, ``max E`` of A (the
    output-overflow test of a single product).
    """

    deficit_a: int
    deficit_b: int
    maxima: tuple[int, int, int, int]


@dataclass(frozen=True)
class ProbeRules:
    """The integers of the accuracy plan's tiled test at one moduli count, as
    :meth:`Engine.tiled_plan_probe` takes them (``ozfft.scheme.gemm`` forms them).

    budget_bits: the CRT budget ``L`` whose fast-mode shifts the test checks.
    lower_bound_bits: ``g``, the bits of the magnitudes the lower-bound products take.
    pairing_offset: the pairing rule's constant (:func:`~ozfft.ozaki.bounds.pairing_offset`
    of the truncation budget and ``g``).
    terms: real products per output part (``k``, or ``2k`` for complex operands), over
    which the 1-norm exponents are taken.
    never: the deficit of a row that no moduli count can serve.
    tile: rows per tile of the lower-bound products.
    """

    budget_bits: int
    lower_bound_bits: int
    pairing_offset: int
    terms: int
    never: int
    tile: int


@dataclass(frozen=True)
class PendingProbe:
    """The accuracy plan's tiled test in flight (:meth:`Engine.tiled_plan_probe`):
    calling it waits for the pass and returns its :class:`TiledProbe`. An engine may queue
    the part of the pass that nothing else reads (the test itself) only at that first call,
    so that work queued in between (a speculative product) does not wait for it.

    shifts: ``(shift_a, shift_b)``, the fast-mode shifts of A's and Bt's rows for the
    pass's CRT budget (int32 arrays shaped ``(..., m)`` and ``(..., n)``), where the pass
    formed them from its own statistics, else None; work queued after the pass may read
    them (:meth:`Engine.fused_fast_product`) before the pass is waited for. An engine's
    own prepared call may read them by address and leave this None; a product given None
    forms the same shifts itself (the near-overflow product after such a call does).

    bt: Bt as C-contiguous rows over k, the prepared operand the caller reads from then
    on: the pass's own copy where it was given a transposed view (it may write that copy
    while reading B in place), else the ``bt`` it was given; None where the pass read B in
    place and formed no rows of it (the caller prepares them where it needs them).
    """

    read: Callable[[], TiledProbe]
    shifts: tuple[Any, Any] | None = None
    bt: Any = None

    def __call__(self) -> TiledProbe:
        return self.read()


@dataclass(frozen=True)
class ResidueStack:
    """Residues of one operand for every modulus.

    planes: ``(N, ..., rows, k)`` for a real operand, ``(N, 2, ..., rows, k)`` (real and
    imaginary parts) for a complex one; INT8-range values in the engine's storage type.
    """

    planes: Any
    is_complex: bool


class ArrayFlag:
    """A non-finite flag in a one-element int32 array of ``xp`` (zeroed when made; read
    with a blocking copy)."""

    __slots__ = ("array",)

    def __init__(self, xp: Any) -> None:
        self.array = xp.zeros(1, xp.int32)

    def raised(self) -> bool:
        return bool(int(self.array.get()[0]))


#: entries per block of the generic column hash's temporaries
_HASH_BLOCK_ENTRIES = 1 << 24


class Engine(abc.ABC):
    """One implementation of the Ozaki-II stages on one array library.

    Stages: 1 ``row_stats`` (+ ``bound_operand``/``bound_product`` in accurate mode),
    2 ``residues``, 3+4 ``exact_product`` (Phase A and Phase B).
    """

    name: ClassVar[str]
    #: whether :meth:`tiled_plan_probe` may answer for operands of any k given their
    #: statistics (callers skip preparing its inputs otherwise)
    has_plan_probe: ClassVar[bool] = False
    #: whether the accuracy plan's split search evaluates every moduli count at once (one
    #: round of work and one read) rather than count by count, stopping at the first that
    #: suffices: worth it where each step costs a launch and a read (a GPU), not where
    #: steps are array work alone (the same plan and bits either way)
    stacked_split_search: ClassVar[bool] = False

    @property
    @abc.abstractmethod
    def xp(self) -> Any:
        """The array module (numpy or cupy)."""

    def clock(self) -> Clock:
        """The :class:`ozfft.profiling.Clock` of this engine's work (host wall clock)."""
        return HostClock()

    def device_key(self) -> tuple:
        """What identifies this engine's device state (executor caches key on it)."""
        return (self.name,)

    def prepare_fft(self, plan: Any, phase_a: str = "int8") -> Any | None:
        """An engine-specific executor for an FFT plan (a host description, see
        ``ozfft.fourier.plan``) whose products run in ``phase_a`` (``"int8"``, ``"fp8"``),
        or None to run it on the generic executors."""
        return None

    def new_input_flag(self) -> Any:
        """A zeroed non-finite flag for a fused pass to raise (``ozfft.fourier.input_check``):
        ``.array``, the int32 array the kernel writes, and ``.raised()``, which waits for
        the work and reads it. Default: a one-element array of :attr:`xp`."""
        return ArrayFlag(self.xp)

    def conj_divide(self, y: Any, conj: bool, divisors: Sequence[float]) -> None:
        """The end of an FFT, in place on complex128 ``y``: ``y = conj(y)`` if ``conj``,
        then ``y.real /= d`` and ``y.imag /= d`` for each divisor ``d`` in order (each an
        IEEE float64 division, correctly rounded; engines that fuse the sweeps must give
        the same bits)."""
        if conj:
            self.xp.conj(y, out=y)
        for d in divisors:
            y.real /= d
            y.imag /= d

    def astype(self, x: Any, dtype: Any) -> Any:
        """``x`` in ``dtype`` as IEEE arithmetic converts it: exact where ``dtype`` is
        wider, else rounded once to nearest (ties to even), subnormals kept (no copy where
        the dtype is already ``dtype``)."""
        return x.astype(dtype, copy=False)

    def prepare_operand(self, x: Any) -> Any:
        """The operand in the layout the stages read fastest (default: unchanged)."""
        return x

    # -- stage 1: scaling ------------------------------------------------------------
    @abc.abstractmethod
    def row_stats(
        self, x: Any, operand: str, *, need_sumsq: bool, defer_check: bool = False
    ) -> RowStats:
        """Exponent statistics of the rows of ``x``; raises NonFiniteInputError, or
        with ``defer_check`` may leave that test to :meth:`RowStats.check_finite` (so
        that a GPU engine need not wait for the statistics before queueing more work)."""

    @abc.abstractmethod
    def bound_operand(self, x: Any, max_exp: Any, bound_bits: int) -> Any:
        """Accurate mode: small integers ``ceil(2**(g-E)|x|)`` (complex: sum of parts)."""

    @abc.abstractmethod
    def bound_product(self, abar: Any, btbar: Any, bound_bits: int) -> Any:
        """Accurate mode: exact ``Abar @ Btbar^T`` (entries < 2**12 k)."""

    def fast_stats(
        self, a: Any, bt: Any, budget_bits: int, *, defer_check: bool = False
    ) -> tuple[RowStats, RowStats, Any, Any]:
        """Fast-mode statistics of both prepared operands (:meth:`row_stats` with
        ``need_sumsq``; A's NaN/Inf test before Bt's) and their shifts for the CRT budget
        ``budget_bits`` (:meth:`fast_shift`): ``(stats_a, stats_b, shift_a, shift_b)``.
        Engines may form all of it in one pass; the integers are the stages'."""
        sa = self.row_stats(a, "a", need_sumsq=True, defer_check=defer_check)
        sb = self.row_stats(bt, "b", need_sumsq=True, defer_check=defer_check)
        shift_a = self.fast_shift(sa.max_exp, sa.sumsq, budget_bits)
        return sa, sb, shift_a, self.fast_shift(sb.max_exp, sb.sumsq, budget_bits)

    def fast_shift(self, max_exp: Any, sumsq: Any, budget_bits: int | tuple[int, ...]) -> Any:
        """Fast-mode row shifts (:func:`ozfft.ozaki.scaling.fast_shift`, an integer array)
        for the CRT budget ``budget_bits``, or for a tuple of budgets at once (stacked
        along a new leading axis). Engines may fuse the rule's elementwise steps; the
        integers are the rule's."""
        xp = self.xp
        if isinstance(budget_bits, tuple):
            budget = xp.asarray(budget_bits, xp.int64).reshape(-1, *([1] * max_exp.ndim))
            return fast_shift(xp, max_exp, sumsq, budget)
        return fast_shift(xp, max_exp, sumsq, budget_bits)

    def norm1_exponent_fast(self, max_exp: Any, sumsq: Any, terms: int) -> Any:
        """``nb`` with ``||row||_1 <= 2**nb`` from the fast-mode statistics
        (:func:`ozfft.ozaki.scaling.norm1_exponent_fast`, an integer array); engines may
        fuse it."""
        return norm1_exponent_fast(self.xp, max_exp, sumsq, terms)

    def scaled_minima(self, g: Any, row_scale: Any, col_scale: Any) -> tuple[Any, Any]:
        """``min_j g_ij col_scale_j`` per row and ``min_i g_ij row_scale_i`` per column of
        non-negative matrices ``g`` ``(..., m, n)`` (the accuracy plan's pairing rule):
        exact when the scales are powers of two that keep every product finite, so any
        engine's order of comparisons gives the same values."""
        row_min = (g * col_scale[..., None, :]).min(axis=-1)
        col_min = (g * row_scale[..., :, None]).min(axis=-2)
        return row_min, col_min

    def column_hash(self, x: Any, salt: int) -> Any:
        """A 64-bit hash of every inner index ``h`` of ``x`` (..., rows, k) (the accuracy
        plan's sample of ``k``): the bit patterns of ``x[..., h]`` weighted by the odd row
        weights :func:`~ozfft.ozaki.bounds.index_hash_weights` (rows of the flattened
        stack), summed modulo 2**64 (:meth:`weighted_column_sums`); a complex entry's two
        sums ``s_re + s_im MULT``. It moves with its column when ``k`` is permuted.
        Returns uint64 of length ``k``."""
        xp = self.xp
        k = x.shape[-1]
        words = xp.ascontiguousarray(x).reshape(-1, k).view(xp.uint64)  # complex: re, im
        h = self.weighted_column_sums(words, salt)
        if h.shape[0] == k:
            return h
        h = h.reshape(k, -1)
        return h[:, 0] + h[:, 1] * xp.uint64(INDEX_HASH_MULT)

    def weighted_column_sums(self, words: Any, salt: int) -> Any:
        """``sum_r words[r, c] w_r`` modulo 2**64 for every column of ``words`` (R, C)
        uint64, ``w = index_hash_weights(R, salt)``: :meth:`column_hash`'s sums. The sums
        wrap, so any order gives them; here in blocks of rows (bounded temporaries)."""
        xp = self.xp
        w = index_hash_weights(xp, words.shape[0], salt)
        h = xp.zeros(words.shape[1], xp.uint64)
        step = max(1, _HASH_BLOCK_ENTRIES // max(words.shape[1], 1))
        for r0 in range(0, words.shape[0], step):
            rows = slice(r0, r0 + step)
            h += (words[rows] * w[rows, None]).sum(axis=0, dtype=xp.uint64)
        return h

    # -- stage 2: residues -----------------------------------------------------------
    @abc.abstractmethod
    def residues(
        self, x: Any, shift: Any, moduli: ResidueSystem, rounding: str = "trunc"
    ) -> ResidueStack:
        """Symmetric residues of ``trunc(2**shift x)`` (``rounding="nearest"``: the
        rounding of :func:`ozfft.ozaki.scaling.scaled_integers`) for every modulus
        (exact)."""

    @abc.abstractmethod
    def integer_residues(self, re: Any, im: Any, moduli: ResidueSystem) -> ResidueStack:
        """Residue stack of a complex *integer* operand given as int64 numpy arrays
        ``(..., rows, k)`` with ``|value| < 2**62`` (the FFT's fixed-point stage matrices)."""

    # -- stages 3+4: Phase A and Phase B -----------------------------------------------
    @abc.abstractmethod
    def exact_product(
        self,
        ra: ResidueStack,
        rbt: ResidueStack,
        shift_a: Any,
        shift_b: Any,
        moduli: ResidueSystem,
        out_dtype: Any,
        *,
        complex_method: str = "karatsuba",
    ) -> Any:
        """``2**-(sigma_i + tau_j) (A'Bt'^T)_ij`` rounded once to ``out_dtype``.

        Phase A forms ``A'_i Bt'_i^T`` exactly per modulus (three products per modulus
        for complex operands, by Karatsuba on residues; ``complex_method="4m"`` uses four;
        ``"gaussian"``, on a Gaussian residue system only, two);
        Phase B rebuilds the integer by the CRT in exact multi-limb arithmetic and rounds.
        Engines may interleave the two (the CUDA engine does, per block of columns).
        """

    def fused_product(
        self,
        a: Any,
        bt: Any,
        shift_a: Any,
        shift_b: Any,
        moduli: ResidueSystem,
        out_dtype: Any,
        *,
        rounding: str,
    ) -> Any | None:
        """:meth:`residues` of both prepared operands and their :meth:`exact_product` in
        one pass, where this engine has one for the shape and ``moduli`` (the Phase-A
        system: a complex product's Gaussian system); None otherwise, and the caller
        stages them. The same integers, hence the same bits. This engine has none."""
        return None

    def fused_fast_product(
        self,
        a: Any,
        bt: Any,
        budget_bits: int,
        moduli: ResidueSystem,
        out_dtype: Any,
        *,
        rounding: str,
        counted: bool = False,
        shifts: tuple[Any, Any] | None = None,
    ) -> Any | None:
        """:meth:`fused_product` with the fast-mode shifts for the CRT budget
        ``budget_bits`` (:meth:`row_stats`, :meth:`fast_shift`) formed in the same pass,
        non-finite entries raised as :class:`~ozfft.errors.NonFiniteInputError` (A before
        B), or None; the same bits as the staged stages. ``counted``: the caller has
        counted the operands' NaN and Inf entries already (:meth:`tiled_plan_probe`) and
        raises them itself, so the call need not wait for its own count. ``shifts``:
        those shifts already formed (:attr:`PendingProbe.shifts`; then ``counted``), read
        instead of formed. This engine has none."""
        return None

    def fast_product_executor(
        self,
        a: Any,
        bt: Any,
        budget_bits: int,
        moduli: ResidueSystem,
        out_dtype: Any,
        *,
        rounding: str,
    ) -> Callable[[Any, Any], Any] | None:
        """:meth:`fused_fast_product` prepared for operands of these shapes and layouts
        (``bt`` the view ``swapaxes(b, -1, -2)``): a function ``run(a, b)`` of operands
        laid out as these that returns ``fused_fast_product(a, swapaxes(b, -1, -2), ...)``
        (its NaN/Inf test included) with all that depends only on shapes and layouts
        decided once; None where the one pass does not apply. This engine has none."""
        return None

    def probed_product_executor(
        self,
        a: Any,
        bt: Any,
        rules: ProbeRules,
        *,
        moduli: ResidueSystem,
        out_dtype: Any,
        rounding: str,
    ) -> Callable[[Any, Any], tuple[Any, PendingProbe]] | None:
        """:meth:`tiled_plan_probe` computing its own statistics, and
        :meth:`fused_fast_product` on the shifts it forms (``counted``), prepared for
        operands of these shapes and layouts (``bt`` the view ``swapaxes(b, -1, -2)``): a
        function ``run(a, b)`` that queues both and returns ``(product, pending probe)``,
        as the two calls would (except that the probe's :attr:`PendingProbe.bt` may be
        None where both read B in place), with all that depends only on shapes and layouts
        decided once; None where either does not apply. This engine has none."""
        return None

    def tiled_plan_probe(
        self,
        a: Any,
        bt: Any,
        rules: ProbeRules,
        *,
        stats: tuple[RowStats, RowStats] | None = None,
        index: Any | None = None,
    ) -> PendingProbe | None:
        """The accuracy plan's first test in one pass, where this engine has one for the
        shape: the fast-mode statistics of both prepared operands (or ``stats``, from
        :meth:`row_stats` with ``need_sumsq``), their 1-norm exponents over
        ``rules.terms`` products (:meth:`norm1_exponent_fast`), the shifts for the CRT
        budget ``rules.budget_bits`` (:meth:`fast_shift`), the lower-bound products of
        tiles of ``rules.tile`` rows from ``rules.lower_bound_bits``-bit magnitudes of the
        inner indices ``index`` (None: all of k; their minima over the tile's rows) and the
        deficits of the pairing rule with ``rules.pairing_offset`` (``rules.never``: the
        deficit past any count), as ``ozfft.scheme.gemm`` forms them from those stages, in
        the same integers (:class:`ProbeRules`).
        ``bt`` may also be the transposed view ``swapaxes(b, -1, -2)`` of B
        (:attr:`PendingProbe.bt` is then its prepared copy).

        Returns a :class:`PendingProbe`, which waits for the pass when called and returns
        its :class:`TiledProbe` (raising :class:`~ozfft.errors.NonFiniteInputError`, A
        before B, for NaN or Inf entries when it computed the statistics), so that the
        caller may queue work meanwhile (with the shifts the pass formed); None where the
        engine has no such pass (the caller runs the stages). This engine has none."""
        return None


def parse_compute_capability(text: str) -> tuple[int, int]:
    """``(major, minor)`` of cupy's compute-capability string: ``"90"`` -> (9, 0),
    ``"100"`` -> (10, 0), ``"120"`` -> (12, 0) (the minor version is the last digit)."""
    if not (isinstance(text, str) and len(text) >= 2 and text.isdigit()):
        raise ValueError(f"not a compute capability: {text!r}")
    return int(text[:-1]), int(text[-1])


def compute_capability(device_id: int | None = None) -> tuple[int, int]:
    """``(major, minor)`` of a CUDA device (default: cupy's current one; read once per
    device: every default ``matmul`` call asks)."""
    import cupy

    return _capability_of(cupy.cuda.runtime.getDevice() if device_id is None else device_id)


@cache
def _capability_of(device_id: int) -> tuple[int, int]:
    import cupy

    return parse_compute_capability(cupy.cuda.Device(device_id).compute_capability)


# -- Phase A by device: "int8", "fp8" or "auto" (resolved in engines/select.py) ------

#: What ``phase_a="auto"`` picks on a CUDA device: ``(first compute capability, Phase A)``,
#: newest first; a device takes the first row its compute capability reaches. INT8 wherever
#: the dense INT8 tensor-core rate is at least the FP8 rate (one INT8 product per modulus
#: against ~3 FP8 digit products): Ada (8.9), Hopper (9.0) and Blackwell B200 (10.0) have
#: equal dense INT8 and FP8 peaks; before 8.9 there are no FP8 tensor cores at all. FP8 from
#: Blackwell Ultra (compute capability 10.3: B300, GB300) on, where NVIDIA cut dense INT8
#: to a small fraction of the FP8 rate (NVIDIA's Blackwell Ultra / HGX B300 specifications).
#: FP8's exactness rests on FP32 sums below 2**24, measured on Hopper's mma.sync path
#: (docs/numerics.md, "FP8 accumulation"); run ``ozfft bench fp8`` on a new GPU before
#: trusting it there. ``OZFFT_PHASE_A`` or ``phase_a=`` override the table.
AUTO_PHASE_A: tuple[tuple[tuple[int, int], str], ...] = (
    ((10, 3), "fp8"),
    ((0, 0), "int8"),
)
#: the first compute capability with FP8 (e4m3) tensor cores (Ada)
FP8_MIN_COMPUTE_CAPABILITY = (8, 9)


def _check_phase_a_choice(phase_a: str) -> None:
    if phase_a not in config.PHASE_A_CHOICES:
        choices = ", ".join(repr(c) for c in config.PHASE_A_CHOICES)
        raise ValueError(f"phase_a must be one of {choices} or None, got {phase_a!r}")


def auto_phase_a(capability: tuple[int, int]) -> str:
    """``"int8"`` or ``"fp8"``: what ``"auto"`` picks on a device of this compute
    capability (:data:`AUTO_PHASE_A`)."""
    for first, phase in AUTO_PHASE_A:
        if tuple(capability) >= first:
            return phase
    return "int8"


def check_fp8_tensor_cores(capability: tuple[int, int]) -> None:
    """Raise :class:`DeviceUnavailableError` where a device of this compute capability has
    no FP8 tensor cores (before 8.9)."""
    major, minor = capability
    if tuple(capability) < FP8_MIN_COMPUTE_CAPABILITY:
        low_major, low_minor = FP8_MIN_COMPUTE_CAPABILITY
        raise DeviceUnavailableError(
            f"phase_a='fp8' needs FP8 tensor cores: this device has no FP8 tensor cores "
            f"(compute capability {major}.{minor} < {low_major}.{low_minor}); use "
            "phase_a='int8' or 'auto'"
        )


def phase_a_for_device(phase_a: str, capability: tuple[int, int]) -> str:
    """The Phase A (``"int8"`` or ``"fp8"``) that ``phase_a`` (``"int8"``, ``"fp8"``,
    ``"auto"``) means on a CUDA device of this compute capability; ``"fp8"`` on a device
    without FP8 tensor cores raises :class:`DeviceUnavailableError`."""
    _check_phase_a_choice(phase_a)
    if phase_a == "auto":
        return auto_phase_a(capability)
    if phase_a == "fp8":
        check_fp8_tensor_cores(capability)
    return phase_a
