"""``ozfft.matmul``: numpy.matmul semantics, Ozaki-II numerics, a componentwise
accuracy guarantee (docs/numerics.md, "The accuracy guarantee of matmul";
docs/api-matmul.md)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any

import numpy as np

from . import config
from ._bounded import put_bounded
from .engines.base import Engine
from .engines.select import array_module_name, engine_for, resolve_phase_a
from .errors import UnsupportedDTypeError
from .options import OzakiOptions
from .profiling import phase
from .scheme.gemm import (
    MatmulPlan,
    emulated_matmul,
    explicit_product_executor,
    fp8_max_moduli,
    fp8_system_for,
    guaranteed_matmul,
    guaranteed_plan,
    guaranteed_product_executor,
)

__all__ = ["SUPPORTED_DTYPES", "MatmulPlan", "matmul", "matmul_plan"]

#: the floating dtypes ozfft computes in; bool and integer operands are converted to
#: float64 first, as numpy does when it mixes them with float64
SUPPORTED_DTYPES = tuple(
    np.dtype(t) for t in ("float16", "float32", "float64", "complex64", "complex128")
)
_SUPPORTED_NAMES = ", ".join(str(d) for d in SUPPORTED_DTYPES) + ", bool and integer dtypes"
_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"
#: significand bits of each supported floating dtype (its values' exactness in the scheme)
_SIGNIFICAND_BITS = {"e": 11, "f": 24, "F": 24, "d": 53, "D": 53}


def _supported(dtype: np.dtype) -> bool:
    return dtype.kind in "biu" or dtype.char in _SIGNIFICAND_BITS


def _as_operand(x: Any, name: str):
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        x = np.asarray(x)
    if not _supported(x.dtype):
        raise UnsupportedDTypeError(name, x.dtype, _SUPPORTED_NAMES)
    if not x.dtype.isnative:  # non-native byte order: same values, native layout
        x = x.astype(x.dtype.newbyteorder("="))
    if x.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if name == 'a' else 1} does not have enough "
            f"dimensions (has 0, gufunc core with signature {_SIGNATURE} requires 1)"
        )
    return x


@lru_cache(maxsize=256)
def result_dtype(a_dtype: Any, b_dtype: Any) -> np.dtype:
    """The dtype ``ozfft.matmul(a, b)`` computes its result in (and returns, except for
    ``bool @ bool``, numpy's logical product of those counts): numpy's ``result_type`` when
    that is a floating dtype (so float32 @ int8 is float32, float32 @ int64 float64,
    exactly as numpy), else float64 (bool and integer operands only: ozfft computes in
    floats).
    Kept per pair of dtypes (a call's hot path)."""
    out = np.result_type(a_dtype, b_dtype)
    return np.dtype(np.float64) if out.kind in "biu" else out


@lru_cache(maxsize=64, typed=True)
def _cached_options(precision: Any, moduli: Any, mode: Any, phase_a: Any) -> OzakiOptions:
    return OzakiOptions(precision=precision, moduli=moduli, mode=mode, phase_a=phase_a)


def _options(precision: Any, moduli: Any, mode: Any, phase_a: Any) -> OzakiOptions:
    """The validated options of a call, kept per argument values and types (a call's hot
    path: ``16`` and ``16.0`` stay apart, so a float count is still refused); unhashable
    arguments are validated afresh (and refused with the options' error)."""
    try:
        return _cached_options(precision, moduli, mode, phase_a)
    except TypeError:
        return OzakiOptions(precision=precision, moduli=moduli, mode=mode, phase_a=phase_a)


def _significand_bits(dtype: np.dtype) -> int:
    return _SIGNIFICAND_BITS.get(dtype.char, 53)  # bool/int: their float64 values


def _prepare(a: Any, b: Any):
    """Validate and broadcast the operands; return everything both paths need."""
    engine = engine_for(a, b)
    a = _as_operand(a, "a")
    b = _as_operand(b, "b")
    out_dtype = result_dtype(a.dtype, b.dtype)
    exact_bits = (_significand_bits(a.dtype), _significand_bits(b.dtype))
    squeeze = []
    if a.ndim == 1:
        a = a[None, :]
        squeeze.append(-2)
    if b.ndim == 1:
        b = b[:, None]
        squeeze.append(-1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature {_SIGNATURE} (size {b.shape[-2]} is different from {a.shape[-1]})"
        )
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    batch = batch_a if batch_a == batch_b else np.broadcast_shapes(batch_a, batch_b)
    return engine, a, b, out_dtype, exact_bits, squeeze, batch


def matmul(
    a: Any,
    b: Any,
    out: Any = None,
    *,
    precision: str = "fp64",
    moduli: int | None = None,
    mode: str = "fast",
    phase_a: str | None = None,
) -> Any:
    """Matrix product ``a @ b`` computed exactly on INT8 residues (Ozaki scheme II),
    with a componentwise error no worse than the native routine's standard bound.

    Follows :func:`numpy.matmul` for 1-D, 2-D and stacked (broadcast) operands. The
    operands are scaled by powers of two and rounded to integers ``A'``, ``B'`` (to
    nearest where the scaled entry is at least 64, else truncated; docs/numerics.md);
    ``A'B'`` is recovered *exactly* from its residues modulo INT8 moduli by the Chinese
    remainder theorem and rounded once. The number of moduli is chosen per call from
    exact integer statistics of the operands so that the accuracy guarantee below holds;
    the NumPy and CUDA engines take the same decision and return the same bits.

    Parameters
    ----------
    a, b : array_like (numpy or cupy)
        Operands, as for :func:`numpy.matmul`. float16, float32, float64, complex64,
        complex128, bool and integer dtypes, any byte order; numpy arrays run on the
        NumPy engine, cupy arrays on the CUDA engine.
    out : ndarray, optional
        As :func:`numpy.matmul`'s ``out`` (positional or keyword): an array of the
        operands' kind with exactly the result's shape (no broadcasting), any strides,
        whose dtype the result casts to under ``"same_kind"`` casting; the result is
        written into it and it is returned.
    precision : {"fp64", "fp32"}, default "fp64"
        The unit roundoff ``u_p`` the guarantee is stated in: ``2**-53`` or ``2**-24``.
    moduli : int, optional
        Explicit number of INT8 moduli (2..20; numpy integer scalars accepted). Turns the
        guarantee **off**: one product with exactly that many moduli, whatever the
        data (the error is still bounded a priori, docs/numerics.md "Error analysis",
        but may exceed the native routine's). Default: chosen per call.
    mode : {"fast", "accurate"}, default "fast"
        Scaling rule: ``"fast"`` bounds each row's products by Cauchy–Schwarz;
        ``"accurate"`` runs an extra small integer GEMM for a tighter bound (more bits
        kept per entry, so fewer calls need more moduli).
    phase_a : {"int8", "fp8", "auto"}, optional
        The arithmetic of Phase A (the exact residue products). ``"int8"``: one INT8
        product per modulus. ``"fp8"``: residues modulo FP8 moduli ``s**2``, ``s**3``
        split into e4m3 digits (``|digit| <= 16``), 3 or 6 digit products per modulus
        (docs/numerics.md, "FP8 accumulation"); a count of INT8 moduli, the one the
        guarantee picks or an explicit ``moduli=``, stands for its bits: the FP8 moduli
        with at least ``log2`` of those INT8 moduli's product, and the same scaling, so
        the result is bitwise that of ``"int8"`` (except where ``"int8"`` would need 19
        or 20 moduli: FP8 moduli reach 141 bits, the bits of 18, so the guarantee splits
        sooner; ``moduli=`` above 18 raises ``ValueError``). ``"auto"``: INT8 on the
        NumPy engine and on GPUs whose dense INT8 rate is at least their FP8 rate, FP8
        where INT8 is cut (compute capability 10.3, Blackwell Ultra, and later).
        Default ``None``: the ``OZFFT_PHASE_A`` environment variable, else ``"auto"``.
        The NumPy engine computes FP8 digit products exactly, the CUDA engine on e4m3
        ``mma.sync`` with FP32 sums k-blocked below ``2**24`` (``DeviceUnavailableError``
        on a GPU without FP8 tensor cores, compute capability below 8.9).

    Returns
    -------
    ndarray (numpy or cupy, as the operands), or ``out``
        Shape as :func:`numpy.matmul` (1-D @ 1-D: a numpy scalar for numpy operands, a 0-d
        array for cupy ones, as each library does). dtype: ``numpy.result_type(a, b)``
        when that is a floating dtype (float16, float32, float64, complex64, complex128);
        bool for ``bool @ bool`` (as numpy: whether the exact count of ``True`` pairs is
        nonzero); float64 when both operands are integer, or bool and integer (numpy
        would return an integer array; ozfft computes in floats and converts integers to
        float64 first, exact up to ``2**53``).

    Raises
    ------
    NonFiniteInputError (ValueError)
        An operand contains NaN or Inf; the message names it.
    UnsupportedDTypeError (TypeError)
        An operand's dtype is not a number type ozfft computes in (long double, object,
        strings, datetimes).
    ValueError
        Mismatched core dimensions, unbroadcastable batches, a 0-d operand, bad
        ``precision``, ``moduli``, ``mode`` or ``phase_a`` (or ``OZFFT_PHASE_A``),
        ``moduli`` above 18 with FP8 Phase A, or ``out`` of another shape than the
        result's.
    TypeError
        ``moduli`` is not an integer; numpy and cupy operands are mixed; ``out`` is not
        an array of the operands' kind, or its dtype would take the result by more than
        ``"same_kind"`` casting (numpy's message).

    Notes
    -----
    **Accuracy.** Without ``moduli=``, for every finite input and every output entry,

        |ozfft.matmul(a, b)_ij - (AB)_ij| <= k u (|A||B|)_ij + eta

    (real and imaginary parts separately for complex operands, with
    ``(|A||B|)_ij = sum_h |Re a||Re b| + |Im a||Im b|`` for the real part and
    ``sum_h |Re a||Im b| + |Im a||Re b|`` for the imaginary part), where ``k`` is the inner
    dimension (twice it for complex operands: each part is a real dot product of ``2k``
    terms), ``u = max(u_p, u_out)`` (``u_out`` the output dtype's unit roundoff) and
    ``eta`` the final rounding's underflow term (half the smallest subnormal, per
    product). This is the standard bound of a native GEMM in the output precision
    (``numpy.matmul``, cuBLAS). Well-scaled inputs keep the documented default moduli
    counts (16 for fp64, 8 for fp32); wider ranges get up to 20, then hi/lo splits of
    the operands (up to 4 exact products summed in float64); a call that would need
    more is computed by the native routine (``numpy.matmul`` / ``cupy.matmul`` in float64
    or complex128, rounded once to a narrower output; reported as the profiling phase
    ``native``; not bitwise equal across engines). :func:`matmul_plan` says what a call
    will do. The result does not depend on the order of the inner dimension.
    Results that overflow are ±inf as in numpy; as for the native bound, results within
    ``k u (|A||B|)_ij`` of the overflow threshold may be ±inf too where signs cancel and
    ``(|A||B|)_ij`` itself overflows. See docs/numerics.md, "The accuracy guarantee of
    matmul".

    Examples
    --------
    >>> import numpy as np, ozfft
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> ozfft.matmul(a, a)
    array([[ 7., 10.],
           [15., 22.]])
    >>> ozfft.matmul(np.arange(4).reshape(2, 2), np.eye(2, dtype=int))  # ints: float64
    array([[0., 1.],
           [2., 3.]])
    >>> ozfft.linalg.matmul_plan(a, a).describe()
    '16'
    """
    if out is None and mode == "fast":  # maybe a prepared product
        prepared = _prepared_product(a, b, precision, moduli, mode, phase_a)
        if prepared is not None:
            return prepared(a, b)
    options = _options(precision, moduli, mode, phase_a)
    engine, a, b, out_dtype, exact_bits, squeeze, batch = _prepare(a, b)
    logical = a.dtype == np.bool_ and b.dtype == np.bool_  # bool @ bool: numpy's logical
    m, k = a.shape[-2:]
    n = b.shape[-1]
    shape = _result_shape(batch, m, n, squeeze)
    if out is not None:
        _check_out(engine, out, shape, np.dtype(np.bool_) if logical else out_dtype)
    phase_kind = _phase_a(options, engine)
    xp = engine.xp
    compute = np.complex128 if out_dtype.kind == "c" else np.float64
    if 0 in (*batch, m, n, k):
        result = xp.zeros((*batch, m, n), out_dtype)
    else:
        a = _operand(engine, a, compute, (*batch, m, k))
        b = _operand(engine, b, compute, (*batch, k, n))
        result = _compute(engine, a, b, options, phase_kind, out_dtype, exact_bits)
    if result.shape != shape:  # (1-D operands: their unit core axes dropped)
        result = result.reshape(shape)
    if logical:  # the exact counts of True pairs, as numpy's OR of ANDs
        result = result != 0
    if out is not None:
        out[...] = result
        return out
    if result.ndim == 0 and xp is np:
        return result[()]  # 1-D @ 1-D: a numpy scalar, as numpy.matmul gives
    return result


#: fast-mode calls seen (explicit or default count), by signature
#: (:func:`_prepared_product`): the prepared product, or None (the general path); the
#: oldest goes first past the limit
_PREPARED: dict[tuple, Callable[[Any, Any], Any] | None] = {}
_PREPARED_KEPT = 256


def _prepared_product(
    a: Any, b: Any, precision: Any, moduli: Any, mode: Any, phase_a: Any
) -> Callable[[Any, Any], Any] | None:
    """The product prepared for a fast-mode call, kept per signature (the operands' kind,
    shapes, strides, dtypes and B's alignment, the options, the variables of
    :func:`ozfft.config.product_switches`, cupy's current device): ``run(a, b)`` returns
    what the general path would, with its validation and every choice that depends only
    on the signature made once. Device operands of one float64 or complex128 dtype (or
    float32, complex64: converted on each call) with the same batch shape, ``a``
    C-contiguous, whose product the engine runs in one pass: with an explicit count
    (:func:`~ozfft.scheme.gemm.explicit_product_executor`), or the default count that the
    one-pass probe tests (:func:`_guaranteed_product`). None for every other call (numpy
    operands among them), which takes the general path."""
    if type(a) is np.ndarray or type(a) is not type(b):
        return None
    try:
        key = (
            type(a), a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype,
            b.data.ptr % b.dtype.itemsize, precision, moduli, type(moduli), mode, phase_a,
            config.product_switches(), _current_device(),
        )  # fmt: skip
        prepared = _PREPARED.get(key, _UNSEEN)
    except (AttributeError, TypeError):  # not an array with a device pointer; unhashable
        return None
    if prepared is _UNSEEN:
        prepared = _prepare_product(a, b, precision, moduli, mode, phase_a)
        put_bounded(_PREPARED, key, prepared, _PREPARED_KEPT)
    return prepared


_UNSEEN = object()


def _forget_prepared() -> None:
    """Drop the prepared products and the CUDA engine's launch plans (built again on the
    next call): for tests that patch what they are built from."""
    _PREPARED.clear()
    select = sys.modules.get("ozfft.engines.select")
    if select is not None and select.cuda_engine.cache_info().currsize:
        select.cuda_engine().forget_plans()


def _current_device() -> int | None:
    """cupy's current device (None where cupy was never imported)."""
    cupy = sys.modules.get("cupy")
    return None if cupy is None else cupy.cuda.runtime.getDevice()


def _prepare_product(
    a: Any, b: Any, precision: Any, moduli: Any, mode: Any, phase_a: Any
) -> Callable[[Any, Any], Any] | None:
    """:func:`_prepared_product`'s value, built: the general path's validation (and its
    errors), then the engine's prepared product where the call qualifies. binary32
    operands are converted to binary64 on each call as the general path converts them
    (:meth:`~ozfft.engines.base.Engine.astype`, exact), and the product is rounded to
    binary32 once, as there."""
    options = _options(precision, moduli, mode, phase_a)
    engine, _, _, out_dtype, *_ = _prepare(a, b)  # (validated: its errors)
    if (
        a.ndim < 2
        or b.ndim < 2
        or a.shape[:-2] != b.shape[:-2]  # (no broadcast batches)
        or not a.dtype == b.dtype == out_dtype
        or out_dtype.char not in "fdFD"  # (float16 rounds twice: the general path)
    ):
        return None
    compute = np.dtype(np.complex128 if out_dtype.kind == "c" else np.float64)
    widen = out_dtype != compute
    if widen:  # (the layouts the product will see: the conversions' C-contiguous arrays)
        a, b = engine.astype(a, compute), engine.astype(b, compute)
    phase_kind = _phase_a(options, engine)
    if options.moduli is None:  # the accuracy guarantee: the one-pass probe first
        product = _guaranteed_product(engine, a, b, options, phase_kind, out_dtype)
    else:
        product = explicit_product_executor(
            engine, a, b, num_moduli=options.moduli, mode=options.mode, out_dtype=out_dtype,
            phase_a=phase_kind,
        )  # fmt: skip
    if product is None or not widen:
        return product

    def widened(a: Any, b: Any) -> Any:
        return product(engine.astype(a, compute), engine.astype(b, compute))

    return widened


def _guaranteed_product(
    engine: Engine, a: Any, b: Any, options: OzakiOptions, phase_kind: str, out_dtype: np.dtype
) -> Callable[[Any, Any], Any] | None:
    """A default-count call of operands laid out as ``a`` and ``b`` (binary64 stacks),
    prepared: the probe and the product queued as the engine prepared them
    (:func:`~ozfft.scheme.gemm.guaranteed_product_executor`), and where the test does not
    prove the default count, the general path's decision from that same probe."""
    probed_product = guaranteed_product_executor(
        engine, a, b, precision=options.precision, mode=options.mode, out_dtype=out_dtype,
        out_bits=_significand_bits(out_dtype), phase_a=phase_kind,
    )  # fmt: skip
    if probed_product is None:
        return None
    exact_bits = (_significand_bits(out_dtype),) * 2

    def run(a: Any, b: Any) -> Any:
        out, probe = probed_product(a, b)
        if out is not None:
            return out
        return _compute(engine, a, b, options, phase_kind, out_dtype, exact_bits, probe)

    return run


def _result_shape(batch: tuple[int, ...], m: int, n: int, squeeze: list[int]) -> tuple:
    """The shape of ``matmul``'s result: ``(*batch, m, n)`` less the core axes of 1-D
    operands (``squeeze``: -2 where ``a`` was 1-D, -1 where ``b`` was)."""
    return (*batch, *(() if -2 in squeeze else (m,)), *(() if -1 in squeeze else (n,)))


def _check_out(engine: Engine, out: Any, shape: tuple, dtype: np.dtype) -> None:
    """``out`` as :func:`numpy.matmul` takes it: an array of the operands' kind with
    exactly the result's ``shape``, whose dtype ``dtype`` casts to under ``"same_kind"``
    (numpy's messages)."""
    kind = engine.xp.__name__  # "numpy" or "cupy"
    if not hasattr(out, "dtype") or array_module_name(out) != kind:
        raise TypeError(f"matmul: out must be a {kind} array, as the operands are")
    if tuple(out.shape) != shape:
        raise ValueError(
            f"non-broadcastable output operand with shape {tuple(out.shape)} doesn't match "
            f"the broadcast shape {shape}"
        )
    if not np.can_cast(dtype, out.dtype, casting="same_kind"):
        raise TypeError(
            f"Cannot cast ufunc 'matmul' output from {dtype!r} to {out.dtype!r} with "
            f"casting rule 'same_kind'"
        )


def _operand(engine: Engine, x: Any, compute: Any, shape: tuple[int, ...]) -> Any:
    """``x`` in the compute dtype, broadcast to ``shape`` (no call where it is already)."""
    if x.dtype != compute:
        x = engine.astype(x, compute)
    return x if x.shape == shape else engine.xp.broadcast_to(x, shape)


def _phase_a(options: OzakiOptions, engine: Engine) -> str:
    """The call's Phase A, ``"int8"`` or ``"fp8"`` (resolved for the engine); an explicit
    count of moduli that FP8 moduli cannot stand for is refused before any work."""
    fp8_runs = options.moduli is None or options.moduli <= fp8_max_moduli()
    kind = resolve_phase_a(options.phase_a, engine, fp8_runs=fp8_runs)
    if kind == "fp8" and options.moduli is not None:
        fp8_system_for(options.moduli)
    return kind


def _compute(
    engine: Engine,
    a: Any,
    b: Any,
    options: OzakiOptions,
    phase_kind: str,
    out_dtype: np.dtype,
    exact_bits: tuple[int, int],
    probed: Any = None,
) -> Any:
    """The product of compute-dtype operands as ``options`` say, in ``out_dtype``
    (``probed``: the default count's one-pass probe, run already: :func:`_guaranteed_product`)."""
    if options.moduli is not None:  # explicit count: no guarantee
        engine_dtype = np.float32 if out_dtype == np.float16 else out_dtype
        out = emulated_matmul(
            engine,
            a,
            b,
            num_moduli=options.moduli,
            mode=options.mode,
            out_dtype=engine_dtype,
            phase_a=phase_kind,
        )
        return out if out.dtype == out_dtype else engine.astype(out, out_dtype)
    clock = engine.clock()

    def timer(name: str) -> AbstractContextManager:
        return phase(name, clock)

    # a float16 result is rounded once from float64 (rounding_error_bound counts it)
    engine_dtype = np.float64 if out_dtype == np.float16 else out_dtype
    out, plan = guaranteed_matmul(
        engine,
        a,
        b,
        precision=options.precision,
        mode=options.mode,
        out_dtype=engine_dtype,
        out_bits=_significand_bits(out_dtype),
        exact_bits=exact_bits,
        timer=timer,
        phase_a=phase_kind,
        probed=probed,
    )
    if plan.native:  # in the compute dtype (float64 / complex128), rounded once below
        with phase("native", clock):
            out = engine.xp.matmul(a, b)
    with np.errstate(over="ignore"):
        return engine.astype(out, out_dtype)


def matmul_plan(
    a: Any,
    b: Any,
    *,
    precision: str = "fp64",
    moduli: int | None = None,
    mode: str = "fast",
    phase_a: str | None = None,
) -> MatmulPlan:
    """What :func:`matmul` does for these operands and options, without computing the
    product: the moduli count per exact product, whether A and/or B are split into hi
    and lo parts, or whether the native routine runs (``plan.describe()`` gives a short
    form: ``"16"``, ``"19"``, ``"16 x4 (a and b split)"``, ``"native"``; with FP8 Phase
    A the FP8 moduli's bits, ``"fp8 127 bits"``, and ``plan.phase_a`` says which ran,
    ``plan.system`` on which moduli)."""
    options = _options(precision, moduli, mode, phase_a)
    engine, a, b, out_dtype, exact_bits, _, batch = _prepare(a, b)
    phase_kind = _phase_a(options, engine)
    is_complex = out_dtype.kind == "c"
    if options.moduli is not None:
        return MatmulPlan(
            options.moduli,
            guaranteed=False,
            reason="explicit moduli=",
            phase_a=phase_kind,
            is_complex=is_complex,
        )
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if 0 in (*batch, m, n, k):
        return MatmulPlan(
            options.num_moduli, reason="empty product", phase_a=phase_kind, is_complex=is_complex
        )
    xp = engine.xp
    compute = np.complex128 if out_dtype.kind == "c" else np.float64
    a = engine.prepare_operand(_operand(engine, a, compute, (*batch, m, k)))
    b = _operand(engine, b, compute, (*batch, k, n))
    bt = engine.prepare_operand(xp.swapaxes(b, -1, -2))
    return guaranteed_plan(
        engine,
        a,
        bt,
        precision=options.precision,
        mode=options.mode,
        out_bits=_significand_bits(out_dtype),
        exact_bits=exact_bits,
        phase_a=phase_kind,
    )
