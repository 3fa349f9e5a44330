"""``ozfft.matmul``: numpy.matmul semantics, Ozaki-II numerics."""

from __future__ import annotations

from typing import Any

import numpy as np

from .engines.select import engine_for
from .errors import UnsupportedDTypeError
from .options import GemmOptions
from .scheme.gemm import emulated_matmul

__all__ = ["SUPPORTED_DTYPES", "matmul"]

SUPPORTED_DTYPES = tuple(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))
_SUPPORTED_NAMES = ", ".join(str(d) for d in SUPPORTED_DTYPES)
_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def _as_operand(x: Any, name: str):
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        x = np.asarray(x)
    if x.dtype not in SUPPORTED_DTYPES:
        raise UnsupportedDTypeError(name, x.dtype, _SUPPORTED_NAMES)
    if x.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if name == 'a' else 1} does not have enough "
            f"dimensions (has 0, gufunc core with signature {_SIGNATURE} requires 1)"
        )
    return x


def matmul(
    a: Any,
    b: Any,
    *,
    precision: str = "fp64",
    moduli: int | None = None,
    mode: str = "fast",
) -> Any:
    """Matrix product ``a @ b`` emulated exactly on INT8 residues (Ozaki scheme II).

    Follows :func:`numpy.matmul` for 1-D, 2-D and stacked (broadcast) operands. The
    result has the operands' promoted dtype (float32, float64, complex64 or complex128).

    The operands are scaled by powers of two and truncated to integers ``A'``, ``B'``;
    ``A'B'`` is recovered *exactly* from its residues modulo ``moduli`` INT8 moduli by the
    Chinese remainder theorem and rounded once to the output precision. The only error
    is the truncation, bounded in docs/numerics.md.

    Parameters
    ----------
    precision : {"fp64", "fp32"}
        Target accuracy; selects the default number of moduli.
    moduli : int, optional
        Number of INT8 moduli (2..20), overriding the default of ``precision``.
    mode : {"fast", "accurate"}
        ``"fast"`` bounds the products by Cauchy–Schwarz; ``"accurate"`` runs an extra
        small integer GEMM for a tighter bound (more bits kept per element).

    Raises
    ------
    NonFiniteInputError (ValueError)
        An operand contains NaN or Inf; the message names it.
    UnsupportedDTypeError (TypeError)
        An operand's dtype is not one of the four supported.
    ValueError
        Mismatched core dimensions, unbroadcastable batches, bad ``moduli``/``mode``.
    """
    options = GemmOptions(precision=precision, moduli=moduli, mode=mode)
    engine = engine_for(a, b)
    a = _as_operand(a, "a")
    b = _as_operand(b, "b")
    xp = engine.xp
    out_dtype = np.result_type(a.dtype, b.dtype)

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
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k = a.shape[-2:]
    n = b.shape[-1]
    compute = np.complex128 if out_dtype.kind == "c" else np.float64
    if 0 in (*batch, m, n, k):
        out = xp.zeros((*batch, m, n), out_dtype)
    else:
        a = xp.broadcast_to(a.astype(compute, copy=False), (*batch, m, k))
        b = xp.broadcast_to(b.astype(compute, copy=False), (*batch, k, n))
        out = emulated_matmul(
            engine, a, b, num_moduli=options.num_moduli, mode=options.mode, out_dtype=out_dtype
        )
    for axis in squeeze:
        out = out.squeeze(axis) if out.shape[axis] == 1 else out
    return out
