"""The engine-independent Ozaki-II product: scaling -> residues -> Phase A -> Phase B,
and the plan that keeps ``ozfft.matmul``'s accuracy guarantee.

:func:`emulated_matmul` runs one product with a given moduli count (``moduli=``, no
guarantee). :func:`guaranteed_matmul` first decides, from exact integer statistics of
the operands, a :class:`MatmulPlan`: the fewest moduli (default 16 / 8, at most 20)
for which the componentwise bound ``k u (|A||B|)_ij`` of docs/numerics.md ("The
accuracy guarantee of matmul") is proved; else hi/lo splits of the operands (up to
:data:`~ozfft.ozaki.bounds.MAX_PRODUCTS` exact products summed in float64); else
"native" (the caller runs the native routine). Every quantity the decision reads is an
exact integer (or an exactly computed float64 integer), so both engines take the same
decision and return the same bits; on a GPU the decision costs one small device->host
read per stage of the search (one for well-scaled inputs).

FP8 Phase A (``phase_a="fp8"``) takes the same decision in INT8 moduli counts (at most
:func:`fp8_max_moduli`, 18: FP8 residue systems reach 141 bits) and runs each exact
product on :func:`fp8_system_for` that count: an FP8 system with at least the INT8
moduli's bits, scaled with the INT8 count's budget. The exact integer products are the
same, so the result is bitwise that of ``phase_a="int8"`` whenever both plans agree (they
differ only where INT8 would need 19 or 20 moduli: FP8 then splits, or runs natively).

The decision, per operand row (A's rows, B's columns, as rows of ``Bt``):

* ``q_i = sigma_i + E_i``: bits the row keeps above its grid ``2**-sigma_i``;
* element rule: ``sigma_i + e_min,i >= min(p_in, max(r + 2, 7))`` (every entry exact or,
  rounded to nearest, within relative ``2**-(r+2)``; ``e_min`` is read only when needed);
* pairing rule: ``floor_log2 G_ij >= (r + 1 + 2g - q_i) + (nb_j - E_j)`` where
  ``2**(E_i+E_j-2g) G_ij <= (|A||B|)_ij`` is an exact lower bound from ``g``-bit floor
  magnitudes on at most :data:`SUBSET` inner indices (picked by a content hash, so
  permuting ``k`` changes nothing), first for tiles of :data:`TILE` x :data:`TILE`
  entries (minimum magnitudes over the tile's rows: a bound for every entry of the
  tile; cheap), then, if that fails, entry by entry.

A row passes when either rule holds; the deficits (bits missing) of all rows reduce to
one integer per operand and moduli count (the shifts of every count from the default to
20 are computed at once), so one read decides the count.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import Any, NamedTuple, NoReturn

import numpy as np

from .._logging import logger
from ..engines.base import Engine, PendingProbe, ProbeRules, TiledProbe, check_complex_method
from ..errors import DeviceMemoryError, NonFiniteInputError
from ..ozaki.bounds import (
    INDEX_HASH_MIX,
    MAX_PRODUCTS,
    default_moduli,
    element_deficit,
    lower_bound_bits,
    pairing_offset,
    truncation_budget,
    truncation_slack,
)
from ..ozaki.moduli import MAX_MODULI, MIN_MODULI
from ..ozaki.residue_system import (
    PHASE_A_KINDS,
    ResidueSystem,
    fp8_system,
    gaussian_system,
    int8_system,
)
from ..ozaki.scaling import (
    ZERO_ROW_EXP,
    accurate_bound_bits,
    accurate_shift,
    norm1_exponent_bound,
)

__all__ = [
    "SINGLE_ROUNDING",
    "SPLIT_ROUNDING",
    "SUBSET",
    "TILE",
    "MatmulPlan",
    "compute_shifts",
    "emulated_matmul",
    "explicit_product_executor",
    "fp8_max_moduli",
    "fp8_system_for",
    "gaussian_system_for",
    "guaranteed_matmul",
    "guaranteed_plan",
    "plan_matmul",
]

#: inner indices (a strided subset) of the lower-bound product of the pairing rule
SUBSET = 128
#: rows and columns per tile of the cheap (first) pairing test
TILE = 4
#: entries per block of the decision's passes over the operands and the products: their
#: temporaries stay at 128 MiB each, and a GPU runs few, large kernels (with blocks of 2**20
#: entries the plan of a 16384^3 product took 233 ms on an H200, most of it launching the
#: ~10 small kernels of each of 272 blocks; docs/perf-notes.md)
_BLOCK_ENTRIES = 1 << 24
#: the scaled integers of a single exact product, ``moduli=`` or planned
#: (:func:`~ozfft.ozaki.scaling.scaled_integers`): rounded to nearest where
#: ``|2**sigma a| >= 64``, so each entry's error is at most half a unit (truncation: below
#: one); the CRT bound and the guarantee's rules still hold (docs/numerics.md)
SINGLE_ROUNDING = "nearest"
#: the scaled integers of split products: truncated, so that a hi and a lo part share the
#: entry's sign (the rounding error bound of their sum, docs/numerics.md, "Splits"); also
#: those of a planned single product near the output's overflow threshold
#: (:meth:`_Planner.near_overflow`)
SPLIT_ROUNDING = "trunc"
#: ``emax`` of each output format (``2**emax`` overflows it), by significand bits
_OVERFLOW_EXP = {53: 1024, 24: 128, 11: 16}
#: "infinitely many bits": a deficit no moduli count can meet
_NEVER = 1 << 24
#: most bytes of one operand's remainders the split search forms at once, every moduli
#: count's stacked, on engines that search so (:attr:`Engine.stacked_split_search`;
#: :meth:`_Planner._first_split`); a larger operand forms one count's remainder at a time
#: (the stack takes a few temporaries of its size, which the plan's memory check does
#: not count)
_STACKED_SPLIT_BYTES = 1 << 24
#: "no inner-index subset given": the decision picks it (:func:`_subset`; its own None
#: means all of k)
_PICK = object()

#: a context-manager factory ``timer(name)`` for the decision's own work (the API
#: layer passes ``ozfft.profiling.phase`` bound to the engine's clock)
Timer = Callable[[str], AbstractContextManager]


def _no_timer(name: str) -> AbstractContextManager:
    return nullcontext()


@dataclass(frozen=True)
class MatmulPlan:
    """How one ``ozfft.matmul`` call is computed.

    moduli: INT8 moduli per exact product (0 when native); with ``phase_a="fp8"`` the
    count whose bits the FP8 residue system provides (:func:`fp8_system_for`).
    split_a, split_b: whether A (B) is split into hi and lo parts (one exact product per
    pair of parts, summed in float64).
    native: computed by the native routine (numpy / cupy ``matmul``).
    guaranteed: the accuracy guarantee holds (False only for an explicit ``moduli=``).
    reason: one line saying why.
    phase_a: the arithmetic of Phase A, ``"int8"`` or ``"fp8"`` (resolved).
    is_complex: a complex product (its INT8 Phase A runs on :attr:`phase_a_system`).
    """

    moduli: int
    split_a: bool = False
    split_b: bool = False
    native: bool = False
    guaranteed: bool = True
    reason: str = ""
    phase_a: str = "int8"
    is_complex: bool = False

    def __post_init__(self) -> None:
        if self.phase_a not in PHASE_A_KINDS:
            raise ValueError(f"a plan's phase_a is one of {PHASE_A_KINDS}, not {self.phase_a!r}")

    @property
    def products(self) -> int:
        """Exact Ozaki-II products the plan runs (0 when native)."""
        return 0 if self.native else (1 + self.split_a) * (1 + self.split_b)

    @property
    def system(self) -> ResidueSystem:
        """The moduli whose budget the scaling keeps: the first :attr:`moduli` INT8
        moduli, or for ``phase_a="fp8"`` the FP8 residue system with at least their bits
        (scaled with the INT8 count's budget, :func:`fp8_system_for`). Phase A runs on
        these, except a complex INT8 product, which runs on their Gaussian stand-in
        (:attr:`phase_a_system`). A native plan has none (``ValueError``)."""
        if self.native:
            raise ValueError(f"a native plan runs no Phase A, so it has no moduli ({self.reason})")
        if self.phase_a == "fp8":
            return fp8_system_for(self.moduli)
        return int8_system(self.moduli)

    @property
    def phase_a_system(self) -> ResidueSystem:
        """The moduli Phase A runs on by default: :attr:`system`, or for a complex INT8
        product the Gaussian system standing in for it (:func:`gaussian_system_for`;
        two real products per modulus, the same bits). A native plan has none."""
        return _phase_a_moduli(self.system, self.is_complex, "gaussian")[0]

    def describe(self) -> str:
        """Short form: ``"16"``, ``"20"``, ``"16 x2 (a split)"``, ``"native"``; with FP8
        Phase A the FP8 system's bits in place of the count: ``"fp8 127 bits"``,
        ``"fp8 127 bits x4 (a and b split)"``."""
        if self.native:
            return "native"
        if self.phase_a == "fp8":
            head = f"fp8 {math.floor(self.system.log2_product)} bits"
        else:
            head = str(self.moduli)
        if self.products == 1:
            return head
        parts = " and ".join(name for name, s in (("a", self.split_a), ("b", self.split_b)) if s)
        return f"{head} x{self.products} ({parts} split)"


@cache
def fp8_system_for(num_moduli: int) -> ResidueSystem:
    """The FP8 residue system that stands in for ``num_moduli`` INT8 moduli: the fewest
    FP8 digit products whose CRT range has at least ``ceil(log2 P)`` bits, ``P`` the
    product of those INT8 moduli. The scaling keeps the INT8 count's budget ``L =
    floor(log2 P)``, and ``2**L < P_fp8``, so the same scaled integers are recovered
    exactly: the result is bitwise that of the INT8 moduli, and whatever the INT8 count
    proves (the accuracy guarantee) holds as it is. Raises ``ValueError`` past
    :func:`fp8_max_moduli` (FP8 moduli reach 141 bits)."""
    int8 = int8_system(num_moduli)
    try:
        system = fp8_system(math.ceil(int8.log2_product))
    except ValueError as exc:
        raise ValueError(
            f"phase_a='fp8' provides the bits of at most {fp8_max_moduli()} INT8 moduli "
            f"(FP8 residue systems reach 141 bits), not {num_moduli} "
            f"({int8.log2_product:.1f} bits)"
        ) from exc
    if system.budget_bits < int8.budget_bits:
        raise AssertionError("an FP8 system must hold the INT8 moduli's budget")
    return system


@cache
def fp8_max_moduli() -> int:
    """The most INT8 moduli whose bits an FP8 residue system provides (18)."""
    best = MIN_MODULI - 1
    for n in range(MIN_MODULI, MAX_MODULI + 1):
        try:
            fp8_system(math.ceil(int8_system(n).log2_product))
        except ValueError:
            break
        best = n
    return best


@cache
def gaussian_system_for(moduli: ResidueSystem) -> ResidueSystem | None:
    """The Gaussian INT8 system (two real products per modulus for a complex product,
    :mod:`ozfft.ozaki.residue_system`) that stands in for the INT8 ``moduli``: the fewest
    Gaussian moduli whose budget ``floor(log2 P_g)`` holds ``moduli``'s budget. The scaling
    keeps ``moduli``'s budget, so the exact products, and every output bit, are those of
    Karatsuba on ``moduli``. None where no Gaussian system holds it (more than 19 INT8
    moduli), or where ``moduli`` is not an INT8 system (FP8, or Gaussian already)."""
    if moduli.phase_a != "int8" or moduli.gaussian:
        return None
    try:
        return gaussian_system(moduli.budget_bits)
    except ValueError:
        return None


def _phase_a_moduli(
    moduli: ResidueSystem, is_complex: bool, complex_method: str
) -> tuple[ResidueSystem, str]:
    """The moduli Phase A runs on and the engines' complex method: a complex INT8 product
    with ``complex_method="gaussian"`` on :func:`gaussian_system_for` its moduli (else
    Karatsuba on the moduli themselves). The methods (:data:`~ozfft.engines.base.
    COMPLEX_PRODUCTS`): ``"gaussian"`` (the default), ``"karatsuba"``, ``"4m"``; every method
    gives the same bits."""
    check_complex_method(complex_method)
    if complex_method != "gaussian" or moduli.gaussian:
        return moduli, complex_method
    system = gaussian_system_for(moduli) if is_complex else None
    return (moduli, "karatsuba") if system is None else (system, "gaussian")


def max_moduli_for(phase_a: str) -> int:
    """The most INT8 moduli (or their bits) one exact product of this Phase A uses."""
    return fp8_max_moduli() if phase_a == "fp8" else MAX_MODULI


Moduli = int | ResidueSystem  #: a count of INT8 moduli, or the moduli themselves


def _moduli_of(moduli: Moduli) -> ResidueSystem:
    return int8_system(moduli) if isinstance(moduli, int) else moduli


def compute_shifts(engine: Engine, a: Any, bt: Any, moduli: Moduli, mode: str):
    """Row shifts of ``a`` ``(..., m, k)`` and of ``bt`` ``(..., n, k)`` (stage 1) for the
    CRT budget of ``moduli`` (a count of INT8 moduli, or a residue system)."""
    sa, sb, extra = _stats(engine, a, bt, mode)
    return _shifts_for(engine, sa, sb, extra, _moduli_of(moduli).budget_bits, mode)


def _stats(engine: Engine, a: Any, bt: Any, mode: str, *, defer_check: bool = False):
    """Row statistics of both operands; accurate mode adds ``Cbar``'s row/col maxima
    and the bound operands' row sums. With ``defer_check`` the NaN/Inf tests wait in
    the statistics (:meth:`~ozfft.engines.base.RowStats.check_finite`): the caller runs
    them before anything computed from the operands is returned or read."""
    xp = engine.xp
    need_sumsq = mode == "fast"
    sa = engine.row_stats(a, "a", need_sumsq=need_sumsq, defer_check=defer_check)
    sb = engine.row_stats(bt, "b", need_sumsq=need_sumsq, defer_check=defer_check)
    if mode == "fast":
        return sa, sb, None
    g = accurate_bound_bits(xp.iscomplexobj(a))
    abar = engine.bound_operand(a, sa.max_exp, g)
    btbar = engine.bound_operand(bt, sb.max_exp, g)
    cbar = engine.bound_product(abar, btbar, g)  # (..., m, n)
    row_max = cbar.max(axis=-1) if cbar.shape[-1] else xp.zeros(cbar.shape[:-1], xp.int64)
    col_max = (
        cbar.max(axis=-2)
        if cbar.shape[-2]
        else xp.zeros(cbar.shape[:-2] + cbar.shape[-1:], xp.int64)
    )
    extra = {
        "g": g,
        "row_max": row_max,
        "col_max": col_max,
        "abar": abar,
        "btbar": btbar,
    }
    return sa, sb, extra


def _shifts_for(engine: Engine, sa, sb, extra, budget: int | tuple[int, ...], mode: str):
    """Shifts for the CRT budget ``budget`` (an int, or a tuple of budgets: several moduli
    counts at once, stacked along a new leading axis)."""
    if mode == "fast":
        return engine.fast_shift(sa.max_exp, sa.sumsq, budget), engine.fast_shift(
            sb.max_exp, sb.sumsq, budget
        )
    xp = engine.xp
    if isinstance(budget, tuple):
        budget = xp.asarray(budget, xp.int64).reshape(-1, *([1] * sa.max_exp.ndim))
    g = extra["g"]
    return (
        accurate_shift(xp, sa.max_exp, extra["row_max"], budget, g),
        accurate_shift(xp, sb.max_exp, extra["col_max"], budget, g),
    )


def _product(
    engine: Engine,
    a: Any,
    bt: Any,
    shift_a: Any,
    shift_b: Any,
    moduli: Moduli,
    out_dtype: Any,
    complex_method: str,
    residues: dict | None = None,
    *,
    rounding: str,
    checks: tuple = (),
) -> Any:
    """One exact product ``A' B'^T`` of the scaled integers of ``a`` and ``bt``
    (``rounding``: :func:`~ozfft.ozaki.scaling.scaled_integers` with shifts ``sa``, ``sb``)
    rounded to ``out_dtype``, Phase A on
    ``moduli`` (a count of INT8 moduli, or a residue system; a complex product on its
    Gaussian stand-in, :func:`_phase_a_moduli`); ``residues`` caches residue stacks by
    ``(id(x), id(shift))`` for the stages (a product the engine runs in one pass,
    :meth:`~ozfft.engines.base.Engine.fused_product`, forms its own: the split parts of a
    small product each take one launch); ``checks``: statistics whose deferred NaN/Inf
    tests run once both residue stacks are queued (the GPU stays busy while the host
    waits)."""
    moduli, complex_method = _phase_a_moduli(
        _moduli_of(moduli), engine.xp.iscomplexobj(a), complex_method
    )
    out = engine.fused_product(a, bt, shift_a, shift_b, moduli, out_dtype, rounding=rounding)
    if out is not None:
        for stats in checks:
            stats.check_finite()
        return out
    cache = {} if residues is None else residues

    def res(x: Any, shift: Any) -> Any:
        key = (id(x), id(shift))
        if key not in cache:
            cache[key] = engine.residues(x, shift, moduli, rounding)
        return cache[key]

    ra, rbt = res(a, shift_a), res(bt, shift_b)
    for stats in checks:
        stats.check_finite()
    return engine.exact_product(
        ra,
        rbt,
        shift_a,
        shift_b,
        moduli,
        out_dtype,
        complex_method=complex_method,
    )


def emulated_matmul(
    engine: Engine,
    a: Any,
    b: Any,
    *,
    num_moduli: int | None = None,
    mode: str,
    out_dtype: Any,
    complex_method: str = "gaussian",
    system: ResidueSystem | None = None,
    phase_a: str = "int8",
) -> Any:
    """``a @ b`` for same-batch-shape float64/complex128 stacks, via Ozaki scheme II,
    with ``num_moduli`` moduli (no accuracy guarantee: the explicit ``moduli=`` path), or
    with the residue system ``system`` (its moduli, its budget and its Phase A: INT8 or FP8
    digit products, :mod:`ozfft.ozaki.residue_system`; FP8 on both engines).

    ``phase_a="fp8"`` with ``num_moduli``: the scaling of ``num_moduli`` INT8 moduli and
    the FP8 system with at least their bits (:func:`fp8_system_for`), so the result is
    bitwise that of ``phase_a="int8"``.

    The scaled entries are rounded to nearest where ``|2**sigma a| >= 64``
    (:data:`SINGLE_ROUNDING`): half the truncation error, the same CRT bound."""
    xp = engine.xp
    if phase_a not in PHASE_A_KINDS:
        raise ValueError(f"phase_a is one of {PHASE_A_KINDS} here, not {phase_a!r}")
    if system is None:
        if num_moduli is None:
            raise ValueError("give num_moduli or a residue system")
        budget = int8_system(num_moduli)
        moduli = fp8_system_for(num_moduli) if phase_a == "fp8" else budget
    elif num_moduli not in (None, system.count):
        raise ValueError(
            f"num_moduli={num_moduli} disagrees with the system's {system.count} moduli"
        )
    else:
        moduli = budget = system
    a = engine.prepare_operand(a)
    bt = xp.swapaxes(b, -1, -2)  # prepared below, unless a one-pass product reads B in place
    if logger.isEnabledFor(logging.DEBUG):  # (a call's hot path: no arguments built)
        logger.debug(
            "ozaki-II %s: %s @ %s, %d %s moduli (log2 P = %.1f), mode %s",
            engine.name,
            a.shape,
            b.shape,
            moduli.count,
            moduli.phase_a,
            moduli.log2_product,
            mode,
        )
    if mode == "fast":
        return _fast_product(
            engine, a, bt, moduli, budget.budget_bits, out_dtype, complex_method, SINGLE_ROUNDING
        )
    return _staged_product(
        engine,
        a,
        engine.prepare_operand(bt),
        moduli,
        budget.budget_bits,
        mode,
        out_dtype,
        complex_method,
        SINGLE_ROUNDING,
    )


def explicit_product_executor(
    engine: Engine, a: Any, b: Any, *, num_moduli: int, mode: str, out_dtype: Any, phase_a: str
) -> Callable[[Any, Any], Any] | None:
    """:func:`emulated_matmul` with ``num_moduli`` INT8 moduli prepared for operands laid
    out as ``a`` and ``b`` (C-contiguous ``a``; the engine decides what it reads of ``b``):
    ``run(a, b)`` gives its bits for operands of the same shapes, dtypes and layouts, with
    the one-pass fast product decided once (:meth:`~ozfft.engines.base.Engine.
    fast_product_executor`); None where a call of this signature takes another path (the
    stages, FP8, accurate mode, an ``a`` that is not C-contiguous)."""
    if mode != "fast" or phase_a != "int8" or not a.flags.c_contiguous:
        return None
    budget = int8_system(num_moduli)
    moduli, _ = _phase_a_moduli(budget, engine.xp.iscomplexobj(a), "gaussian")
    return engine.fast_product_executor(
        a, engine.xp.swapaxes(b, -1, -2), budget.budget_bits, moduli, out_dtype,
        rounding=SINGLE_ROUNDING,
    )  # fmt: skip


def _staged_product(
    engine: Engine,
    a: Any,
    bt: Any,
    moduli: ResidueSystem,
    budget_bits: int,
    mode: str,
    out_dtype: Any,
    complex_method: str,
    rounding: str,
    stats: tuple | None = None,
) -> Any:
    """One exact product on ``moduli`` with the shifts of ``mode`` for the CRT budget
    ``budget_bits``: statistics (``stats``, where the caller has them: ``_stats``'s
    result; fast mode without them: both operands' statistics and shifts from
    :meth:`~ozfft.engines.base.Engine.fast_stats`), shifts and :func:`_product` (NaN/Inf
    raised once the residues are queued)."""
    if stats is None and mode == "fast":
        sa, sb, shift_a, shift_b = engine.fast_stats(a, bt, budget_bits, defer_check=True)
    else:
        sa, sb, extra = _stats(engine, a, bt, mode, defer_check=True) if stats is None else stats
        shift_a, shift_b = _shifts_for(engine, sa, sb, extra, budget_bits, mode)
    return _product(
        engine,
        a,
        bt,
        shift_a,
        shift_b,
        moduli,
        out_dtype,
        complex_method,
        checks=(sa, sb),
        rounding=rounding,
    )


def _fast_product(
    engine: Engine,
    a: Any,
    bt: Any,
    moduli: ResidueSystem,
    budget_bits: int,
    out_dtype: Any,
    complex_method: str,
    rounding: str,
    *,
    counted: bool = False,
    shifts: tuple[Any, Any] | None = None,
) -> Any:
    """One exact product on ``moduli`` with the fast-mode shifts for the CRT budget
    ``budget_bits``: in one pass where the engine has one
    (:meth:`~ozfft.engines.base.Engine.fused_fast_product`; ``counted``: the operands'
    NaN and Inf entries are counted and raised by the caller; ``shifts``: those shifts,
    formed by the plan probe), else staged (:func:`_staged_product`). The same bits.
    ``bt`` may be the unprepared view ``swapaxes(b, -1, -2)``: the one pass may read B in
    place; the stages get it prepared (:meth:`~ozfft.engines.base.Engine.prepare_operand`)."""
    phase_a_moduli, _ = _phase_a_moduli(moduli, engine.xp.iscomplexobj(a), complex_method)
    out = engine.fused_fast_product(
        a, bt, budget_bits, phase_a_moduli, out_dtype, rounding=rounding, counted=counted,
        shifts=shifts,
    )  # fmt: skip
    if out is not None:
        return out
    bt = engine.prepare_operand(bt)
    return _staged_product(
        engine, a, bt, moduli, budget_bits, "fast", out_dtype, complex_method, rounding
    )


# -- the guarantee -----------------------------------------------------------------------


def _to_host(xp, x: Any) -> np.ndarray:
    """One device->host read (numpy arrays pass through)."""
    return np.asarray(xp.asnumpy(x)) if hasattr(xp, "asnumpy") else np.asarray(x)


def _parts(xp, x: Any) -> list:
    return [x.real, x.imag] if xp.iscomplexobj(x) else [x]


def _row_blocks(xp, x: Any):
    """``x`` (..., rows, k) as a 2-D ``(R, k)`` array (a view when contiguous) and the
    row slices of blocks of at most ``_BLOCK_ENTRIES`` values."""
    k = x.shape[-1]
    flat = xp.ascontiguousarray(x).reshape(-1, k)
    step = max(1, _BLOCK_ENTRIES // max(k, 1))
    return flat, [slice(i, i + step) for i in range(0, flat.shape[0], step)]


def _min_exponent(xp, x: Any) -> Any:
    """Smallest frexp exponent of the nonzero entries (parts) of each row; rows without
    one get ``_NEVER`` (they are exact)."""
    flat, blocks = _row_blocks(xp, x)
    out = xp.empty(flat.shape[0], xp.int64)
    for rows in blocks:
        e_min = None
        for part in _parts(xp, flat[rows]):
            frac, exp = xp.frexp(part)
            e = xp.where(frac != 0, exp.astype(xp.int64), _NEVER).min(axis=-1)
            e_min = e if e_min is None else xp.minimum(e_min, e)
        out[rows] = e_min
    return out.reshape(x.shape[:-1])


def _remainder(xp, x: Any, shift: Any) -> Any:
    """``x - trunc(2**shift x) 2**-shift``, exactly (the part the first scaling drops);
    ``shift`` ``(..., rows)``, or ``(counts, ..., rows)`` for a remainder per count."""
    s = shift[..., None].astype(xp.int32)

    def rem(p: Any) -> Any:
        return p - xp.ldexp(xp.trunc(xp.ldexp(p, s)), -s)

    if not xp.iscomplexobj(x):
        return rem(x)
    out = xp.empty(np.broadcast_shapes(x.shape, s.shape), x.dtype)
    out.real = rem(x.real)
    out.imag = rem(x.imag)
    return out


def _floor_log2(xp, g: Any) -> Any:
    """Exact ``floor(log2 g)`` of nonnegative float64 values (``-_NEVER`` for 0,
    ``_NEVER`` for inf)."""
    _, e = xp.frexp(g)
    out = xp.where(g > 0, e.astype(xp.int64) - 1, -_NEVER)
    return xp.where(xp.isinf(g), _NEVER, out)


def _scale(xp, d: Any) -> Any:
    """``2**-d`` as float64 (exact powers of two). ``d`` is clipped to +-960, so that a
    product with a lower-bound entry (< 2**54) never overflows; only zero rows
    (``d = -_NEVER``) reach the clip, and they constrain nothing either way."""
    return xp.ldexp(xp.ones(d.shape, xp.float64), (-xp.clip(d, -960, 960)).astype(xp.int32))


def _tile_max(xp, v: Any, tile: int, fill: int) -> Any:
    """``(..., rows) -> (..., ceil(rows/tile))`` maxima (padding ``fill``)."""
    rows = v.shape[-1]
    pad = -rows % tile
    if pad:
        v = xp.concatenate([v, xp.full((*v.shape[:-1], pad), fill, v.dtype)], axis=-1)
    return v.reshape(*v.shape[:-1], -1, tile).max(axis=-1)


def _untile(xp, v: Any, tile: int, rows: int) -> Any:
    return xp.repeat(v, tile, axis=-1)[..., :rows]


@dataclass
class _Operand:
    """One operand as rows over k (A, or B transposed) and what the decision reads."""

    name: str
    x: Any  #: (..., rows, k) float64 / complex128
    max_exp: Any  #: (..., rows) int64
    sumsq: Any | None  #: fast-mode S (None in accurate mode until a split needs it)
    nb: Any  #: (..., rows) int64, ||row||_1 <= 2**nb
    exact_bits: int  #: significand bits of the values (53 float64, 24 float32, 11 half)
    zero: Any  #: (..., rows) bool, all-zero rows
    e_min: Any | None = None
    cache: dict = field(default_factory=dict)

    def emin(self, xp) -> Any:
        if self.e_min is None:
            self.e_min = _min_exponent(xp, self.x)
        return self.e_min


def _subset(engine: Engine, a: Any, bt: Any, k: int) -> Any:
    """At most :data:`SUBSET` inner indices for the lower-bound products, chosen from the
    order of a content hash of ``(A[:, h], B[h, :])`` (:meth:`Engine.column_hash`): every
    ``ceil(k/SUBSET)``-th index in hash order (a pseudo-random sample that permuting ``k``
    does not change, so neither does the plan). All of ``k`` when it is small."""
    if k <= SUBSET:
        return None
    xp = engine.xp
    key = engine.column_hash(a, 0) + engine.column_hash(bt, 1) * xp.uint64(INDEX_HASH_MIX)
    order = xp.argsort(key)
    return xp.sort(order[:: -(-k // SUBSET)])


def _magnitudes(xp, x: Any, max_exp: Any, zero: Any, g: int, index: Any) -> list:
    """``floor(2**(g - E)|part|)`` of the inner indices ``index`` (None: all) per part
    (exact float64 integers in ``[0, 2**g)``); zero rows get ``2**g`` (they never bound
    anything: their entries are exact) so they do not spoil tile minima."""
    shift = xp.where(zero, 0, g - max_exp)[..., None].astype(xp.int32)
    sub = x if index is None else xp.take(x, index, axis=-1)
    out = []
    for part in _parts(xp, sub):
        mag = xp.floor(xp.ldexp(xp.abs(part), shift))
        out.append(xp.where(zero[..., None], float(2**g), mag))
    return out


def _pair_products(xp, ma: list, mb: list) -> Any:
    """Exact lower-bound products ``G`` (..., rows_a, rows_b): real ``Ma Mb^T``; complex
    the smaller of the Re-form ``Mr Nr^T + Mi Ni^T`` and the Im-form
    ``Mr Ni^T + Mi Nr^T`` (each bounds its own part of ``|A||B|``)."""
    return _PairOperand(xp, mb).products(ma)


class _PairOperand:
    """The B side of :func:`_pair_products`, formed once for many blocks of A's rows: the
    magnitudes transposed (real), or those of the Re- and Im-forms side by side
    (complex)."""

    def __init__(self, xp, mb: list) -> None:
        self.xp = xp
        if len(mb) == 1:
            self.forms = [xp.ascontiguousarray(xp.swapaxes(mb[0], -1, -2))]
        else:
            self.forms = [
                xp.ascontiguousarray(xp.swapaxes(xp.concatenate(parts, axis=-1), -1, -2))
                for parts in (mb, mb[::-1])
            ]

    def products(self, ma: list, batch: slice = slice(None)) -> Any:
        """``G`` of A's rows ``ma`` against the items ``batch`` of B."""
        xp = self.xp
        a = ma[0] if len(ma) == 1 else xp.concatenate(ma, axis=-1)
        g = xp.matmul(a, self.forms[0][batch])
        for form in self.forms[1:]:
            g = xp.minimum(g, xp.matmul(a, form[batch]))
        return g


class _Pairing:
    """The pairing rule's plan-independent part: for each row ``i`` of A,
    ``RA_i = max_j (nb_j - E_j - floor_log2 G_ij)`` and for each row ``j`` of Bt,
    ``RB_j = max_i (nb_i - E_i - floor_log2 G_ij)``; a plan's deficit of row ``i`` is
    then ``r + 1 + 2g - q_i + RA_i`` (docs/numerics.md). Zero rows have
    ``nb - E = -_NEVER``: they constrain nothing."""

    def __init__(
        self, engine: Engine, a: _Operand, b: _Operand, k: int, index: Any = _PICK
    ) -> None:
        """``index``: :func:`_subset`'s inner indices, where the caller has them."""
        self.engine = engine
        self.xp = xp = engine.xp
        index = _subset(engine, a.x, b.x, k) if index is _PICK else index
        size = k if index is None else int(index.shape[0])
        self.g = lower_bound_bits(size * (2 if xp.iscomplexobj(a.x) else 1))
        self.ma = _magnitudes(xp, a.x, a.max_exp, a.zero, self.g, index)
        self.mb = _magnitudes(xp, b.x, b.max_exp, b.zero, self.g, index)
        # nb - E per row (zero rows: they impose nothing on the other side)
        self.da = xp.where(a.zero, -_NEVER, a.nb - a.max_exp)
        self.db = xp.where(b.zero, -_NEVER, b.nb - b.max_exp)

    def tiled(self) -> tuple[Any, Any]:
        """Tile-level vectors (a bound for every entry of each tile), expanded to rows."""
        xp = self.xp

        def tile_min(m: Any) -> Any:
            rows = m.shape[-2]
            pad = -rows % TILE
            if pad:
                fill = xp.full((*m.shape[:-2], pad, m.shape[-1]), float(2**self.g), m.dtype)
                m = xp.concatenate([m, fill], axis=-2)
            return m.reshape(*m.shape[:-2], -1, TILE, m.shape[-1]).min(axis=-2)

        ra, rb = _blocked_deficits(
            self.engine,
            [tile_min(m) for m in self.ma],
            [tile_min(m) for m in self.mb],
            _tile_max(xp, self.da, TILE, -_NEVER),
            _tile_max(xp, self.db, TILE, -_NEVER),
        )
        rows_a, rows_b = self.da.shape[-1], self.db.shape[-1]
        return _untile(xp, ra, TILE, rows_a), _untile(xp, rb, TILE, rows_b)

    def entrywise(self) -> tuple[Any, Any]:
        """Entry-level vectors."""
        return _blocked_deficits(self.engine, self.ma, self.mb, self.da, self.db)


def _blocked_deficits(engine: Engine, ma: list, mb: list, da: Any, db: Any) -> tuple[Any, Any]:
    """``max_j (db_j - floor_log2 G_ij)`` per row and ``max_i (da_i - floor_log2 G_ij)`` per
    column of the lower-bound products ``G = Ma Mb^T`` (batched), as ``-floor_log2(min_j
    G_ij 2**-db_j)`` (scaling by a power of two is exact, and ``floor_log2`` is monotone):
    ``G`` formed in blocks of at most ``_BLOCK_ENTRIES`` entries, the blocks' scaled minima
    (:meth:`Engine.scaled_minima`) merged, then one ``floor_log2`` per vector."""
    xp = engine.xp
    batch = da.shape[:-1]
    m, n = da.shape[-1], db.shape[-1]
    nb_ = int(np.prod(batch)) if batch else 1
    ma = [x.reshape(nb_, m, x.shape[-1]) for x in ma]
    pair = _PairOperand(xp, [x.reshape(nb_, n, x.shape[-1]) for x in mb])
    scale_a = _scale(xp, da.reshape(nb_, m))
    scale_b = _scale(xp, db.reshape(nb_, n))
    rmin = xp.empty((nb_, m), xp.float64)
    cmin = xp.full((nb_, n), np.inf, xp.float64)
    if m * n <= _BLOCK_ENTRIES:
        bb, mbk = max(1, _BLOCK_ENTRIES // (m * n)), m
    else:
        bb, mbk = 1, max(1, _BLOCK_ENTRIES // n)
    for b0 in range(0, nb_, bb):
        bs = slice(b0, b0 + bb)
        for i0 in range(0, m, mbk):
            rs = slice(i0, i0 + mbk)
            g = pair.products([x[bs, rs] for x in ma], bs)
            rmin[bs, rs], block_cmin = engine.scaled_minima(g, scale_a[bs, rs], scale_b[bs])
            cmin[bs] = xp.minimum(cmin[bs], block_cmin)
    ra, rb = -_floor_log2(xp, rmin), -_floor_log2(xp, cmin)
    return ra.reshape(*batch, m), rb.reshape(*batch, n)


def _side_deficit(xp, op: _Operand, sigma: Any, exact: Any, pair: Any | None, g: int, r):
    """Largest deficit (bits) over the rows of one operand for effective shifts
    ``sigma`` (``(..., rows)``, or ``(counts, ..., rows)`` for several moduli counts:
    one deficit per count): per row the smaller of the element rule's and the pairing
    rule's (``pair`` None: pairing not evaluated); rows in ``exact`` need nothing."""
    if pair is None or r is None:
        d2 = None
    else:
        q = sigma + op.max_exp
        d2 = xp.maximum(pairing_offset(r, g) - q + pair, 0)
    if op.e_min is not None:
        d1 = element_deficit(xp, sigma + op.e_min, op.exact_bits, r)
        d = d1 if d2 is None else xp.minimum(d1, d2)
    else:
        d = xp.full(sigma.shape, _NEVER, xp.int64) if d2 is None else d2
    d = xp.where(exact, 0, d)
    lead = sigma.ndim - op.max_exp.ndim
    d = d.reshape(*d.shape[:lead], -1)
    return d.max(axis=-1) if d.shape[-1] else xp.zeros(d.shape[:-1], xp.int64)


def _near_overflow(maxima, out_bits: int) -> bool:
    """:meth:`_Planner.near_overflow` from its four maxima ``max nb_a, max E_b, max nb_b,
    max E_a``."""
    nb_a, e_b, nb_b, e_a = maxima
    limit = _OVERFLOW_EXP[out_bits] - 1
    return nb_a + e_b > limit and nb_b + e_a > limit


class _Planner:
    """The search of :func:`plan_matmul`; keeps what the chosen plan's products reuse."""

    def __init__(
        self,
        engine,
        a,
        bt,
        *,
        precision,
        mode,
        out_bits,
        exact_bits,
        timer,
        phase_a="int8",
        stats=None,
        index=_PICK,
        tiled_failed=False,
    ):
        self.engine = engine
        #: the tiled test at the default count is known to fail (the one-pass probe's)
        self.tiled_failed = tiled_failed
        self.xp = xp = engine.xp
        self.mode = mode
        self.precision = precision
        self.out_bits = out_bits
        self.timer = timer
        self.phase_a = phase_a
        #: the most INT8 moduli (or, for FP8, their bits) one exact product may use
        self.max_moduli = max_moduli_for(phase_a)
        k = a.shape[-1]
        #: real products per output part: each part of a complex product is a real dot
        #: product of length 2k (the native routine's bound counts them: gamma_2k)
        self.k = 2 * k if xp.iscomplexobj(a) else k
        self.base = default_moduli(precision, mode)
        if stats is None:  # (a caller's: _stats's result, its NaN/Inf tests run)
            stats = _stats(engine, a, bt, mode, defer_check=True)
        sa, sb, extra = stats
        sa.check_finite()
        sb.check_finite()
        self.stats = (sa, sb, extra)
        with timer("guarantee"):
            terms = 2 * k if xp.iscomplexobj(a) else k
            if mode == "fast":
                nba = engine.norm1_exponent_fast(sa.max_exp, sa.sumsq, terms)
                nbb = engine.norm1_exponent_fast(sb.max_exp, sb.sumsq, terms)
            else:
                g = extra["g"]
                abar, btbar = extra.pop("abar"), extra.pop("btbar")
                nba = norm1_exponent_bound(xp, sa.max_exp, abar.sum(-1, dtype=xp.int64), g)
                nbb = norm1_exponent_bound(xp, sb.max_exp, btbar.sum(-1, dtype=xp.int64), g)
                del abar, btbar
            self.a = _Operand(
                "a", a, sa.max_exp, sa.sumsq, nba, exact_bits[0], sa.max_exp == ZERO_ROW_EXP
            )
            self.b = _Operand(
                "b", bt, sb.max_exp, sb.sumsq, nbb, exact_bits[1], sb.max_exp == ZERO_ROW_EXP
            )
            self.pairing = _Pairing(engine, self.a, self.b, k, index)
        self.pair = None  # (RA, RB) of the strongest pairing test run so far
        self._shifts = None  # (sig_a, sig_b) of every moduli count: _count_shifts
        self._maxima = None  # near_overflow's four maxima, once read

    # -- single products ------------------------------------------------------------
    def _count_shifts(self) -> tuple[Any, Any]:
        """Shifts of A and B for every moduli count from the default to
        :attr:`max_moduli`, stacked along a leading axis (computed once: every evaluation
        of the deficits, and the chosen product, read them)."""
        if self._shifts is None:
            sa, sb, extra = self.stats
            counts = range(self.base, self.max_moduli + 1)
            budget = tuple(int8_system(n).budget_bits for n in counts)
            self._shifts = _shifts_for(self.engine, sa, sb, extra, budget, self.mode)
        return self._shifts

    def single_shifts(self, n: int) -> tuple[Any, Any]:
        """The shifts of one exact product on ``n`` moduli (``n`` from the default to
        :attr:`max_moduli`)."""
        sig_a, sig_b = self._count_shifts()
        return sig_a[n - self.base], sig_b[n - self.base]

    def _single_deficits(self) -> np.ndarray:
        """``(counts, 2)`` host array: deficits of A and B for every moduli count from the
        default to :attr:`max_moduli` (20; 18 for FP8), evaluated together (one
        device->host read, which the first time also brings :meth:`near_overflow`'s four
        maxima)."""
        xp = self.xp
        r = truncation_budget(self.k, self.precision, self.out_bits, 1)
        sig_a, sig_b = self._count_shifts()
        ra, rb = self.pair if self.pair is not None else (None, None)
        da = _side_deficit(xp, self.a, sig_a, self.a.zero, ra, self.pairing.g, r)
        db = _side_deficit(xp, self.b, sig_b, self.b.zero, rb, self.pairing.g, r)
        deficits = xp.stack([da, db], axis=-1).astype(xp.int64)
        if self._maxima is not None or self._no_maxima():
            return _to_host(xp, deficits)
        host = _to_host(xp, xp.concatenate([deficits.reshape(-1), self._maxima_on_device()]))
        self._maxima = [int(v) for v in host[-4:]]
        return host[:-4].reshape(deficits.shape)

    def _first_single(self, deficits: np.ndarray) -> int | None:
        counts = range(self.base, self.max_moduli + 1)
        for n, (da, db) in zip(counts, deficits.tolist(), strict=True):
            if da <= 0 and db <= 0:
                return n
        return None

    def plan(self) -> MatmulPlan:
        plan = self._plan()
        is_complex = bool(self.xp.iscomplexobj(self.a.x))
        if self.phase_a == "int8" or plan.native:
            return replace(plan, phase_a=self.phase_a, is_complex=is_complex)
        system = fp8_system_for(plan.moduli)
        reason = (
            f"{plan.reason}; FP8 Phase A on {system.count} moduli of "
            f"{system.log2_product:.1f} bits ({system.total_products} digit products)"
        )
        return replace(plan, phase_a=self.phase_a, reason=reason, is_complex=is_complex)

    def _plan(self) -> MatmulPlan:
        xp = self.xp
        pairing = truncation_budget(self.k, self.precision, self.out_bits, 1) is not None
        if pairing and not self.tiled_failed:
            with self.timer("guarantee"):
                self.pair = self.pairing.tiled()
                deficits = self._single_deficits()
            if self._first_single(deficits) == self.base:
                return MatmulPlan(self.base, reason="default moduli proved (tiled bound)")
        with self.timer("guarantee"):
            if pairing:
                self.pair = self.pairing.entrywise()
                deficits = self._single_deficits()
            if not pairing or self._first_single(deficits) != self.base:
                self.a.emin(xp)
                self.b.emin(xp)
                deficits = self._single_deficits()
        n = self._first_single(deficits)
        if n is not None:
            return MatmulPlan(n, reason=f"{n} moduli proved")
        need_a, need_b = (bool(v > 0) for v in deficits[-1])
        # (both needed: the two searches are one, so it runs once)
        for split_a, split_b in dict.fromkeys(((need_a, need_b), (True, True))):
            products = (1 + split_a) * (1 + split_b)
            if products > MAX_PRODUCTS or not (split_a or split_b):
                continue
            if truncation_slack(self.k, self.precision, self.out_bits, products) < 0:
                continue  # the float64 sum of the products alone could exceed k u
            n = self._first_split(split_a, split_b)
            if n is not None:
                return MatmulPlan(n, split_a, split_b, reason=f"split into {products} products")
        return MatmulPlan(
            0,
            native=True,
            reason=f"more than {MAX_PRODUCTS} products of {self.max_moduli} moduli needed",
        )

    # -- split products -------------------------------------------------------------
    def _fast_stats(self, op: _Operand):
        if op.sumsq is None:
            op.sumsq = self.engine.row_stats(op.x, op.name, need_sumsq=True).sumsq
        return op.sumsq

    def split_shifts(self, op: _Operand, n: int, split: bool):
        """What the split products of the plan :meth:`_first_split` chose read (``n``
        moduli): the fast-mode shifts; for a split operand also its remainder, the
        remainder's shifts and the rows whose remainder is zero."""
        return op.cache[(n, split)]

    def _stacked_split(self, op: _Operand, counts: range, split: bool):
        """:meth:`split_shifts` of every count in ``counts`` at once (one or several):
        ``(sigma, exact, keep)`` with the shifts the deficit reads, ``(len(counts), ...,
        rows)`` (the remainder's where ``split``), the rows that need nothing, and
        ``keep(i)``, count ``i``'s :meth:`split_shifts` tuple (views of the stacks)."""
        xp = self.xp
        budgets = tuple(int8_system(n).budget_bits for n in counts)
        sigma = self.engine.fast_shift(op.max_exp, self._fast_stats(op), budgets)
        if not split:
            return sigma, op.zero, lambda i: (sigma[i], None, None, None)
        with self.timer("guarantee"):
            lo = _remainder(xp, op.x, sigma)  # (counts, ..., rows, k)
        lo_stats = self.engine.row_stats(lo, op.name, need_sumsq=True)
        # every budget on every count's remainder, (counts, counts, ..., rows): the diagonal
        every = self.engine.fast_shift(lo_stats.max_exp, lo_stats.sumsq, budgets)
        at = xp.arange(len(counts))
        sigma_lo = every[at, at]
        lo_zero = lo_stats.max_exp == ZERO_ROW_EXP
        return (
            sigma_lo,
            op.zero | lo_zero,
            lambda i: (sigma[i], lo[i], sigma_lo[i], lo_zero[i]),
        )

    def _no_maxima(self) -> bool:
        return not (self.a.max_exp.size and self.b.max_exp.size)

    def _maxima_on_device(self) -> Any:
        """``max nb_a, max E_b, max nb_b, max E_a`` (int64, on the engine)."""
        a, b, xp = self.a, self.b, self.xp
        top = xp.stack([a.nb.max(), b.max_exp.max(), b.nb.max(), a.max_exp.max()])
        return top.astype(xp.int64)

    def near_overflow(self) -> bool:
        """Whether some ``(|A||B|)_ij`` may reach half the output's overflow threshold
        ``2**emax``: ``S_ij < 2**(nb_i + E_j)`` and ``< 2**(E_i + nb_j)`` (four maxima,
        read with the deficits). Below that, a single product rounded to nearest stays
        finite with its exact value (``|x| <= (1 + rho) S``); at or above it the product
        truncates, whose ``|x|`` a one-signed sum keeps at most ``|C_ij|``."""
        if self._no_maxima():
            return False
        if self._maxima is None:
            self._maxima = [int(v) for v in _to_host(self.xp, self._maxima_on_device())]
        return _near_overflow(self._maxima, self.out_bits)

    def release(self) -> None:
        """Drop what only the decision needed (the lower-bound magnitudes)."""
        self.pairing.ma = self.pairing.mb = None

    def _first_split(self, split_a: bool, split_b: bool) -> int | None:
        """The fewest moduli (from the default) whose split products meet the bound, or
        None (then :meth:`split_shifts` holds the chosen count's shifts): every count's
        deficits at once where the engine searches so and the operands are small enough
        (:data:`_STACKED_SPLIT_BYTES`), else count by count, one remainder at a time (the
        same answer)."""
        xp = self.xp
        products = (1 + split_a) * (1 + split_b)
        r = truncation_budget(self.k, self.precision, self.out_bits, products)
        ra, rb = self.pair if self.pair is not None else (None, None)
        counts = range(self.base, self.max_moduli + 1)
        stacked = self.engine.stacked_split_search and all(
            op.x.nbytes * len(counts) <= _STACKED_SPLIT_BYTES
            for op, split in ((self.a, split_a), (self.b, split_b))
            if split
        )
        for group in [counts] if stacked else [range(n, n + 1) for n in counts]:
            sides = [self._stacked_split(self.a, group, split_a),
                     self._stacked_split(self.b, group, split_b)]  # fmt: skip
            with self.timer("guarantee"):
                ds = [
                    _side_deficit(xp, op, sigma, exact, pair, self.pairing.g, r)
                    for op, pair, (sigma, exact, _) in zip(
                        (self.a, self.b), (ra, rb), sides, strict=True
                    )
                ]
                deficits = _to_host(xp, xp.stack(ds, axis=-1)).tolist()
            for i, (n, (da, db)) in enumerate(zip(group, deficits, strict=True)):
                if da <= 0 and db <= 0:
                    for op, split, (_, _, keep) in zip(
                        (self.a, self.b), (split_a, split_b), sides, strict=True
                    ):
                        op.cache = {(n, split): keep(i)}  # what the products read
                    return n
            del sides, ds  # (one group's remainders at a time)
        return None


def plan_matmul(
    engine: Engine,
    a: Any,
    bt: Any,
    *,
    precision: str,
    mode: str,
    out_bits: int,
    exact_bits: tuple[int, int],
    timer: Timer = _no_timer,
    phase_a: str = "int8",
    stats: tuple | None = None,
    index: Any = _PICK,
    tiled_failed: bool = False,
) -> tuple[MatmulPlan, _Planner]:
    """The plan of ``a @ bt^T`` (rows over k, prepared operands) under the guarantee
    (``stats``: the operands' statistics in ``mode``, ``index``: :func:`_subset`'s inner
    indices, where the caller has them; ``tiled_failed``: the caller's one-pass probe ran
    the tiled test at the default count and it failed, so the decision starts at the
    entrywise test — the same plan).

    ``phase_a="fp8"``: the same decision over at most :func:`fp8_max_moduli` INT8 moduli
    (the most an FP8 residue system stands in for), run on :func:`fp8_system_for` that
    count.

    A device allocation failure of the decision's own work is raised as
    :class:`DeviceMemoryError` (with a lower estimate of the bytes it needs).
    """
    with _plan_memory(engine, a, bt.shape[-2]):
        planner = _Planner(
            engine,
            a,
            bt,
            precision=precision,
            mode=mode,
            out_bits=out_bits,
            exact_bits=exact_bits,
            timer=timer,
            phase_a=phase_a,
            stats=stats,
            index=index,
            tiled_failed=tiled_failed,
        )
        return planner.plan(), planner


@contextmanager
def _plan_memory(engine: Engine, a: Any, n: int) -> Iterator[None]:
    """A device allocation failure of the decision's own work on ``a`` and an operand of
    ``n`` columns raised as :class:`DeviceMemoryError` with a lower estimate of the bytes
    it needs (:func:`_raise_plan_memory`)."""
    try:
        yield
    except MemoryError as exc:
        _raise_plan_memory(engine, a, n, exc)


def _raise_plan_memory(engine: Engine, a: Any, n: int, exc: MemoryError) -> NoReturn:
    """:func:`_plan_memory`'s error for ``exc`` (the NumPy engine's ``MemoryError`` and the
    engines' own ``DeviceMemoryError`` go on as they are)."""
    if isinstance(exc, DeviceMemoryError) or engine.xp is np:
        raise exc
    *batch, m, k = a.shape
    items = math.prod(batch)
    parts = 2 if engine.xp.iscomplexobj(a) else 1
    # the blocks' temporaries, and a copy of every item's rows of both operands (the
    # transposed B and the statistics' passes hold that much)
    needed = 8 * (4 * _BLOCK_ENTRIES + items * (m + n) * k * parts)
    product = f"{m}x{k}x{n} product" if not batch else f"stack of {items} {m}x{k}x{n} products"
    raise DeviceMemoryError(f"the accuracy plan of an emulated {product}", needed) from exc


class _Reuse(NamedTuple):
    """What the one-pass probe leaves to the whole decision: the operands' statistics and
    :func:`_subset`'s inner indices where it formed them (else None and ``_PICK``), and
    whether it ran the tiled test at the default count and found it failing (the decision
    then starts at the entrywise test: the tiled test's one use is to prove that count)."""

    stats: tuple | None
    index: Any
    tiled_failed: bool


class _TransposedB:
    """``B^T`` for the stages, which read C-contiguous rows over k: ``view`` is
    ``swapaxes(b, -1, -2)``; :meth:`rows` prepares it (:meth:`Engine.prepare_operand`) on
    first use, unless the one-pass probe took the view and handed back its own copy
    (:attr:`~ozfft.engines.base.PendingProbe.bt`: on the CUDA engine the probe writes it
    while reading B in place, instead of a separate transposed copy)."""

    def __init__(self, engine: Engine, view: Any, rows: Any = None) -> None:
        self.engine, self.view, self._rows = engine, view, rows

    @classmethod
    def prepared(cls, engine: Engine, bt: Any) -> _TransposedB:
        """An operand prepared already."""
        return cls(engine, bt, bt)

    @property
    def for_probe(self) -> Any:
        """What the probe takes: the prepared rows where they exist, else the view."""
        return self.view if self._rows is None else self._rows

    def take(self, bt: Any) -> None:
        """The probe's prepared rows (:attr:`~ozfft.engines.base.PendingProbe.bt`)."""
        if bt is not None:
            self._rows = bt

    def rows(self) -> Any:
        """C-contiguous rows of ``B^T`` over k (prepared here once, or the probe's)."""
        if self._rows is None:
            self._rows = self.engine.prepare_operand(self.view)
        return self._rows


#: the most work (batch m n k) whose product on the default count is queued before the
#: probe's answer is read: a cheap product, wasted only where the test does not prove it
_SPECULATE_WORK = 1 << 30


@lru_cache(maxsize=256)
def _probed_plan(
    terms: int, precision: str, out_bits: int, is_complex: bool
) -> tuple[int, MatmulPlan, int] | None:
    """``(r, plan, budget)`` of :func:`_probed_single` for a fast-mode INT8 call with
    ``terms`` products per output part: the truncation budget's exponent, the plan of the
    default count the probe may prove, and its CRT budget; None where there is no budget
    (kept per arguments: the call's hot path)."""
    r = truncation_budget(terms, precision, out_bits, 1)
    if r is None:
        return None
    plan = MatmulPlan(
        default_moduli(precision, "fast"),
        reason="default moduli proved (tiled bound)",
        phase_a="int8",
        is_complex=is_complex,
    )
    return r, plan, plan.system.budget_bits


def _probe_rules(r: int, budget: int, parts: int, k: int, size: int) -> ProbeRules:
    """The integers :meth:`~ozfft.engines.base.Engine.tiled_plan_probe` takes for the
    default count's test (:func:`_probed_plan`'s ``r`` and ``budget``) of products with
    ``parts * k`` terms an output, over ``size`` inner indices (k, or the subset's):
    as :class:`_Pairing` forms them, from the indices of the products."""
    g = lower_bound_bits(parts * size)
    return ProbeRules(
        budget_bits=budget,
        lower_bound_bits=g,
        pairing_offset=pairing_offset(r, g),
        terms=parts * k,
        never=_NEVER,
        tile=TILE,
    )


def _proves(result: TiledProbe) -> bool:
    """Whether the probe's :class:`~ozfft.engines.base.TiledProbe` proves the default
    count (no row of either operand with a deficit)."""
    return result.deficit_a <= 0 and result.deficit_b <= 0


def _probed_single(
    engine: Engine,
    a: Any,
    b_t: _TransposedB,
    *,
    precision: str,
    mode: str,
    out_dtype: Any,
    out_bits: int,
    complex_method: str,
    phase_a: str,
    timer: Timer,
    compute: bool = True,
    probed: PendingProbe | None = None,
) -> tuple[tuple[Any, MatmulPlan] | None, _Reuse | None]:
    """``(result, plan)`` of :func:`guaranteed_matmul` when the engine's one-pass probe
    (:meth:`~ozfft.engines.base.Engine.tiled_plan_probe`) finds that the tiled pairing
    test proves the default moduli count: the plan :func:`plan_matmul` returns then, from
    the same integers, and the same bits. First the probe that computes the operands'
    statistics itself (small k), else, on an engine that has one, the probe given them
    and the inner indices of :func:`_subset`. With the first, a product on the default
    count of at most :data:`_SPECULATE_WORK` is queued before the probe's answer is read
    (the GPU stays busy; a product the test does not prove is dropped); a product near
    the output's overflow is run with truncated integers (:meth:`_Planner.near_overflow`).
    ``compute=False``: the plan alone (``result`` None; no product is queued).
    ``probed``: the first probe, queued already (by :func:`guaranteed_product_executor`,
    whose product the test did not prove or must round apart): no speculative product.

    Returns ``(None, reuse)`` where the engine has no probe for the shape (fast mode and
    INT8 only), or where the tiled test does not prove the default count: the caller runs
    the whole decision with ``reuse`` (:class:`_Reuse`; None where nothing was formed)."""
    k = a.shape[-1]
    if mode != "fast" or phase_a != "int8":
        return None, None
    is_complex = a.dtype.kind == "c"
    parts = 2 if is_complex else 1
    setup = _probed_plan(parts * k, precision, out_bits, is_complex)
    if setup is None:
        return None, None
    r, plan, budget = setup

    def probe(size: int, **given: Any) -> Callable | None:
        with timer("guarantee"):
            rules = _probe_rules(r, budget, parts, k, size)
            pending = engine.tiled_plan_probe(a, b_t.for_probe, rules, **given)
        if pending is not None:
            b_t.take(pending.bt)
        return pending

    def product(rounding: str) -> Any:
        system, bt = plan.system, b_t.rows()
        if stats is None:  # the probe counts NaN and Inf and raises them (pending()), and
            # forms the shifts where it formed the statistics
            return _fast_product(engine, a, bt, system, budget, out_dtype, complex_method,
                                 rounding, counted=True, shifts=pending.shifts)  # fmt: skip
        return _staged_product(engine, a, bt, system, budget, "fast", out_dtype, complex_method,
                               rounding, stats)  # fmt: skip

    stats = index = None
    if probed is not None:
        b_t.take(probed.bt)
        pending, speculate = probed, False
    else:
        pending = probe(k) if k <= SUBSET else None
        speculate = compute and pending is not None  # the engine's own statistics: small k
    if pending is None:
        if not engine.has_plan_probe:
            return None, None
        bt = b_t.rows()
        stats = _stats(engine, a, bt, "fast", defer_check=True)
        stats[0].check_finite()
        stats[1].check_finite()
        with timer("guarantee"):
            index = _subset(engine, a, bt, k)
        size = k if index is None else int(index.shape[0])
        pending = probe(size, stats=stats[:2], index=index)
        if pending is None:
            return None, _Reuse(stats, index, tiled_failed=False)
    *batch, m, _ = a.shape
    n = b_t.view.shape[-2]
    out = None
    if speculate and math.prod(batch) * m * n * k <= _SPECULATE_WORK:
        try:
            out = product(SINGLE_ROUNDING)
        except NonFiniteInputError:
            pending()  # the probe counted the same entries: its error, A first, is the answer
            raise
    result = pending()
    if not _proves(result):
        return None, _Reuse(stats, _PICK if stats is None else index, tiled_failed=True)
    logger.debug("ozaki-II %s: %s @ %s, plan %s (%s, one-pass probe)", engine.name, a.shape,
                 b_t.view.shape, plan.describe(), plan.reason)  # fmt: skip
    if not compute:
        return (None, plan), None
    if _near_overflow(result.maxima, out_bits):
        out = product(SPLIT_ROUNDING)
    elif out is None:
        out = product(SINGLE_ROUNDING)
    return (out, plan), None


def guaranteed_product_executor(
    engine: Engine,
    a: Any,
    b: Any,
    *,
    precision: str,
    mode: str,
    out_dtype: Any,
    out_bits: int,
    phase_a: str,
) -> Callable[[Any, Any], tuple[Any | None, PendingProbe]] | None:
    """:func:`guaranteed_matmul`'s one-pass probe and speculative product
    (:func:`_probed_single`: fast mode, INT8, k at most :data:`SUBSET`, a product on the
    default count of at most :data:`_SPECULATE_WORK`) prepared for operands laid out as
    ``a`` and ``b`` (:meth:`~ozfft.engines.base.Engine.probed_product_executor`):
    ``run(a, b)`` queues both and returns ``(product, probe)``, the product where the
    tiled test proves the default count and no output is near overflow (then it has the
    bits of :func:`guaranteed_matmul`, whose plan it is), else ``(None, probe)``: the
    caller hands that probe to :func:`guaranteed_matmul` (``probed``), which decides from
    it as from its own. NaN and Inf are raised as there (the probe counts them, A first).
    None where a call of this signature takes another path."""
    k = a.shape[-1]
    if mode != "fast" or phase_a != "int8" or not a.flags.c_contiguous or k > SUBSET:
        return None
    is_complex = a.dtype.kind == "c"
    parts = 2 if is_complex else 1
    setup = _probed_plan(parts * k, precision, out_bits, is_complex)
    *batch, m, _ = a.shape
    if setup is None or math.prod(batch) * m * b.shape[-1] * k > _SPECULATE_WORK:
        return None
    r, plan, budget = setup
    system, _ = _phase_a_moduli(plan.system, is_complex, "gaussian")
    probed_product = engine.probed_product_executor(
        a, engine.xp.swapaxes(b, -1, -2), _probe_rules(r, budget, parts, k, k),
        moduli=system, out_dtype=out_dtype, rounding=SINGLE_ROUNDING,
    )  # fmt: skip
    if probed_product is None:
        return None

    def run(a: Any, b: Any) -> tuple[Any | None, PendingProbe]:
        try:  # (as _plan_memory, without a context manager's cost on the call's path)
            out, pending = probed_product(a, b)
            result = pending()
        except MemoryError as exc:
            _raise_plan_memory(engine, a, b.shape[-1], exc)
        if not _proves(result) or _near_overflow(result.maxima, out_bits):
            return None, pending
        if logger.isEnabledFor(logging.DEBUG):  # (as _probed_single's line: a and Bt's shapes)
            logger.debug("ozaki-II %s: %s @ %s, plan %s (%s, one-pass probe, prepared)",
                         engine.name, a.shape, b.swapaxes(-1, -2).shape, plan.describe(),
                         plan.reason)  # fmt: skip
        return out, pending

    return run


def guaranteed_matmul(
    engine: Engine,
    a: Any,
    b: Any,
    *,
    precision: str,
    mode: str,
    out_dtype: Any,
    out_bits: int,
    exact_bits: tuple[int, int],
    timer: Timer = _no_timer,
    complex_method: str = "gaussian",
    phase_a: str = "int8",
    probed: PendingProbe | None = None,
) -> tuple[Any | None, MatmulPlan]:
    """``a @ b`` (same-batch float64/complex128 stacks) under the accuracy guarantee.

    Returns ``(result, plan)``; ``result`` is None when the plan is native (the caller
    runs the native routine, so that it can time it as the ``native`` phase).
    ``out_dtype`` is what the engine rounds a single product to; split products are
    rounded to the compute dtype and summed there (the caller casts). ``probed``: the
    one-pass probe of these operands, queued and read already
    (:func:`guaranteed_product_executor`), which the decision takes instead of its own.
    """
    xp = engine.xp
    a = engine.prepare_operand(a)
    b_t = _TransposedB(engine, xp.swapaxes(b, -1, -2))  # (prepared where a stage needs it)
    probe, plan, planner = _decision(
        engine, a, b_t, precision=precision, mode=mode, out_dtype=out_dtype, out_bits=out_bits,
        exact_bits=exact_bits, complex_method=complex_method, phase_a=phase_a, timer=timer,
        probed=probed,
    )  # fmt: skip
    if probe is not None:
        return probe
    bt = b_t.rows()
    logger.debug(
        "ozaki-II %s: %s @ %s, plan %s (%s), mode %s",
        engine.name,
        a.shape,
        b.shape,
        plan.describe(),
        plan.reason,
        mode,
    )
    planner.release()
    if plan.native:
        return None, plan
    if plan.products == 1:
        shift_a, shift_b = planner.single_shifts(plan.moduli)
        out = _product(
            engine,
            a,
            bt,
            shift_a,
            shift_b,
            plan.system,
            out_dtype,
            complex_method,
            rounding=SPLIT_ROUNDING if planner.near_overflow() else SINGLE_ROUNDING,
        )
        return out, plan
    sig_a, lo_a, sig_lo_a, _ = planner.split_shifts(planner.a, plan.moduli, plan.split_a)
    sig_b, lo_b, sig_lo_b, _ = planner.split_shifts(planner.b, plan.moduli, plan.split_b)
    parts_a = [(a, sig_a)] + ([(lo_a, sig_lo_a)] if plan.split_a else [])
    parts_b = [(bt, sig_b)] + ([(lo_b, sig_lo_b)] if plan.split_b else [])
    compute = a.dtype
    residues: dict = {}
    terms = [
        _product(
            engine,
            xa,
            xb,
            sa_,
            sb_,
            plan.system,
            compute,
            complex_method,
            residues,
            rounding=SPLIT_ROUNDING,
        )
        for xa, sa_ in parts_a
        for xb, sb_ in parts_b
    ]
    return _compensated_sum(terms[::-1]), plan


def guaranteed_plan(
    engine: Engine,
    a: Any,
    bt: Any,
    *,
    precision: str,
    mode: str,
    out_bits: int,
    exact_bits: tuple[int, int],
    phase_a: str = "int8",
    timer: Timer = _no_timer,
) -> MatmulPlan:
    """The plan :func:`guaranteed_matmul` runs for prepared ``a`` and ``bt`` (rows over k),
    without the product: the one-pass probe where it proves the default count, else
    :func:`plan_matmul` (reusing what the probe formed). The same plan either way."""
    _, plan, planner = _decision(
        engine, a, _TransposedB.prepared(engine, bt), precision=precision, mode=mode,
        out_dtype=None, out_bits=out_bits, exact_bits=exact_bits, complex_method="gaussian",
        phase_a=phase_a, timer=timer, compute=False,
    )  # fmt: skip
    if planner is not None:
        planner.release()
    return plan


def _decision(
    engine: Engine,
    a: Any,
    b_t: _TransposedB,
    *,
    precision: str,
    mode: str,
    out_dtype: Any,
    out_bits: int,
    exact_bits: tuple[int, int],
    complex_method: str,
    phase_a: str,
    timer: Timer,
    compute: bool = True,
    probed: PendingProbe | None = None,
) -> tuple[tuple[Any, MatmulPlan] | None, MatmulPlan, _Planner | None]:
    """``(probed, plan, planner)``: the one-pass probe's ``(result, plan)`` where it proves
    the default count (:func:`_probed_single`; ``compute``: with the product; ``probed``:
    that probe, run already), else None, :func:`plan_matmul`'s plan and its planner
    (reusing what the probe formed)."""
    with _plan_memory(engine, a, b_t.view.shape[-2]):
        probed, reuse = _probed_single(
            engine, a, b_t, precision=precision, mode=mode, out_dtype=out_dtype,
            out_bits=out_bits, complex_method=complex_method, phase_a=phase_a, timer=timer,
            compute=compute, probed=probed,
        )  # fmt: skip
    if probed is not None:
        return probed, probed[1], None
    plan, planner = plan_matmul(
        engine,
        a,
        b_t.rows(),
        precision=precision,
        mode=mode,
        out_bits=out_bits,
        exact_bits=exact_bits,
        timer=timer,
        phase_a=phase_a,
        stats=None if reuse is None else reuse.stats,
        index=_PICK if reuse is None else reuse.index,
        tiled_failed=reuse is not None and reuse.tiled_failed,
    )
    return None, plan, planner


def _compensated_sum(terms: list) -> Any:
    """``sum(terms)`` with error-free TwoSum steps (Knuth), the errors summed apart and
    added once at the end: elementwise IEEE operations in a fixed order, so every
    engine returns the same bits (rounding_error_bound in ozfft/ozaki/bounds.py)."""
    total = terms[0]
    err = None
    for t in terms[1:]:
        s = total + t
        bb = s - total
        e = (total - (s - bb)) + (t - bb)
        err = e if err is None else err + e
        total = s
    return total if err is None else total + err
