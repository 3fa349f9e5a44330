"""Run a plan: a length-n complex DFT along axis 0 of an ``(n, B)`` array, on an engine.

Data layout between stages: ``(K, m, B)`` with K the output digits found so far
(``k_1`` slowest) and m the remaining input positions. Stage l regroups the data as
``(r_{l-1}, m_{l+1}, r_l, P * B)`` so that its matrices, indexed by
``(k_{l-1}, j')``, meet their vectors in one batched GEMM. The last step reverses the
output digits (``k = k_1 + r_1 k_2 + ...``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engines.base import Engine
from ..engines.select import numpy_engine
from ..scheme.fixed import fixed_left_product
from .plan import FFTPlan, Stage

__all__ = ["cmul", "transform", "transform_numpy"]


def _engine_key(engine: Engine) -> tuple:
    xp = engine.xp
    device = xp.cuda.Device().id if engine.name == "cuda" else None
    return (engine.name, device)


def _stage_residues(engine: Engine, stage: Stage, num_moduli: int):
    from ..ozaki.moduli import moduli_set

    key = _engine_key(engine)
    res = stage.residues.get(key)
    if res is None:
        res = engine.integer_residues(stage.re, stage.im, moduli_set(num_moduli))
        stage.residues[key] = res
    return res


def cmul(xp, a, b):
    """Complex product from separate real ufuncs (no FMA contraction): the same bits on
    numpy and cupy."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    re = ar * br
    re -= ai * bi
    im = ar * bi
    im += ai * br
    out = xp.empty(re.shape, xp.complex128)
    out.real = re
    out.imag = im
    return out


def _stockham(engine: Engine, x: Any, plan: FFTPlan) -> Any:
    xp = engine.xp
    n, batch = x.shape
    radices = plan.radices
    data = x.reshape(1, n, batch)
    for idx, stage in enumerate(plan.stages):
        r = stage.radix
        kprev, m, _ = data.shape
        suffix = m // r
        if idx == 0:
            operand = data.reshape(1, 1, r, suffix * batch)
        else:
            prev = radices[idx - 1]
            p = kprev // prev
            d = data.reshape(p, prev, r, suffix, batch)
            d = xp.transpose(d, (1, 3, 2, 0, 4))  # (prev, suffix, r, p, batch)
            operand = xp.ascontiguousarray(d).reshape(prev, suffix, r, p * batch)
        w = _stage_residues(engine, stage, plan.num_moduli)
        y = fixed_left_product(
            engine,
            w,
            stage.bits,
            stage.squared_row_bound_log2,
            operand,
            plan.num_moduli,
            np.complex128,
        )
        if idx == 0:
            data = y.reshape(r, suffix, batch)  # (k_1, j', B)
        else:
            y = y.reshape(prev, suffix, r, p, batch)
            y = xp.transpose(y, (3, 0, 2, 1, 4))  # (p, prev, k_l, suffix, batch)
            data = xp.ascontiguousarray(y).reshape(p * prev * r, suffix, batch)
    digits = data.reshape(*radices, batch)
    order = (*range(len(radices) - 1, -1, -1), len(radices))
    return xp.ascontiguousarray(xp.transpose(digits, order)).reshape(n, batch)


def _bluestein(engine: Engine, x: Any, plan: FFTPlan) -> Any:
    xp = engine.xp
    blue = plan.bluestein
    key = _engine_key(engine)
    if key not in blue.device:
        blue.device[key] = (xp.asarray(blue.chirp), xp.asarray(blue.kernel_hat))
    chirp, kernel_hat = blue.device[key]
    n, batch = x.shape
    a = xp.zeros((blue.m, batch), xp.complex128)
    a[:n] = cmul(xp, x, chirp[:, None])
    spec = transform(engine, a, blue.inner)
    spec = cmul(xp, spec, kernel_hat[:, None])
    conv = xp.conj(transform(engine, xp.conj(spec), blue.inner)) / blue.m
    return cmul(xp, conv[:n], chirp[:, None])


def transform(engine: Engine, x: Any, plan: FFTPlan) -> Any:
    """Forward DFT (``exp(-2 pi i jk/n)``, unnormalized) of each column of complex128 ``x``."""
    if x.shape[1] == 0 or plan.n == 1:
        return x.astype(np.complex128, copy=True)
    if plan.bluestein is not None:
        return _bluestein(engine, x, plan)
    return _stockham(engine, x, plan)


def transform_numpy(x: np.ndarray, plan: FFTPlan) -> np.ndarray:
    """:func:`transform` on the NumPy engine."""
    return transform(numpy_engine(), np.asarray(x, np.complex128), plan)
