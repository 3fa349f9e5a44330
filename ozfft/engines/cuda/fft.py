"""The CUDA engine's fused FFT: one kernel launch per axis pass (``kernels/fft/``).

A fixed-point plan (``ozfft.fourier.plan``, scheme ``"fixed"``) is prepared once per
device: its stage matrices become balanced INT8 digits laid out in the register order
of ``mma.sync.m16n8k32`` A fragments (one 16-byte load per lane and digit), and the
kernel is specialized by macros (length, radices, digit counts). A pass reads each line
of the axis from HBM once and writes it once; residues, digits and INT32 accumulators
never leave the multiprocessor. Results equal ``ozfft.fourier.fixed`` (NumPy) bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import DeviceMemoryError, DeviceUnavailableError
from ...ozaki.fixed_point import Carried, matrix_digits
from ...ozaki.residue_system import e4m3_codes
from ..base import check_fp8_tensor_cores, compute_capability
from .compiler import get_function
from .launch import launcher
from .workspace import free_device_bytes

__all__ = ["FixedPassExecutor", "FourStepExecutor", "fragment_layout", "prepare_fixed"]

_LINES = 8  #: lines per block (the MMA's N)
_WARPS = 8  #: warps per block, doubled where a single block fills a multiprocessor
_SOURCE = "fft/fixed_pass.cu"
_KERNEL = "oz_fft_fixed_pass"
#: the kinds of oz_fft_fixed_pass's parameters, in its order (kernels/fft/fixed_pass.cu):
#: in, out, inner, lines, frag1..3, twiddle, tw_rows, exps_in, p_mode, p_n, p_lo, p_q,
#: exps_out, out_inner, out_n, nonfinite, conj_in
_PASS_SIGNATURE = (
    "ptr", "ptr", "i64", "i64", "ptr", "ptr", "ptr", "ptr", "i64", "ptr", "i32", "i64",
    "i64", "i64", "ptr", "i64", "i32", "ptr", "i32",
)  # fmt: skip


def fragment_layout(embedding: np.ndarray, digits: int) -> np.ndarray:
    """A fragments of every stage matrix: int8 ``(G, MT, KC, digits, 32, 4, 4)``, or
    ``(G, 1, 1, digits, 32, 2, 4)`` for a stage of ``2r <= 16`` (its m16n8k16 MMAs read
    only a0 and a1, so the fragments of the k <= 16 half are stored alone: 8 bytes per
    lane, no unused bytes between them).

    ``embedding`` is the int64 ``(prev, suffix, 2r, 2r)`` real embedding; it is split into
    balanced digits, padded to ``MT`` tiles of 16 rows and ``KC`` chunks of 32 columns,
    and each lane's four registers hold (PTX ISA, m16n8k32 ``.s8`` A layout, with
    ``g = lane / 4``, ``t = lane % 4``): a0 row g, columns 4t..4t+3; a1 row g+8; a2 row g,
    columns 16+4t..; a3 row g+8, columns 16+4t.. .
    """
    prev, suffix, rows, cols = embedding.shape
    groups = prev * suffix
    mt, kc = -(-rows // 16), -(-cols // 32)
    w = matrix_digits(embedding.reshape(groups, rows, cols), digits)  # (dw, G, rows, cols)
    padded = np.zeros((digits, groups, mt * 16, kc * 32), np.int8)
    padded[..., :rows, :cols] = w
    out = _a_fragments(padded)
    if rows <= 16 and cols <= 16:
        out = out[..., :2, :]
    return np.ascontiguousarray(out)


def _a_fragments(padded: np.ndarray) -> np.ndarray:
    """``(digits, G, 16 MT, 32 KC)`` 8-bit tiles as the m16n8k32 A fragments of every lane:
    ``(G, MT, KC, digits, 32, 4, 4)`` (:func:`fragment_layout`)."""
    digits, groups, rows, cols = padded.shape
    mt, kc = rows // 16, cols // 32
    lane = np.arange(32)
    reg = np.arange(4)
    row = (lane // 4)[:, None] + 8 * (reg[None, :] & 1)  # (32, 4)
    col = 4 * (lane % 4)[:, None] + 16 * (reg[None, :] >> 1)  # (32, 4)
    gi = np.arange(groups).reshape(-1, 1, 1, 1, 1, 1, 1)
    mi = np.arange(mt).reshape(1, -1, 1, 1, 1, 1, 1)
    ki = np.arange(kc).reshape(1, 1, -1, 1, 1, 1, 1)
    di = np.arange(digits).reshape(1, 1, 1, -1, 1, 1, 1)
    ri = 16 * mi + row.reshape(1, 1, 1, 1, 32, 4, 1)
    ci = 32 * ki + col.reshape(1, 1, 1, 1, 32, 4, 1) + np.arange(4).reshape(1, 1, 1, 1, 1, 1, 4)
    out = padded[di, gi, ri, ci]
    assert out.shape == (groups, mt, kc, digits, 32, 4, 4)
    return out


def fp8_fragment_layout(embedding: np.ndarray, digits: int) -> np.ndarray:
    """A fragments of every stage matrix for the FP8 (e4m3) MMAs, uint8 ``(G, MT, KC, P,
    digits, 32, 4, 4)``: each balanced digit ``c = 16 c_h + c_l`` (``c_l`` in [0, 15],
    ``c_h`` in [-8, 7]) as e4m3 codes of ``16 c_h`` and ``c_l`` — P = 2 planes of the
    m16n8k32 layout (:func:`fragment_layout`), or for a stage of ``2r <= 16`` (its k fills
    half a chunk) P = 1 tile ``[16 c_h | c_l]`` along k, whose MMAs read each B word in
    both k halves (kernels/fft/fixed_pass.cu, "FP8 Phase A")."""
    prev, suffix, rows, cols = embedding.shape
    groups = prev * suffix
    mt, kc = -(-rows // 16), -(-cols // 32)
    w = matrix_digits(embedding.reshape(groups, rows, cols), digits).astype(np.int64)
    high, low = e4m3_codes(16 * (w >> 4)), e4m3_codes(w & 15)
    if rows <= 16 and cols <= 16:
        padded = np.zeros((digits, groups, 16, 32), np.uint8)
        padded[..., :rows, :cols] = high
        padded[..., :rows, 16 : 16 + cols] = low
        return np.ascontiguousarray(_a_fragments(padded)[:, :, :, None])
    planes = []
    for plane in (high, low):
        padded = np.zeros((digits, groups, mt * 16, kc * 32), np.uint8)
        padded[..., :rows, :cols] = plane
        planes.append(_a_fragments(padded))
    return np.ascontiguousarray(np.stack(planes, axis=3))


#: static shared memory of the pass kernel beside its dynamic lines (line tables, ORs)
_STATIC_SMEM = 1024


def check_shared_memory(n: int, dynamic: int, per_block: int) -> None:
    """Raise :class:`~ozfft.errors.DeviceUnavailableError` where a block of the pass of
    length ``n`` (``dynamic`` bytes of lines, plus the kernel's static tables) does not fit
    the ``per_block`` bytes of shared memory the GPU grants one block."""
    need = dynamic + _STATIC_SMEM
    if need > per_block:
        raise DeviceUnavailableError(
            f"the fused FFT pass of length {n} needs {need} bytes of shared memory per "
            f"block (8 lines of {n} fixed-point elements); this GPU grants {per_block}"
        )


class FixedPassExecutor:
    """A one-pass fixed-point plan on one GPU: digit fragments on the device, compiled
    kernel. With ``twiddle=(re, im, n)`` it is the second pass of a four-step plan: row
    ``k_a`` (of ``n_a`` rows) of a ``(batch, n_a, plan.n)`` array is multiplied at entry by
    the exact fixed-point roots ``t[k_a j]`` of unity of order ``n``."""

    def __init__(
        self,
        plan: Any,
        twiddle: tuple[np.ndarray, np.ndarray] | None = None,
        phase_a: str = "int8",
    ) -> None:
        import cupy

        if plan.scheme != "fixed" or not 1 <= len(plan.stages) <= 3:
            raise ValueError("the fused pass runs one-pass fixed-point plans of 1 to 3 stages")
        if phase_a not in ("int8", "fp8"):
            raise ValueError(f"phase_a must be 'int8' or 'fp8', not {phase_a!r}")
        if phase_a == "fp8":
            check_fp8_tensor_cores(compute_capability())
        self.plan = plan
        self.phase_a = phase_a
        self._cp = cupy
        fmt = plan.digit_format
        layout = fp8_fragment_layout if phase_a == "fp8" else fragment_layout
        self._frags = [
            cupy.asarray(layout(s.real_embedding(), fmt.matrix_digits)) for s in plan.stages
        ]
        radices = list(plan.radices) + [1] * (3 - len(plan.radices))
        self.macros = {
            "FX_N": str(plan.n),
            "FX_STAGES": str(len(plan.stages)),
            "FX_R1": str(radices[0]),
            "FX_R2": str(radices[1]),
            "FX_R3": str(radices[2]),
            "FX_DX": str(fmt.data_digits),
            "FX_DW": str(fmt.matrix_digits),
            "FX_T": str(fmt.data_bits),
            "FX_D": str(fmt.first_diagonal),
            "FX_TWIDDLE": "1" if twiddle is not None else "0",
            "FX_FP8": "1" if phase_a == "fp8" else "0",
        }
        self._twiddle = None
        if twiddle is not None:
            re, im = twiddle
            self._twiddle = cupy.asarray(np.stack([re, im], axis=-1))  # (n, 2) int64
        self._frag_args = tuple(self._frags + [self._frags[0]] * (3 - len(self._frags)))
        attributes = cupy.cuda.Device().attributes
        self._sms = attributes["MultiProcessorCount"]
        self._smem_per_sm = attributes["MaxSharedMemoryPerMultiprocessor"]
        self._smem_per_block = attributes["MaxSharedMemoryPerBlockOptin"]
        self._none = cupy.zeros(1, cupy.int32)  # the exponent arrays of a float64 pass
        self._no_flag = cupy.zeros(1, cupy.int32)  # the non-finite flag nobody reads
        # lines whose 8-line block would fill a multiprocessor alone are shared by a cluster
        # of two blocks (Hopper and later; untwiddled plans of >= 2 stages, even r1 and n/r1)
        r1 = radices[0]
        self._shareable = (
            twiddle is None
            and len(plan.stages) >= 2
            and r1 % 2 == 0
            and (plan.n // r1) % 2 == 0
            and compute_capability() >= (9, 0)
        )
        self.configure(2 if self._shareable and self._blocks_per_sm(1) == 1 else 1)

    def _lines_bytes(self, cluster: int) -> int:
        """Shared memory of a block's part of its 8 lines (int64 pairs, padded rows) when
        ``cluster`` blocks share each line."""
        return _LINES * (2 * self.plan.n // cluster + 2) * 8

    def _blocks_per_sm(self, cluster: int) -> int:
        """Blocks per multiprocessor the shared memory allows (at most 3)."""
        return max(1, min(3, self._smem_per_sm // (self._lines_bytes(cluster) + _STATIC_SMEM)))

    def configure(self, cluster: int) -> None:
        """Run each line on ``cluster`` blocks (1, or 2: a thread block cluster sharing the
        lines' halves through distributed shared memory; kernels/fft/fixed_pass.cu). The
        integers are the same either way."""
        if cluster not in (1, 2) or (cluster == 2 and not self._shareable):
            raise ValueError(f"this pass of length {self.plan.n} cannot run on {cluster} blocks")
        self.cluster = cluster
        self._smem = self._lines_bytes(cluster)
        check_shared_memory(self.plan.n, self._shared_bytes(True), self._smem_per_block)
        # blocks per SM the registers should allow: as many as the shared memory does (<= 3);
        # where one block fills the shared memory it gets twice the warps instead
        blocks = self._blocks_per_sm(cluster)
        self._warps = 2 * _WARPS if blocks == 1 else _WARPS
        if self.phase_a == "fp8":
            # on sm_90, mma.sync e4m3 runs as e4m3 -> f16 unpacks and HMMAs, whose operands
            # need about twice the INT8 path's registers: one 8-warp block per SM (255)
            blocks, self._warps = 1, _WARPS
        self.macros["FX_MIN_BLOCKS"] = str(blocks)
        self.macros["FX_WARPS"] = str(self._warps)
        self.macros["FX_CLUSTER"] = str(cluster)
        self._kernels: dict[tuple[bool, bool, bool, bool], Any] = {}
        self._launchers: dict[tuple[bool, bool, bool, bool], Any] = {}  # (launch.py)

    def _shared_bytes(self, carry_in: bool) -> int:
        # a carried pass keeps each element's source exponent beside it (int16)
        return self._smem + (_LINES * (self.plan.n // self.cluster + 8) * 2 if carry_in else 0)

    def kernel_macros(
        self,
        carry_in: bool = False,
        carry_out: bool = False,
        real_in: bool = False,
        wide: bool = False,
    ) -> dict[str, str]:
        """The macros of the pass kernel (carried fixed point in and/or out, real input;
        ``wide``: twice the warps per block, one block per multiprocessor)."""
        macros = dict(
            self.macros,
            FX_CARRY_IN=str(int(carry_in)),
            FX_CARRY_OUT=str(int(carry_out)),
            FX_REAL_IN=str(int(real_in)),
        )
        if wide:
            macros.update(FX_WARPS=str(2 * self._warps), FX_MIN_BLOCKS="1")
        # loads in flight per thread: the load sweep is latency-bound; a block alone on its
        # multiprocessor (128 registers per thread) takes its whole 8 x 1024 lines in one
        # round of 16, two or three blocks (128 or 85 registers) take 8 without spilling
        # (docs/perf-notes.md, round 5)
        alone = macros["FX_MIN_BLOCKS"] == "1"
        macros.update(FX_LOAD_BATCH="16" if alone else "8")
        return macros

    def _wide(self, blocks: int) -> bool:
        """Whether a pass of ``blocks`` blocks runs the wide kernel (8-warp blocks, at
        most one per multiprocessor; not the FP8 kernel, whose registers allow 8 warps)."""
        return (
            self._warps == _WARPS and blocks * self.cluster <= self._sms and self.phase_a != "fp8"
        )

    def kernel(
        self,
        carry_in: bool = False,
        carry_out: bool = False,
        real_in: bool = False,
        wide: bool = False,
    ):
        """The compiled pass kernel (cached per variant)."""
        key = (carry_in, carry_out, real_in, wide)
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = get_function(
                _SOURCE, _KERNEL, self.kernel_macros(carry_in, carry_out, real_in, wide)
            )
            smem = self._shared_bytes(carry_in)
            if smem > 48 * 1024:
                kernel.max_dynamic_shared_size_bytes = smem
            self._kernels[key] = kernel
            self._launchers[key] = launcher(kernel, _PASS_SIGNATURE)
        return kernel

    def _launch(
        self,
        x,
        out,
        inner: int,
        lines: int,
        rows: int = 1,
        carry=None,
        exps_out=None,
        out_inner: int | None = None,
        out_n: int | None = None,
        real_in: bool = False,
        nonfinite: Any = None,
        conj_in: bool = False,
    ) -> None:
        """One pass over ``lines`` lines; ``carry`` = (exponents, mode, n', lo, q) of a
        carried input (kernels/fft/fixed_pass.cu, FX_CARRY_IN), ``exps_out`` the exponent
        array of a carried output, ``out_inner`` the output's ``inner`` (a transposed
        output: the kernel's line_obase), ``out_n`` the outputs kept per line (a cropped
        real-input transform), ``real_in`` float64 reals for input, ``nonfinite`` the int32
        flag a float64 input pass sets where a line holds NaN or Inf, ``conj_in``: the pass
        reads ``conj(x)`` (float64 input)."""
        frags = self._frag_args
        twiddle = self._twiddle if self._twiddle is not None else frags[0]
        exps_in, mode, p_n, p_lo, p_q = carry if carry is not None else (self._none, 0, 1, 1, 1)
        blocks = -(-lines // _LINES)
        wide = self._wide(blocks)
        key = (carry is not None, exps_out is not None, real_in, wide)
        launch = self._launchers.get(key)
        if launch is None:
            self.kernel(*key)
            launch = self._launchers[key]
        launch(
            (blocks * self.cluster,),
            (32 * self._warps * (2 if wide else 1),),
            (
                x,
                out,
                inner,
                lines,
                *frags,
                twiddle,
                max(rows, 1),
                exps_in,
                mode,
                p_n,
                p_lo,
                p_q,
                exps_out if exps_out is not None else self._none,
                inner if out_inner is None else out_inner,
                self.plan.n if out_n is None else out_n,
                self._no_flag if nonfinite is None else nonfinite,
                int(conj_in),
            ),
            self._shared_bytes(carry is not None),
        )

    checks_input = True  #: float64 passes test what they read (``nonfinite``)
    conjugates_input = True  #: ``conj_in``: the pass reads conj(x) as it loads it

    def forward(
        self,
        x: Any,
        axis: int,
        *,
        overwrite: bool = False,
        rows: int = 1,
        transposed: bool = False,
        nonfinite: Any = None,
        conj_in: bool = False,
    ) -> Any:
        """The transform along ``axis``; ``rows`` = ``n_a`` of a twiddled second pass, whose
        output with ``transposed`` is the ``(..., n, n_a, inner)`` transpose of its ``(...,
        n_a, n, inner)`` input (axes ``axis - 1`` and ``axis`` swapped: the four-step's
        natural order, written by the pass itself). With ``overwrite`` and a C-contiguous
        complex128 ``x`` the pass runs in place (each block reads its lines whole into
        shared memory before it writes them)."""
        cp = self._cp
        n = self.plan.n
        if x.ndim == 0 or x.shape[axis] != n:
            raise ValueError(f"axis {axis} of shape {x.shape} is not of length {n}")
        axis %= x.ndim
        if self._twiddle is None and x.flags.f_contiguous and not x.flags.c_contiguous:
            return self.forward(
                x.T, x.ndim - 1 - axis, overwrite=overwrite, nonfinite=nonfinite, conj_in=conj_in
            ).T
        in_place = overwrite and x.flags.c_contiguous and x.dtype == cp.complex128
        x = cp.ascontiguousarray(x, dtype=cp.complex128)
        outer, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1 :])
        lines = outer * inner
        if transposed:
            if axis < 1 or x.shape[axis - 1] != rows:
                raise ValueError("a transposed pass runs along the axis after one of length rows")
            out_shape = (*x.shape[: axis - 1], n, rows, *x.shape[axis + 1 :])
            out = _empty(cp, out_shape, "an FFT pass output")
        else:
            out = x if in_place else _empty_like(x, "an FFT pass output")
        if lines == 0:
            return out
        self._launch(
            x,
            out,
            inner,
            lines,
            rows,
            out_inner=rows * inner if transposed else None,
            nonfinite=nonfinite,
            conj_in=conj_in,
        )
        return out

    def forward_carried(
        self,
        x: Any,
        axis: int,
        *,
        overwrite: bool = False,
        carry: Carried | None = None,
        keep: bool = False,
        nonfinite: Any = None,
        conj_in: bool = False,
    ) -> Any:
        """The transform along ``axis`` (>= 0) of complex ``x``, or of the carried fixed
        point ``carry`` of the previous pass, rounded to float64 at the exit — or kept in
        fixed point (:class:`~ozfft.ozaki.fixed_point.Carried`) with ``keep``; ``conj_in``:
        of ``conj(x)``. The same integers as
        ``ozfft.fourier.fixed.FixedPointExecutor.forward_carried`` (of ``conj(x)``)."""
        cp = self._cp
        n = self.plan.n
        if self._twiddle is not None:
            raise ValueError("a twiddled four-step pass carries no fixed point")
        if conj_in and carry is not None:
            raise ValueError("conj_in applies to complex input, not to a carried one")
        # the parts stay in a complex128-typed buffer whose bytes are the int64 pairs; the
        # exponents are indexed by the line's C-order number
        if carry is None:
            src = cp.ascontiguousarray(x, dtype=cp.complex128)
            in_place = overwrite or src is not x  # a copy made here is ours
        else:
            src = carry.parts
            in_place = overwrite
        shape = src.shape
        if shape[axis] != n:
            raise ValueError(f"axis {axis} of shape {shape} is not of length {n}")
        outer = math.prod(shape[:axis])
        inner = math.prod(shape[axis + 1 :])
        lines = outer * inner
        out = src if in_place else _empty_like(src, "an FFT pass output")
        params = None
        if carry is not None:
            prev = carry.axis
            p_n = shape[prev]
            if prev > axis:
                p_lo = math.prod(shape[prev + 1 :])
                params = (carry.exponents, 1, p_n, p_lo, inner // p_n)
            else:
                p_lo = math.prod(shape[prev + 1 : axis])
                params = (carry.exponents, 2, p_n, p_lo, inner)
        return self._run(
            src, out, axis, inner, lines, keep, carry=params, nonfinite=nonfinite, conj_in=conj_in
        )

    def forward_real(self, x: Any, axis: int, *, keep: bool = False, nonfinite: Any = None) -> Any:
        """The first ``n // 2 + 1`` outputs along ``axis`` (>= 0) of the transform of real
        ``x`` (read as float64 reals, written cropped by the pass itself): complex128, or
        :class:`~ozfft.ozaki.fixed_point.Carried` with ``keep`` — the integers of the
        complex transform of ``x + 0j``, cropped."""
        cp = self._cp
        n = self.plan.n
        if self._twiddle is not None:
            raise ValueError("a twiddled four-step pass takes no real input")
        src = cp.ascontiguousarray(x, dtype=cp.float64)
        shape = src.shape
        if shape[axis] != n:
            raise ValueError(f"axis {axis} of shape {shape} is not of length {n}")
        half = n // 2 + 1
        out_shape = (*shape[:axis], half, *shape[axis + 1 :])
        inner = math.prod(shape[axis + 1 :])
        lines = math.prod(shape[:axis]) * inner
        out = _empty(cp, out_shape, "a real-input FFT pass output")
        return self._run(
            src, out, axis, inner, lines, keep, out_n=half, real_in=True, nonfinite=nonfinite
        )

    def _run(
        self, src: Any, out: Any, axis: int, inner: int, lines: int, keep: bool, **launch: Any
    ) -> Any:
        """One pass of ``lines`` lines from ``src`` into ``out``; with ``keep`` the result
        stays carried fixed point (the exponent of each line beside the parts)."""
        exps_out = self._cp.empty(lines, self._cp.int32) if keep else None
        if lines:
            self._launch(src, out, inner, lines, exps_out=exps_out, **launch)
        return Carried(out, exps_out, axis, out.shape) if keep else out


class FourStepExecutor:
    """A multi-pass fixed-point plan (``plan.four_step``) along any axis, without copies:
    the axis (of an ``(outer, n, inner)`` array) viewed as ``(n_a, n_b)``, the columns by
    the inner executor along the strided ``n_a`` axis of ``(outer, n_a, n_b inner)`` (one
    pass, or again four-step), then one twiddled fused pass along ``n_b`` that writes its
    result transposed, in natural order (``k = k_a + n_a k_b``)."""

    def __init__(self, plan: Any, phase_a: str = "int8") -> None:
        import cupy

        fs = plan.four_step
        self.plan = plan
        self.phase_a = phase_a
        self._cp = cupy
        self._inner_a = prepare_fixed(fs.inner_a, phase_a)
        self._pass_b = FixedPassExecutor(
            fs.inner_b, twiddle=(fs.twiddle_re, fs.twiddle_im), phase_a=phase_a
        )
        self._n_a, self._n_b = fs.n_a, fs.n_b

    checks_input = True  #: its first pass tests what it reads (``nonfinite``)
    conjugates_input = True  #: ``conj_in``: its first pass reads conj(x)

    def forward(
        self,
        x: Any,
        axis: int,
        *,
        overwrite: bool = False,
        nonfinite: Any = None,
        conj_in: bool = False,
    ) -> Any:
        cp = self._cp
        axis %= x.ndim
        n_a, n_b = self._n_a, self._n_b
        src = cp.ascontiguousarray(x, dtype=cp.complex128)
        owned = overwrite or src is not x  # a copy made here may be overwritten
        shape = src.shape
        if shape[axis] != self.plan.n:
            raise ValueError(f"axis {axis} of shape {shape} is not of length {self.plan.n}")
        outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
        cols = src.reshape(outer, n_a, n_b * inner)
        a = self._inner_a.forward(cols, 1, overwrite=owned, nonfinite=nonfinite, conj_in=conj_in)
        # the row pass writes X(k_a, k_b) at k_b n_a + k_a: natural order, no transpose
        out = self._pass_b.forward(a.reshape(outer, n_a, n_b, inner), 2, rows=n_a, transposed=True)
        return out.reshape(shape)


def prepare_fixed(plan: Any, phase_a: str = "int8") -> Any:
    """The CUDA executor of a fixed-point plan (one pass or four-step), its stage
    products on INT8 or FP8 (e4m3) tensor cores: the same integers either way."""
    if plan.four_step is not None:
        return FourStepExecutor(plan, phase_a)
    return FixedPassExecutor(plan, phase_a=phase_a)


def _empty(cupy: Any, shape: tuple[int, ...], what: str) -> Any:
    try:
        return cupy.empty(shape, cupy.complex128)
    except cupy.cuda.memory.OutOfMemoryError as exc:
        nbytes = 16 * math.prod(shape)
        raise DeviceMemoryError(what, nbytes, free_device_bytes(cupy)) from exc


def _empty_like(x: Any, what: str) -> Any:
    import cupy

    try:
        return cupy.empty_like(x)
    except cupy.cuda.memory.OutOfMemoryError as exc:
        raise DeviceMemoryError(what, x.nbytes, free_device_bytes(cupy)) from exc
