"""The non-finite test of one transform call's input (NaN or Inf raise
:class:`~ozfft.errors.NonFiniteInputError`: the fixed-point and Ozaki schemes work on
finite numbers only).

numpy input is tested at once, before any work. On a GPU the test costs no memory pass of
its own where it can: the first fused pass reads every element of the input anyway, and
its per-line maxima of the high words see the exponent field ``0x7ff`` of a NaN or Inf
(``kernels/fft/fixed_pass.cu``, the ``nonfinite`` flag), so a call on finite data pays one
4-byte read when it ends. Where the first pass cannot do that (the generic executors, or
an input cropped before its first pass) ``isfinite`` tests the input when the call ends.
The error is raised before the result is delivered either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engines.base import ArrayFlag
from ..errors import NonFiniteInputError

__all__ = ["InputCheck"]


class InputCheck:
    """The non-finite test of a call's input ``x``: call it before returning the result.

    :meth:`flag` hands the device flag to the call's first pass (once); an executor takes
    it when its ``checks_input`` attribute is true and the pass reads all of ``x``. A call
    that splits ``x`` into parts, each read by a first pass of its own (the chunks of an
    overlapped distributed transform), announces each with :meth:`expect_part`: every
    such pass gets the same flag, and ``isfinite`` stands in unless all of them took it."""

    def __init__(self, xp: Any, x: Any, new_flag: Callable[[], Any] | None = None) -> None:
        self._xp = xp
        self._x = x
        # the engine's flags (Engine.new_input_flag): .array for the kernel, .raised()
        self._new_flag = new_flag if new_flag is not None else (lambda: ArrayFlag(xp))
        self._flag: Any = None
        # integers and bool are finite; numpy input is tested now (before any work)
        self._pending = x.dtype.kind in "fc"
        self._offered = False
        self._parts = 0  # parts announced (0: x is read whole)
        self._given = 0  # first passes that took the flag
        if self._pending and xp is np:
            self._raise_if_bad(bool(np.isfinite(x).all()))
            self._pending = False

    def expect_part(self) -> None:
        """The next first pass reads one part of ``x`` (not all of it)."""
        self._parts += 1
        self._offered = False

    def flag(self, executor: Any, shape: tuple[int, ...]) -> Any | None:
        """A zeroed device int32 flag for the first pass of the call (or of the part
        announced last), which sets it nonzero if its input holds NaN or Inf — or None:
        the test is done already, this is not a first pass, the executor cannot raise the
        flag (``checks_input``), or its input is not all of ``x`` (``shape`` differs, where
        no part was announced)."""
        first = not self._offered
        self._offered = True
        if (
            not first
            or not self._pending
            or not getattr(executor, "checks_input", False)
            or (not self._parts and tuple(shape) != tuple(self._x.shape))
        ):
            return None
        if self._flag is None:
            self._flag = self._new_flag()
        self._given += 1
        return self._flag.array

    def __call__(self) -> None:
        """Raise :class:`~ozfft.errors.NonFiniteInputError` if ``x`` held NaN or Inf
        (waits for the device where the test ran there)."""
        if not self._pending:
            return
        self._pending = False
        finite = self._flag is None or not self._flag.raised()
        if finite and self._given < max(self._parts, 1):  # some of x read by no flagged pass
            finite = bool(self._xp.isfinite(self._x).all())
        self._raise_if_bad(finite)

    def _raise_if_bad(self, finite: bool) -> None:
        if finite:
            return
        xp, x = self._xp, self._x
        bad = int((~xp.isfinite(x)).sum())
        kinds = " and ".join(
            name
            for name, present in (
                ("NaN", bool(xp.isnan(x).any())),
                ("Inf", bool(xp.isinf(x).any())),
            )
            if present
        )
        raise NonFiniteInputError("x", bad, kinds)
