"""Executors: a plan prepared for one engine, with the device state it needs.

An executor computes the unnormalized forward DFT (``exp(-2 pi i jk/n)``) of complex128
data along one axis: ``executor.forward(x, axis)``; it never writes into ``x``.
:class:`StageExecutor` runs an Ozaki-II plan stage by stage on any engine (Ozaki-II
products through :mod:`ozfft.scheme`; an FP8 Phase A on the NumPy engine); the
fixed-point plans run on the NumPy engine in :mod:`.fixed`, Bluestein plans in
:mod:`.bluestein` around an inner executor; engines may offer faster executors of their
own (the CUDA engine's fused per-axis kernel), see
:meth:`ozfft.engines.base.Engine.prepare_fft`.

Stage-loop data layout between stages: ``(K, m, B)`` with K the output digits found so
far (``k_1`` slowest) and m the remaining input positions. Stage l regroups the data as
``(r_{l-1}, m_{l+1}, r_l, P * B)`` so that its matrices, indexed by ``(k_{l-1}, j')``,
meet their vectors in one batched GEMM. The last step reverses the output digits
(``k = k_1 + r_1 k_2 + ...``).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..engines.base import Engine, ResidueStack
from ..ozaki.residue_system import int8_system
from ..ozaki.residues import symmetric_mod
from ..scheme.fixed import fixed_left_product
from ..scheme.gemm import fp8_system_for
from .plan import FFTPlan

__all__ = [
    "ColumnsExecutor",
    "FFTExecutor",
    "StageExecutor",
    "cmul",
    "no_input_flag",
    "regroup_in",
    "regroup_out",
    "unreverse",
]


class FFTExecutor(Protocol):
    """A plan prepared for one engine and device. ``checks_input``: whether its passes
    test the data they read for NaN and Inf as they load it (the CUDA fused passes): they
    then take a device int32 flag ``nonfinite`` to set (the call's
    :class:`~ozfft.fourier.input_check.InputCheck`); other executors take None."""

    plan: FFTPlan
    checks_input: bool

    def forward(self, x: Any, axis: int, *, overwrite: bool = False, nonfinite: Any = None) -> Any:
        """Unnormalized forward DFT of complex128 ``x`` along ``axis``. The result is a new
        array, or ``x`` itself when ``overwrite`` is true and the executor can work in
        place (the caller then must not use ``x`` afterwards)."""


def no_input_flag(executor: Any, nonfinite: Any) -> None:
    """Refuse a non-finite flag where ``executor`` does not test its input."""
    if nonfinite is not None:
        raise ValueError(f"{type(executor).__name__} does not test its input for NaN/Inf")


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


def regroup_in(xp, data, radices, idx: int):
    """Stage ``idx``'s operand ``(prev, suffix, r, P * B)`` from data ``(K, m, B)``."""
    kprev, m, batch = data.shape
    r = radices[idx]
    suffix = m // r
    if idx == 0:
        return data.reshape(1, 1, r, suffix * batch)
    prev = radices[idx - 1]
    p = kprev // prev
    d = data.reshape(p, prev, r, suffix, batch)
    d = xp.transpose(d, (1, 3, 2, 0, 4))  # (prev, suffix, r, p, batch)
    return xp.ascontiguousarray(d).reshape(prev, suffix, r, p * batch)


def regroup_out(xp, y, radices, idx: int, shape):
    """Data ``(K', m', B)`` from stage ``idx``'s result ``(prev, suffix, r, P * B)``;
    ``shape`` is the stage input's ``(K, m, B)``."""
    kprev, m, batch = shape
    r = radices[idx]
    suffix = m // r
    if idx == 0:
        return y.reshape(r, suffix, batch)  # (k_1, j', B)
    prev = radices[idx - 1]
    p = kprev // prev
    y = y.reshape(prev, suffix, r, p, batch)
    y = xp.transpose(y, (3, 0, 2, 1, 4))  # (p, prev, k_l, suffix, batch)
    return xp.ascontiguousarray(y).reshape(p * prev * r, suffix, batch)


def unreverse(xp, data, radices, n: int, batch: int):
    """Natural order ``(n, B)`` from the digit-reversed ``(K, 1, B)`` of the last stage."""
    digits = data.reshape(*radices, batch)
    order = (*range(len(radices) - 1, -1, -1), len(radices))
    return xp.ascontiguousarray(xp.transpose(digits, order)).reshape(n, batch)


class ColumnsExecutor:
    """Base of the executors that transform the columns of an ``(n, B)`` array: ``forward``
    moves ``axis`` to the front, runs :meth:`transform` and moves it back."""

    plan: FFTPlan
    checks_input = False

    def _xp(self):
        return np

    def forward(self, x: Any, axis: int, *, overwrite: bool = False, nonfinite: Any = None) -> Any:
        no_input_flag(self, nonfinite)
        xp = self._xp()
        moved = xp.moveaxis(x, axis, 0)
        shape = moved.shape
        cols = xp.ascontiguousarray(moved).reshape(self.plan.n, -1)
        return xp.moveaxis(self.transform(cols).reshape(shape), 0, axis)

    def transform(self, x: Any) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


class StageExecutor(ColumnsExecutor):
    """An Ozaki-II stage plan, stage by stage, on any engine (the generic executor).

    Owns the plan's engine-side state: the residues of the Ozaki-II stage matrices.
    ``phase_a="fp8"`` (the NumPy engine): Phase A on the FP8 residue system with at least
    the bits of the plan's INT8 moduli, the INT8 scaling kept: the same bits.
    """

    def __init__(self, engine: Engine, plan: FFTPlan, phase_a: str = "int8") -> None:
        if plan.scheme != "ozaki" or plan.bluestein is not None:
            raise ValueError("the stage executor runs Ozaki-II stage plans")
        if phase_a not in ("int8", "fp8"):
            raise ValueError(f"phase_a is 'int8' or 'fp8' here, not {phase_a!r}")
        if phase_a == "fp8" and engine.name != "numpy":
            raise NotImplementedError(
                "phase_a='fp8' with moduli= (the Ozaki-II stage path): its FP8 stage products "
                "run on the NumPy engine only; without moduli= the fixed-point FFT runs its "
                "FP8 products on the GPU"
            )
        self.engine = engine
        self.plan = plan
        self.phase_a = phase_a
        self._system = fp8_system_for(plan.num_moduli) if phase_a == "fp8" else None
        self._residues: dict[int, Any] = {}

    def _xp(self):
        return self.engine.xp

    def transform(self, x: Any) -> Any:
        """Forward DFT of each column of complex128 ``x`` ``(n, B)``."""
        if x.shape[1] == 0 or self.plan.n == 1:
            return x.astype(np.complex128, copy=True)
        return self._stages(x)

    def _stage_residues(self, idx: int):
        res = self._residues.get(idx)
        if res is None:
            stage = self.plan.stages[idx]
            if self._system is None:
                moduli = int8_system(self.plan.num_moduli)
                res = self.engine.integer_residues(stage.re, stage.im, moduli)
            else:
                res = _symmetric_residues(stage.re, stage.im, self._system.moduli)
            self._residues[idx] = res
        return res

    def _stages(self, x: Any) -> Any:
        xp = self.engine.xp
        plan = self.plan
        n, batch = x.shape
        data = x.reshape(1, n, batch)
        for idx, stage in enumerate(plan.stages):
            operand = regroup_in(xp, data, plan.radices, idx)
            y = fixed_left_product(
                self.engine,
                self._stage_residues(idx),
                stage.bits,
                stage.squared_row_bound_log2,
                operand,
                plan.num_moduli,
                np.complex128,
                system=self._system,
            )
            data = regroup_out(xp, y, plan.radices, idx, data.shape)
        return unreverse(xp, data, plan.radices, n, batch)


def _symmetric_residues(re: np.ndarray, im: np.ndarray, moduli) -> ResidueStack:
    """``(N, 2, ...)`` float32 symmetric residues (``|r| <= m/2``, exact) of the Gaussian
    integer matrix ``re + i im`` modulo every ``m`` (the FP8 moduli, up to ``32**3``)."""
    parts = [np.asarray(v, np.int64) for v in (re, im)]
    planes = [np.stack([symmetric_mod(v, m, np.float32) for v in parts]) for m in moduli]
    return ResidueStack(np.stack(planes), is_complex=True)
