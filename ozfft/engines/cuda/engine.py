"""The CUDA engine: the Ozaki-II stages as NVRTC kernels plus cuBLAS INT8 GEMMs.

Stage 1 and 2 are kernels over K-major rows (``A`` and ``Bt = B^T``); Phase A is one
cuBLAS ``gemmEx`` (INT8 x INT8 -> INT32, TN) per modulus and product; Phase B is a
kernel that reads the INT32 planes of a block of output columns, reconstructs each
entry exactly and writes the rounded result. Results equal the NumPy engine's bits.
Kernel sources: ``kernels/gemm/`` (see ``kernels/README.md``).

Given an FP8 residue system (:func:`~ozfft.ozaki.residue_system.fp8_system`, compute
capability 8.9 or later), stage 2 writes e4m3 digit planes (``gemm/fp8_residues.cu``) and
Phase A is the engine's own FP8 tensor-core kernel (``gemm/fp8_phase_a.cu``: digit
products accumulated in FP32 over exact k-blocks, the product's residue mod ``m = s**d``
written as the INT32 planes Phase B reads); Phase B is the same kernel with the system's
constants.

Each stage reports to :mod:`ozfft.profiling` as phase ``scaling``, ``residues``,
``phase_a`` or ``phase_b``, timed with CUDA events on cupy's current stream.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ... import config
from ..._bounded import put_bounded
from ..._logging import logger
from ...errors import DeviceMemoryError, NonFiniteInputError
from ...ozaki.bounds import INDEX_HASH_MIX, INDEX_HASH_MULT
from ...ozaki.residue_system import ResidueSystem, int8_system
from ...ozaki.scaling import ceil_log2_int
from ...profiling import phase
from ..base import (
    Engine,
    PendingProbe,
    ProbeRules,
    ResidueStack,
    RowStats,
    TiledProbe,
    check_fp8_tensor_cores,
    complex_products,
    compute_capability,
)
from .compiler import cubin_path, get_function
from .constants import (
    FP8_TILE_M,
    FP8_TILE_N,
    NO_MACROS,
    SMALL_COMPLEX_SLICE_COLUMNS,
    SMALL_COMPLEX_SLICE_THREADS,
    SMALL_COMPLEX_TILES_PER_BLOCK,
    SMALL_PRODUCT_K,
    SMALL_PRODUCT_STATIC_SHARED,
    SMALL_PRODUCT_THREADS,
    SMALL_PRODUCT_TILE,
    SMALL_SLICE_BYTES,
    SMALL_SLICE_THREADS,
    STATS_CACHED,
    Macros,
    fp8_macros,
    fp8_pad_k,
    fp8_phase_b_macros,
    moduli_macros,
    phase_b_macros,
    raw_sums_fit,
    rounding_macros,
    scaling_macros,
    small_complex_slice_shared,
    small_product_chunk,
    small_product_macros,
    small_product_slices,
)
from .cutlass_phase_a import (
    MODP_IGEMM_ALIGN,
    MODP_IGEMM_MAX_K,
    MODP_IGEMM_MODULI,
    ModpIgemm,
    epilogue_table,
    modp_igemm,
)
from .flags import FlaggedCounts, MappedFlags
from .launch import launcher
from .workspace import K_BLOCK, GemmWorkspace, free_device_bytes, pad_k, plan_workspace

__all__ = [
    "CUBLAS_GEMM_DEFAULT",
    "CUDA_R_8I",
    "CUDA_R_32I",
    "CudaEngine",
    "CudaEventClock",
]

#: ``cudaDataType_t`` values of CUDA's ``library_types.h`` (cupy's runtime module names
#: CUDA_R_8I but not CUDA_R_32I, so both are spelled out here)
CUDA_R_8I = 3
CUDA_R_32I = 10
#: ``cublasGemmAlgo_t`` of ``cublas_api.h``: let cuBLAS choose the algorithm
CUBLAS_GEMM_DEFAULT = -1

#: ``cudaMemcpyKind`` device to host
_D2H = 2

#: kernel sources, relative to the kernels folder
_SCALING_CU = "gemm/scaling.cu"
_GUARANTEE_CU = "gemm/guarantee.cu"
#: rows per block of ``oz_scaled_minima`` (``OZ_MIN_ROWS``), and the inner-index hash's
#: constants (``oz_column_hash``)
_MIN_ROWS = 64
_GUARANTEE_MACROS = Macros(
    {
        "OZ_MIN_ROWS": str(_MIN_ROWS),
        "OZ_HASH_MULT": f"{INDEX_HASH_MULT:#x}ULL",
        "OZ_HASH_MIX": f"{INDEX_HASH_MIX:#x}ULL",
    }
)
_RESIDUES_CU = "gemm/residues.cu"
_PHASE_B_CU = "gemm/phase_b.cu"
_SMALL_PRODUCT_CU = "gemm/small_product.cu"
#: adjacent outputs a thread of Phase B on byte planes (``OZ_PB_VEC``: one 4- or 2-byte
#: load a plane for all of them): four real, two complex (four complex outputs a thread ran
#: slower than two: twice the registers, half the warps; docs/perf-notes.md, "Phase B on
#: byte planes, several outputs a thread")
_PB_VEC_REAL = 4
_PB_VEC_COMPLEX = 2
#: real Phase B on byte planes weights four moduli a ``dp4a`` (``OZ_PB_DP4A``; with
#: ``OZ_PB_VEC`` 4): docs/perf-notes.md, "Phase B's real weighting on dp4a"
_PB_DP4A = True
#: complex Phase B on the byte planes of a Gaussian system does too, four outputs a thread,
#: each modulus' ``t1 +- t2`` reduced into bytes first: docs/perf-notes.md, "Complex Phase
#: B on dp4a"
_PB_DP4A_COMPLEX = True
#: the small-product kernel's argument kinds (launch.py)
_SP_SIGNATURE = ("ptr", "ptr", "i64", "i64", "i64", "ptr", "ptr", "ptr", "i32", "ptr", "i64", "i32")
#: the most outputs (times residue planes) a call runs fused: each block recomputes the
#: residues of its 64 A and 64 Bt rows, ~2 k N residues per output, so past ~2**25 outputs
#: the staged path, which forms each residue once, is faster (H200, docs/perf-notes.md,
#: "Small products in one kernel": 4096^2 x 64 fused 1.3x faster, 16384^2 x 64 real and
#: 8192^2 x 64 complex 1.2x and 1.4x slower)
_SP_MAX_OUTPUTS = 1 << 25
#: the small-product kernels' counts: NaN, Inf of A and of Bt, then a flag's address
#: (``OZ_SP_FLAG_SLOT``: 0 for none)
_SP_COUNTS = 5
#: per-signature launch plans of the small products an engine keeps (the oldest goes first)
_SMALL_PLANS_KEPT = 256
#: (a missing plan: None is a kept "does not apply")
_NO_PLAN = object()


@dataclass(frozen=True, slots=True)
class _SmallLaunch:
    """How the small-product kernel runs one signature (device, operand layouts, moduli,
    output dtype, rounding, where the shifts come from, budget, switches): everything
    :meth:`CudaEngine._small_product` decides from shapes and layouts, so that a call only
    allocates, launches and reads.

    ``grid``: (column tiles, row tiles) per launch; ``chunks``: (first item, items) of each
    launch (65535 blocks of ``pack`` items in grid z); ``prepare_bt``: ``bt`` is copied to
    C-contiguous rows first (else it is C-contiguous, or B read in place: ``b_in_place``);
    ``result_shape``: the shape returned where the operands are not 3-D."""

    launch: Any
    smem: int
    threads: int
    grid: tuple[int, int]
    chunks: tuple[tuple[int, int], ...]
    pack: int
    span_shift: int
    prepare_bt: bool
    b_in_place: bool
    batch: int
    m: int
    n: int
    k: int
    budget: int
    in_kernel: bool
    out_dtype: np.dtype
    result_shape: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class _ProbeLaunch:
    """How the plan probe (:meth:`CudaEngine.tiled_plan_probe`) runs one signature: its three
    kernels' launchers and grids (or, for items of at most 64 rows and columns with their
    statistics formed in the kernel, ``items_kernel``: the whole probe in one launch, a
    block per item; the other three None), the state's size in 8-byte words (``words``,
    then ``bt_bytes`` of Bt's rows where B is read in place and ``keeps_bt``), the rows
    kernel's staged bytes and the rules' integers, decided from shapes and layouts alone."""

    rows_kernel: Any
    pairs_kernel: Any
    deficits_kernel: Any
    items_kernel: Any
    batch_shape: tuple[int, ...]
    batch: int
    m: int
    n: int
    k: int
    size: int
    width: int
    tiles: int
    words: int
    bt_bytes: int
    stage: int
    b_in_place: bool
    keeps_bt: bool
    given: bool
    rules: tuple[int, ...]
    row_blocks: int
    pair_grid: tuple[int, int]
    deficit_blocks: int
    never: int


_PLAN_PROBE_CU = "gemm/plan_probe.cu"
#: rows per block of ``oz_probe_rows_*`` and of each operand per block of
#: ``oz_probe_pairs_*`` (``OZ_PROBE_ROWS``), the rows kernels' threads, the pairs kernels'
#: (``OZ_PROBE_PAIR_THREADS``: 2 x 2 of the block's 16 x 16 pairs of tiles of
#: ``OZ_PROBE_TILE`` rows a thread), the only tile they take, and the kernels' argument
#: kinds (launch.py)
_PROBE_ROWS = 64
_PROBE_THREADS = 256
_PROBE_PAIR_THREADS = 64
_PROBE_TILE = 4
#: items of at most this many rows and columns (with their statistics formed in the kernel),
#: as many as one wave of its blocks holds (:meth:`CudaEngine._probe_items_per_sm`: three an
#: SM on an H200, its launch bounds), run the whole probe in one launch
#: (``oz_probe_items_*``), a block per item: the call saves two launches and the side
#: stream's fork, where the three launches of a larger stack let its product start after
#: the rows (docs/perf-notes.md, "The whole probe in one launch")
_PROBE_ITEMS_MAX = _PROBE_ROWS
#: (the inner indices, the given statistics and the shifts' table passed as addresses: 0
#: where absent)
_PROBE_ROWS_KINDS = ("ptr", "ptr") + ("i64",) * 11 + ("i32",) * 5 + ("ptr",) * 4 + ("i64",) * 2
#: the most inner indices of the lower-bound products (``OZ_PROBE_SUBSET``)
_PROBE_SUBSET = 128
#: the items kernels' dynamic shared memory holds the tile minima of both operands once the
#: rows are done (``OZ_PROBE_MINIMA_BYTES``: a block's tiles of each operand, rows of
#: ``OZ_PROBE_STRIDE`` 4-byte words), B's staged columns before
_PROBE_MINIMA_BYTES = 2 * (_PROBE_ROWS // _PROBE_TILE) * (2 * _PROBE_SUBSET + 2) * 4


def _probe_stage_bytes(k: int, planes: int) -> int:
    """Dynamic shared bytes of a rows kernel that reads B in place: its columns of B staged
    as ``_PROBE_ROWS`` rows of Bt of k + 1 entries (``oz_probe_stage``)."""
    return _PROBE_ROWS * (k + 1) * 8 * planes


#: the most of them (k = 64, complex), the rows kernels' attribute
_PROBE_STAGE_MAX = _probe_stage_bytes(SMALL_PRODUCT_K, 2)


def _probe_items_shared(planes: int) -> int:
    """The most dynamic shared bytes an items kernel of ``planes`` takes: B's staged columns
    at the longest k, or the minima."""
    return max(_probe_stage_bytes(SMALL_PRODUCT_K, planes), _PROBE_MINIMA_BYTES)


_PROBE_SIGNATURES = {
    "oz_probe_rows_real": _PROBE_ROWS_KINDS,
    "oz_probe_rows_complex": _PROBE_ROWS_KINDS,
    "oz_probe_rows_in_place_real": _PROBE_ROWS_KINDS,
    "oz_probe_rows_in_place_complex": _PROBE_ROWS_KINDS,
    "oz_probe_rows_given_real": _PROBE_ROWS_KINDS,
    "oz_probe_rows_given_complex": _PROBE_ROWS_KINDS,
    "oz_probe_items_real": _PROBE_ROWS_KINDS,
    "oz_probe_items_complex": _PROBE_ROWS_KINDS,
    "oz_probe_items_in_place_real": _PROBE_ROWS_KINDS,
    "oz_probe_items_in_place_complex": _PROBE_ROWS_KINDS,
    "oz_probe_pairs_real": ("i64",) * 4 + ("i32", "ptr", "ptr", "ptr"),
    "oz_probe_pairs_complex": ("i64",) * 4 + ("i32", "ptr", "ptr", "ptr"),
    "oz_probe_deficits": ("ptr", "ptr", "i64", "i64", "i64", "i32"),
}
#: int64 results at the head of the probe's state (``OZ_PROBE_OUT``)
_PROBE_OUT = 10
#: the head's maxima are kept with their sign bit flipped (``OZ_PROBE_MAX_BIAS``): XOR with
#: this int64 restores them
_PROBE_MAX_BIAS = -(1 << 63)
_FP8_RESIDUES_CU = "gemm/fp8_residues.cu"
_FP8_PHASE_A_CU = "gemm/fp8_phase_a.cu"
#: threads of the FP8 Phase-A kernel (8 warps) and the grid-z limit its launches split at
_FP8_THREADS = 256
_GRID_Z = 65535
#: most products one strided-batched INT8 GEMM call takes (a stack's moduli x products x
#: items are cut into calls of at most this many)
_GEMM_BATCH = 65535

_THREADS = 256
_FINISH_SOURCE = "fft/finish.cu"
_STATS_THREADS = 1024
#: cuBLAS ``geam`` (out-of-place transpose) per dtype, with its host scalars 1 and 0
_GEAM = {
    np.dtype(np.float64): ("dgeam", np.array(1.0), np.array(0.0)),
    np.dtype(np.complex128): ("zgeam", np.array(1.0 + 0j), np.array(0j)),
}
#: (A plane, Bt plane) of each INT32 product; planes: 0 real, 1 imaginary, 2 sum (Karatsuba,
#: four-product); on a Gaussian system 0 rmod(re + j im), 1 rmod(re - j im)
_PRODUCT_PLANES = {
    1: ((0, 0),),
    2: ((0, 0), (1, 1)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (1, 1), (0, 1), (1, 0)),
}


_CONVERT_CU = "gemm/convert.cu"
#: (from, to) dtypes converted by ``gemm/convert.cu`` (complex as pairs of reals)
_CONVERT = {
    (np.dtype(np.float32), np.dtype(np.float64)): "oz_widen_f32",
    (np.dtype(np.complex64), np.dtype(np.complex128)): "oz_widen_f32",
    (np.dtype(np.float64), np.dtype(np.float32)): "oz_narrow_f64",
    (np.dtype(np.complex128), np.dtype(np.complex64)): "oz_narrow_f64",
}


def _grid(total: int) -> tuple[int]:
    return (max(1, min(-(-total // _THREADS), 1 << 20)),)


def _grid_rows(width: int, rows: int) -> tuple[int, int]:
    """2-D grid: x over ``width`` (threads), y over rows (at most 65535, grid-stride)."""
    return (max(1, min(-(-width // _THREADS), 1 << 16)), max(1, min(rows, 65535)))


class CudaEventClock:
    """:class:`ozfft.profiling.Clock` of CUDA events recorded on cupy's current stream."""

    def __init__(self, cupy: Any) -> None:
        self._cp = cupy

    def mark(self) -> Any:
        event = self._cp.cuda.Event()
        event.record(self._cp.cuda.get_current_stream())
        return event

    def elapsed_ms(self, start: Any, stop: Any) -> float:
        """Milliseconds between two marks; waits for ``stop`` to complete."""
        stop.synchronize()
        return float(self._cp.cuda.get_elapsed_time(start, stop))


class CudaEngine(Engine):
    """Ozaki-II stages on cupy arrays, INT8 tensor cores through cuBLAS."""

    name = "cuda"
    has_plan_probe = True
    stacked_split_search = True

    def __init__(self) -> None:
        import cupy
        from cupy_backends.cuda.libs import cublas

        self._cp = cupy
        self._clock = CudaEventClock(cupy)
        self._cublas = cublas
        self._sm_counts: dict[int, int] = {}  # per device id
        self._probe_items_fit: dict[tuple, int] = {}
        self._flags: dict[int, MappedFlags] = {}  # per device id
        self._rule_args: dict[tuple, Any] = {}  # (device id, arguments) -> int64 array
        #: (device id, the kernel's arguments) -> (launcher, dynamic shared bytes, threads,
        #: output columns per block), or None where the sums do not fit a block
        self._small: dict[tuple, tuple[Any, int, int, int] | None] = {}
        #: the small products' signatures -> _SmallLaunch, or None where the kernel does
        #: not apply (:meth:`_small_product`)
        self._small_plans: dict[tuple, _SmallLaunch | None] = {}
        self._int8_mma: dict[int, bool] = {}  # device id -> mma.sync on INT8 (sm_80 on)
        self._sp_shared: dict[tuple[int, int], int] = {}  # (device id, planes) -> bytes
        #: (device id, source, kernel name) -> launcher (kernels built with fixed macros)
        self._named: dict[tuple[int, str, str], Any] = {}
        #: (device id, moduli) -> the CUTLASS epilogue's constants table on the device
        self._epilogue_tables: dict[tuple[int, tuple[int, ...]], Any] = {}
        self._one = np.array(1, dtype=np.int32)
        self._zero = np.array(0, dtype=np.int32)

    @property
    def xp(self) -> Any:
        return self._cp

    def clock(self) -> CudaEventClock:
        """CUDA events on cupy's current stream."""
        return self._clock

    def device_key(self) -> tuple:
        """The engine and cupy's current device (prepared FFT executors hold its arrays)."""
        return (self.name, self._cp.cuda.Device().id)

    # -- compiled kernels for tools (bench probes, SASS cross-checks) ---------------------
    def kernel(self, source: str, name: str, macros: Mapping[str, str] | None = None) -> Any:
        """Kernel ``name`` of ``kernels/<source>`` compiled for the current device."""
        return get_function(source, name, macros or {})

    def kernel_cubin(self, source: str, macros: Mapping[str, str] | None = None) -> Path:
        """Path of the cached cubin of ``kernels/<source>`` (compiled if needed)."""
        return cubin_path(source, macros or {})

    def gemm_kernel_macros(self, num_moduli: int, *, with_limbs: bool) -> Mapping[str, str]:
        """The macros this engine specializes its GEMM kernels with for ``num_moduli``."""
        return moduli_macros(int8_system(num_moduli), with_limbs=with_limbs)

    def new_input_flag(self) -> Any:
        """A slot of the device's ring of mapped pinned flags (:mod:`.flags`): no memset
        and no device-to-host copy per call."""
        device = self._cp.cuda.Device().id
        flags = self._flags.get(device)
        if flags is None:
            flags = self._flags[device] = MappedFlags(self._cp)
        return flags.take()

    def conj_divide(self, y: Any, conj: bool, divisors: Sequence[float]) -> None:
        """One sweep (``kernels/fft/finish.cu``, up to four divisors per launch) instead
        of one cupy kernel per operation; the same IEEE operations in the same order."""
        cp = self._cp
        if not (conj or divisors):
            return
        dense = y.flags.c_contiguous or y.flags.f_contiguous
        if y.dtype != cp.complex128 or not dense:
            super().conj_divide(y, conj, divisors)
            return
        if y.size == 0:
            return
        kernel = get_function(_FINISH_SOURCE, "oz_fft_conj_divide", {})
        rest = [float(d) for d in divisors]
        first = True
        while first or rest:
            chunk, rest = rest[:4], rest[4:]
            pad = chunk + [1.0] * (4 - len(chunk))
            kernel(
                _grid(y.size),
                (_THREADS,),
                (
                    y,
                    np.int64(y.size),
                    np.int32(conj and first),
                    np.int32(len(chunk)),
                    *map(np.float64, pad),
                ),
            )
            first = False

    def prepare_fft(self, plan: Any, phase_a: str = "int8") -> Any | None:
        """Fixed-point plans run as one fused kernel per axis pass, multi-pass (four-step)
        plans as a chain of them (``engines/cuda/fft.py``), their stage products on INT8 or
        FP8 (e4m3) tensor cores; Ozaki-II stage plans and Bluestein on the generic
        executor."""
        if plan.scheme == "fixed" and plan.bluestein is None:
            from .fft import prepare_fixed

            return prepare_fixed(plan, phase_a)
        return None

    def astype(self, x: Any, dtype: Any) -> Any:
        """As :meth:`Engine.astype`; binary32 to binary64 and back (complex64 and
        complex128 alike) through ``gemm/convert.cu``: cupy's own conversion is built with
        ``-ftz=true`` and flushes binary32 subnormals to zero."""
        cp = self._cp
        dtype = np.dtype(dtype)
        name = _CONVERT.get((x.dtype, dtype))
        if name is None:
            return x.astype(dtype, copy=False)
        src = cp.ascontiguousarray(x)
        out = self._alloc("a converted array", x.shape, dtype, x.size * dtype.itemsize)
        reals = src.size * (2 if dtype.kind == "c" else 1)
        if reals:
            convert = self._named_kernel(_CONVERT_CU, name, NO_MACROS, ("ptr", "ptr", "i64"))
            convert(_grid(reals), (_THREADS,), (src, out, reals))
        return out

    def _named_kernel(
        self,
        source: str,
        name: str,
        macros: Macros,
        signature: Sequence[str],
        shared: int = 0,
    ) -> Any:
        """The launcher of kernel ``name`` of ``source`` built with ``macros`` (fixed for
        the name), once per device; ``shared``: the most dynamic shared bytes it is
        launched with (allowed past the 48 KB default; fixed for the name as well)."""
        key = (self._cp.cuda.runtime.getDevice(), source, name)
        if key not in self._named:
            kernel = get_function(source, name, macros)
            if shared:
                kernel.max_dynamic_shared_size_bytes = shared
            self._named[key] = launcher(kernel, signature)
        return self._named[key]

    def prepare_operand(self, x: Any) -> Any:
        """C-contiguous rows over k (``Bt`` is transposed once here, not per stage): the
        transposed view of a 2-D float64/complex128 matrix through cuBLAS ``geam`` (a
        bandwidth-bound transpose), anything else through cupy."""
        cp = self._cp
        if (
            x.ndim == 2
            and x.size
            and x.flags.f_contiguous
            and not x.flags.c_contiguous
            and x.dtype in _GEAM
        ):
            return self._transposed_copy(x)
        return x if x.flags.c_contiguous else cp.ascontiguousarray(x)

    def _transposed_copy(self, x: Any) -> Any:
        """The C-contiguous copy of an F-contiguous ``(r, c)`` matrix: in cuBLAS's column
        order ``out (c x r) = x^T`` with ``x`` an ``r x c`` matrix of leading dimension r."""
        cp, cublas = self._cp, self._cublas
        rows, cols = x.shape
        out = self._alloc("a transposed operand", x.shape, x.dtype, x.nbytes)
        handle = cp.cuda.device.get_cublas_handle()
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        geam, one, zero = _GEAM[x.dtype]
        ptr = x.data.ptr
        getattr(cublas, geam)(
            handle,
            cublas.CUBLAS_OP_T,
            cublas.CUBLAS_OP_T,
            cols,
            rows,
            one.ctypes.data,
            ptr,
            rows,
            zero.ctypes.data,
            ptr,
            rows,
            out.data.ptr,
            cols,
        )
        return out

    # -- helpers -------------------------------------------------------------------
    @property
    def _sm_count(self) -> int:
        """The current device's SM count (grids sized for it; devices may differ)."""
        device = self._cp.cuda.runtime.getDevice()
        count = self._sm_counts.get(device)
        if count is None:
            count = self._cp.cuda.Device(device).attributes["MultiProcessorCount"]
            self._sm_counts[device] = count
        return count

    def _as_rows(self, x: Any):
        """``x`` as a contiguous float64 array of rows: (rows, k * parts), parts, k."""
        cp = self._cp
        parts = 2 if cp.iscomplexobj(x) else 1
        x = cp.ascontiguousarray(x)
        k = x.shape[-1]
        rows = int(np.prod(x.shape[:-1]))
        flat = x.view(cp.float64).reshape(rows, k * parts)
        return flat, rows, k, parts

    def _alloc(self, what: str, shape, dtype, needed: int):
        try:
            return self._cp.empty(shape, dtype)
        except self._cp.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(what, needed, self._free_bytes()) from exc

    def _free_bytes(self) -> int:
        return free_device_bytes(self._cp)

    def _gemm_s8(
        self,
        m: int,
        n: int,
        k: int,
        a_ptr: int,
        lda: int,
        b_ptr: int,
        ldb: int,
        c_ptr: int,
        ldc: int,
        *,
        strides: tuple[int, int, int] | None = None,
        count: int = 1,
    ) -> None:
        """Column-major ``C (m x n) = A^T B`` with A (k x m), B (k x n) INT8, C INT32; with
        ``strides`` (of A, B, C in elements), ``count`` such products in one
        strided-batched cuBLAS call."""
        cublas = self._cublas
        handle = self._cp.cuda.device.get_cublas_handle()
        cublas.setStream(handle, self._cp.cuda.get_current_stream().ptr)
        sa, sb, sc = strides if strides is not None else (None, None, None)
        operands = [(a_ptr, lda, sa), (b_ptr, ldb, sb)]
        args = [handle, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, m, n, k, self._one.ctypes.data]
        for ptr, ld, stride in operands:
            args += [ptr, CUDA_R_8I, ld] + ([stride] if strides is not None else [])
        args += [self._zero.ctypes.data, c_ptr, CUDA_R_32I, ldc]
        if strides is None:
            cublas.gemmEx(*args, cublas.CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT)
        else:
            args += [sc, count]
            cublas.gemmStridedBatchedEx(*args, cublas.CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT)

    # -- stage 1 -------------------------------------------------------------------
    def row_stats(
        self, x: Any, operand: str, *, need_sumsq: bool, defer_check: bool = False
    ) -> RowStats:
        (stats,), _ = self._row_stats_of((x,), (operand,), need_sumsq, None, defer_check)
        return stats

    def fast_stats(
        self, a: Any, bt: Any, budget_bits: int, *, defer_check: bool = False
    ) -> tuple[RowStats, RowStats, Any, Any]:
        """One launch for both operands where their rows are equally wide (always, for
        prepared operands of one product): their statistics and, in the same pass, each
        row's fast-mode shift (``oz_row_stats*`` with a budget); one NaN/Inf read."""
        if a.shape[-1] != bt.shape[-1] or a.dtype != bt.dtype:
            return super().fast_stats(a, bt, budget_bits, defer_check=defer_check)
        (sa, sb), (shift_a, shift_b) = self._row_stats_of(
            (a, bt), ("a", "b"), True, int(budget_bits), defer_check
        )
        return sa, sb, shift_a, shift_b

    def _row_stats_of(
        self,
        xs: tuple[Any, ...],
        operands: tuple[str, ...],
        need_sumsq: bool,
        budget_bits: int | None,
        defer_check: bool,
    ) -> tuple[tuple[RowStats, ...], tuple[Any, ...]]:
        """The statistics of one or two operands of equally wide rows in one launch of
        ``gemm/scaling.cu`` (A's rows, then Bt's): one allocation (int32 exponents and
        shifts, int64 sums of squares, the NaN/Inf counts, which alone are zeroed), one
        read of the counts. With ``budget_bits`` (and ``need_sumsq``) the rows' fast-mode
        shifts for that budget too; else the second tuple is empty."""
        cp = self._cp
        shaped = [self._as_rows(x) for x in xs]
        counts_at = [0]
        for _, rows, _, _ in shaped:
            counts_at.append(counts_at[-1] + rows)
        total = counts_at[-1]
        _, _, k, parts = shaped[0]
        # 8-byte words: the sums of squares (total), the exponents and the shifts (int32,
        # total each), the counts (2 an operand)
        words = 2 * total + 2 * len(xs)
        with phase("scaling", self._clock):
            space = self._alloc("row statistics", (words,), cp.int64, 8 * words).data
            sumsq = cp.ndarray((total,), cp.int64, space)
            max_exp = cp.ndarray((total,), cp.int32, space + 8 * total)
            shift = cp.ndarray((total,), cp.int32, space + 12 * total)
            counts = cp.ndarray((2 * len(xs),), cp.uint64, space + 16 * total)
            stream = cp.cuda.get_current_stream().ptr
            cp.cuda.runtime.memsetAsync(counts.data.ptr, 0, counts.nbytes, stream)
            with_shift = budget_bits is not None and need_sumsq
            if total:
                name, threads, blocks = _stats_launch(total, k * parts, self._sm_count)
                kernel = get_function(_SCALING_CU, name, scaling_macros())
                first, last = shaped[0][0], shaped[-1][0]
                kernel(
                    (blocks,),
                    (threads,),
                    (first, last, np.int64(total), np.int64(shaped[0][1]),
                     np.int64(k * parts), np.int32(need_sumsq),
                     np.int64(budget_bits if with_shift else 0), max_exp, sumsq,
                     shift if with_shift else 0, counts),
                )  # fmt: skip
            check = _counts_check(cp, counts, *operands)
        if not defer_check:
            check()
        stats, shifts = [], []
        for x, lo in zip(xs, counts_at, strict=False):  # arrays on the memory, no slicing
            shape = x.shape[:-1]
            stats.append(RowStats(
                cp.ndarray(shape, cp.int32, max_exp.data + 4 * lo),  # the kernels' type
                cp.ndarray(shape, cp.int64, sumsq.data + 8 * lo) if need_sumsq else None,
                pending_check=check if defer_check else None,
            ))  # fmt: skip
            if with_shift:
                shifts.append(cp.ndarray(shape, cp.int32, shift.data + 4 * lo))
        return tuple(stats), tuple(shifts)

    def fast_shift(self, max_exp: Any, sumsq: Any, budget_bits: int | tuple[int, ...]) -> Any:
        """One ``oz_row_rule`` launch (``gemm/scaling.cu``) for all budgets."""
        budgets = budget_bits if isinstance(budget_bits, tuple) else (int(budget_bits),)
        out = self._row_rule(max_exp, sumsq, budgets, 0)
        return out if isinstance(budget_bits, tuple) else out[0]

    def norm1_exponent_fast(self, max_exp: Any, sumsq: Any, terms: int) -> Any:
        """One ``oz_row_rule`` launch (``gemm/scaling.cu``)."""
        return self._row_rule(max_exp, sumsq, (ceil_log2_int(terms),), 1)[0]

    def _row_rule(self, max_exp: Any, sumsq: Any, args: tuple[int, ...], rule: int) -> Any:
        """``(len(args), *max_exp.shape)`` int32 values of a fast-mode row rule (the type
        the residue and Phase B kernels take: no conversion launch on the way); the
        arguments' device array is made once per tuple and device."""
        cp = self._cp
        out = cp.empty((len(args), *max_exp.shape), cp.int32)
        rows = int(max_exp.size)
        if rows:
            key = (cp.cuda.Device().id, args)
            table = self._rule_args.get(key)
            if table is None:
                table = self._rule_args[key] = cp.asarray(np.array(args, np.int64))
            with phase("scaling", self._clock):
                kernel = get_function(_SCALING_CU, "oz_row_rule", scaling_macros())
                kernel(
                    _grid(rows * len(args)),
                    (_THREADS,),
                    (
                        cp.ascontiguousarray(max_exp, dtype=cp.int32),
                        cp.ascontiguousarray(sumsq, dtype=cp.int64),
                        np.int64(rows),
                        table,
                        np.int32(len(args)),
                        np.int32(rule),
                        out,
                    ),
                )
        return out

    def scaled_minima(self, g: Any, row_scale: Any, col_scale: Any) -> tuple[Any, Any]:
        """One read of ``g`` (``gemm/guarantee.cu``, ``oz_scaled_minima``): a thread per
        column and a block per ``_MIN_ROWS`` rows, the rows' minima reduced in warps;
        both minima merged with ``atomicMin`` on the bits."""
        cp = self._cp
        *batch, m, n = g.shape
        items = int(np.prod(batch)) if batch else 1
        rmin = cp.full((*batch, m), np.inf, cp.float64)
        cmin = cp.full((*batch, n), np.inf, cp.float64)
        if g.size:
            kernel = get_function(_GUARANTEE_CU, "oz_scaled_minima", _GUARANTEE_MACROS)
            kernel(
                (-(-n // _THREADS), min(-(-m // _MIN_ROWS), _GRID_Z), min(items, _GRID_Z)),
                (_THREADS,),
                (
                    cp.ascontiguousarray(g, dtype=cp.float64),
                    np.int64(items),
                    np.int64(m),
                    np.int64(n),
                    cp.ascontiguousarray(row_scale, dtype=cp.float64),
                    cp.ascontiguousarray(col_scale, dtype=cp.float64),
                    rmin.view(cp.uint64),
                    cmin.view(cp.uint64),
                ),
            )
        return rmin, cmin

    def weighted_column_sums(self, words: Any, salt: int) -> Any:
        """One read of ``words`` (``gemm/guarantee.cu``, ``oz_column_hash``): a thread per
        column, chunks of rows enough to fill the GPU, partial sums merged with
        ``atomicAdd`` (modulo 2**64, as the sum)."""
        cp = self._cp
        rows, cols = words.shape
        h = cp.zeros(cols, cp.uint64)
        if rows and cols:
            tiles = -(-cols // _THREADS)
            chunks = max(1, min(rows, -(-4 * self._sm_count // tiles), _GRID_Z))
            row_chunk = -(-rows // chunks)
            kernel = get_function(_GUARANTEE_CU, "oz_column_hash", _GUARANTEE_MACROS)
            kernel(
                (tiles, -(-rows // row_chunk)),
                (_THREADS,),
                (words, np.int64(rows), np.int64(cols), np.int64(row_chunk),
                 np.uint64(2 * salt + 1), h),
            )  # fmt: skip
        return h

    def bound_operand(self, x: Any, max_exp: Any, bound_bits: int) -> Any:
        cp = self._cp
        flat, rows, k, parts = self._as_rows(x)
        kp = pad_k(k)
        with phase("scaling", self._clock):
            out = cp.empty((rows, kp), cp.int8)
            kernel = get_function(_SCALING_CU, "oz_bound_operand", scaling_macros())
            exps = cp.ascontiguousarray(max_exp.reshape(-1).astype(cp.int32, copy=False))
            kernel(
                _grid(rows * kp),
                (_THREADS,),
                (
                    flat,
                    np.int64(rows),
                    np.int64(k),
                    np.int64(kp),
                    np.int32(parts),
                    exps,
                    np.int32(bound_bits),
                    out,
                ),
            )
        return out.reshape(*x.shape[:-1], kp)

    def bound_product(self, abar: Any, btbar: Any, bound_bits: int) -> Any:
        """Exact ``Abar Btbar^T`` (INT8 GEMMs): int32 when one k-block suffices
        (``64 * 64 * k < 2**31``), else k-blocks summed in int64."""
        with phase("scaling", self._clock):
            return self._bound_product(abar, btbar, bound_bits)

    def _bound_product(self, abar: Any, btbar: Any, bound_bits: int) -> Any:
        cp = self._cp
        batch_shape = abar.shape[:-2]
        m, kp = abar.shape[-2:]
        n = btbar.shape[-2]
        a3 = abar.reshape(-1, m, kp)
        b3 = btbar.reshape(-1, n, kp)
        block = max(16, ((2**31 - 1) // 4**bound_bits) // 16 * 16)  # 64*64*block < 2**31
        items = a3.shape[0]
        a3 = cp.ascontiguousarray(a3)
        b3 = cp.ascontiguousarray(b3)
        if kp <= block:  # one strided-batched call over the stack
            out = cp.empty((items, m, n), cp.int32)
            self._gemm_s8(
                n, m, kp, b3.data.ptr, kp, a3.data.ptr, kp, out.data.ptr, n,
                strides=(n * kp, m * kp, m * n), count=items,
            )  # fmt: skip
            return out.reshape(*batch_shape, m, n)
        out = cp.zeros((items, m, n), cp.int64)
        tmp = cp.empty((items, m, n), cp.int32)
        for k0 in range(0, kp, block):
            kk = min(block, kp - k0)
            self._gemm_s8(
                n, m, kk, b3.data.ptr + k0, kp, a3.data.ptr + k0, kp, tmp.data.ptr, n,
                strides=(n * kp, m * kp, m * n), count=items,
            )  # fmt: skip
            out += tmp
        return out.reshape(*batch_shape, m, n)

    # -- stage 2 -------------------------------------------------------------------
    def residues(
        self, x: Any, shift: Any, moduli: ResidueSystem, rounding: str = "trunc"
    ) -> ResidueStack:
        """INT8 residue planes ``(N, planes, ..., rows, kp)``: one real; complex three (re,
        im, rmod(re + im)), on a Gaussian system two (``rmod(re +- j im)``, the planes its
        two products take; the NumPy engine keeps re, im and forms them in Phase A). For an
        FP8 residue system, e4m3 digit planes ``(N, planes, D, ..., rows, kp)``
        (:meth:`_fp8_residues`). ``rounding``: the scaled integers' rule
        (:func:`ozfft.ozaki.scaling.scaled_integers`)."""
        if moduli.phase_a == "fp8":
            return self._fp8_residues(x, shift, moduli, rounding)
        _require_int8(moduli)
        cp = self._cp
        flat, rows, k, parts = self._as_rows(x)
        kp = pad_k(k)
        gaussian = parts == 2 and moduli.gaussian
        nplanes = 1 if parts == 1 else (2 if gaussian else 3)
        needed = moduli.count * nplanes * rows * kp
        planes = self._alloc("residue planes", (moduli.count, nplanes, rows, kp), cp.int8, needed)
        name = (
            "oz_residues_real"
            if parts == 1
            else ("oz_residues_gaussian" if gaussian else "oz_residues_complex")
        )
        macros = moduli_macros(moduli, with_limbs=False) | rounding_macros(rounding)
        self._launch_residues(_RESIDUES_CU, name, macros, flat, rows, k, kp, shift, planes)
        return ResidueStack(
            planes.reshape(moduli.count, nplanes, *x.shape[:-1], kp), is_complex=parts == 2
        )

    def _launch_residues(self, source, name, macros, flat, rows, k, kp, shift, planes) -> None:
        """One residue kernel (INT8 planes or FP8 digit planes) over ``rows`` rows of ``k``
        scaled entries, padded to ``kp``: a thread per (row, four columns)."""
        with phase("residues", self._clock):
            kernel = get_function(source, name, macros)
            shifts = self._cp.ascontiguousarray(
                shift.reshape(-1).astype(self._cp.int32, copy=False)
            )
            kernel(
                _grid(rows * (kp // 4)),
                (_THREADS,),
                (flat, np.int64(rows), np.int64(k), np.int64(kp), shifts, planes),
            )

    def integer_residues(self, re: Any, im: Any, moduli: ResidueSystem) -> ResidueStack:
        """INT8 planes (re, im, rmod(re + im)) of an integer operand, padded to ``kp``."""
        from ...ozaki.residues import symmetric_int_residues, symmetric_mod

        _require_int8(moduli)
        if moduli.gaussian:  # these planes are Karatsuba's; a Gaussian Phase A needs re +- j im
            raise ValueError("integer_residues writes Karatsuba planes: not for a Gaussian system")
        cp = self._cp
        re = np.asarray(re, np.int64)
        im = np.asarray(im, np.int64)
        k = re.shape[-1]
        kp = pad_k(k)
        rr = symmetric_int_residues(re, moduli)
        ri = symmetric_int_residues(im, moduli)
        rs = np.empty_like(rr)
        for i, p in enumerate(moduli.moduli):  # rmod(re + im, p_i), the Karatsuba sum plane
            rs[i] = symmetric_mod(rr[i].astype(np.int16) + ri[i], p)
        planes = np.zeros((moduli.count, 3, *re.shape[:-1], kp), np.int8)
        planes[:, 0, ..., :k] = rr
        planes[:, 1, ..., :k] = ri
        planes[:, 2, ..., :k] = rs
        return ResidueStack(cp.asarray(planes), is_complex=True)

    # -- stages 3+4 ----------------------------------------------------------------
    def gemm_workspace(
        self,
        batch: int,
        m: int,
        n: int,
        k: int,
        moduli: int,
        is_complex: bool,
        products: int,
        accurate: bool,
        out_dtype: Any,
        block_budget: int | None = None,
        residue_planes: int | None = None,
        plane_itemsize: int = 4,
    ) -> GemmWorkspace:
        """Workspace of one emulated GEMM on this device (nothing is allocated).

        ``block_budget`` (bytes for the Phase-A planes, ``plane_itemsize`` bytes a value)
        defaults to half the free device memory less the output, capped by
        ``OZFFT_WORKSPACE``.
        """
        itemsize = np.dtype(out_dtype).itemsize
        if block_budget is None:
            block_budget = self._block_budget(batch, m, n, out_dtype)
        return plan_workspace(
            batch,
            m,
            n,
            k,
            moduli=moduli,
            is_complex=is_complex,
            products=products,
            accurate=accurate,
            out_itemsize=itemsize,
            block_budget=block_budget,
            residue_planes=residue_planes,
            plane_itemsize=plane_itemsize,
        )

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
        if moduli.phase_a == "fp8":
            return self._fp8_exact_product(
                ra, rbt, shift_a, shift_b, moduli, out_dtype, complex_method=complex_method
            )
        _require_int8(moduli)
        cp = self._cp
        products = _products(ra, rbt, moduli, complex_method)
        out_dtype = np.dtype(out_dtype)
        count, _, *batch_shape, m, kp = ra.planes.shape
        n = rbt.planes.shape[-2]
        batch = int(np.prod(batch_shape)) if batch_shape else 1
        pa = ra.planes.reshape(count, ra.planes.shape[1], batch, m, kp)
        pb = rbt.planes.reshape(count, rbt.planes.shape[1], batch, n, kp)
        sa = cp.ascontiguousarray(shift_a.reshape(batch, m).astype(cp.int32, copy=False))
        sb = cp.ascontiguousarray(shift_b.reshape(batch, n).astype(cp.int32, copy=False))

        budget = self._block_budget(batch, m, n, out_dtype)  # (one free-memory query)
        ws = self.gemm_workspace(
            batch, m, n, kp, count, ra.is_complex, products, False, out_dtype,
            block_budget=budget, residue_planes=ra.planes.shape[1],
        )  # fmt: skip
        kblocked = kp > K_BLOCK
        pairs = _PRODUCT_PLANES[products]
        stacked = self._stacked_fits(batch, count, products, m, n, ws, kblocked, budget)
        igemm = None if stacked else self._cutlass_phase_a(pa, pb, moduli)
        if igemm is not None:  # byte planes: a workspace of its own (a quarter of the bytes)
            blocks = self._cutlass_blocks(
                igemm, pa, pb, moduli, pairs, ra.is_complex, out_dtype, budget
            )
        else:
            self._require_column_block(ws, f"an emulated {m}x{kp}x{n} product with {count} moduli")
            macros = phase_b_macros(
                moduli,
                out_float=_binary32(out_dtype),
                raw_sums=kblocked or raw_sums_fit(kp, moduli),  # k-blocked sums are in [0, p)
            )
            reconstruct = _reconstruct_kernel(macros, ra.is_complex)
            if stacked:
                out = cp.empty((batch, m, n), out_dtype)
                self._stacked_product(
                    pa, pb, sa, sb, out, count, pairs, reconstruct, ra.is_complex, ws
                )
                return out.reshape(*batch_shape, m, n)
            blocks = self._cublas_blocks(pa, pb, pairs, ws, macros, reconstruct)
        out = self._by_column_blocks(blocks, sa, sb, (count, batch, m, n), pairs, out_dtype,
                                     ra.is_complex)  # fmt: skip
        return out.reshape(*batch_shape, m, n)

    def _by_column_blocks(
        self,
        blocks: _BlockPhaseA,
        sa: Any,
        sb: Any,
        shape: tuple[int, int, int, int],
        pairs: tuple[tuple[int, int], ...],
        out_dtype: Any,
        is_complex: bool,
    ) -> Any:
        """The column-block loop every Phase-A backend shares: per item and column block
        of ``blocks.ws.col_block`` columns, ``blocks.fill`` writes the block's planes
        ``(N, products, m, ldc)`` and Phase B turns them into its outputs. ``shape``:
        moduli, items, m, n. Returns the ``(items, m, n)`` result."""
        cp = self._cp
        count, batch, m, n = shape
        ws, products = blocks.ws, len(pairs)
        logger.debug("cuda product %s: %s Phase A, column block %d of %d",
                     (batch, m, n), blocks.backend, ws.col_block, n)  # fmt: skip
        planes = self._alloc(
            "Phase-A planes", (count, products, m, ws.ldc), blocks.plane_dtype, ws.block_bytes
        )
        out = cp.empty((batch, m, n), out_dtype)
        for b in range(batch):
            for j0 in range(0, n, ws.col_block):
                nb = min(ws.col_block, n - j0)
                with phase("phase_a", self._clock):
                    blocks.fill(planes, b, j0, nb)
                with phase("phase_b", self._clock):
                    _block_phase_b(blocks.reconstruct, planes, ws.ldc, products, is_complex,
                                   sa, sb, out, b, j0, nb, vec=blocks.vec)  # fmt: skip
        return out

    def _cublas_blocks(
        self,
        pa: Any,
        pb: Any,
        pairs: tuple[tuple[int, int], ...],
        ws: GemmWorkspace,
        macros: Macros,
        reconstruct: Any,
    ) -> _BlockPhaseA:
        """Phase A on cuBLAS INT8 GEMMs (``gemmEx``), one per modulus and product into
        INT32 planes; k past :data:`K_BLOCK` in k-blocks whose sums ``oz_mod_accumulate``
        reduces into the planes."""
        cp = self._cp
        count, _, _, m, kp = pa.shape
        ldc, products = ws.ldc, len(pairs)
        kblocked = kp > K_BLOCK
        part = (
            self._alloc("Phase-A k-block planes", (count, products, m, ldc), cp.int32,
                        ws.block_bytes)
            if kblocked
            else None
        )  # fmt: skip
        accumulate = get_function(_PHASE_B_CU, "oz_mod_accumulate", macros) if kblocked else None

        def fill(planes: Any, b: int, j0: int, nb: int) -> None:
            for k0 in range(0, kp, K_BLOCK):
                kk = min(K_BLOCK, kp - k0)
                target = part if kblocked else planes
                for i in range(count):
                    for t, (ia, ib) in enumerate(pairs):
                        self._gemm_s8(nb, m, kk, pb[i, ib, b, j0].data.ptr + k0, kp,
                                      pa[i, ia, b].data.ptr + k0, kp, target[i, t].data.ptr,
                                      ldc)  # fmt: skip
                if kblocked:
                    per_modulus = products * m * ldc
                    accumulate(
                        _grid(per_modulus * count),
                        (_THREADS,),
                        (planes, part, np.int64(per_modulus), np.int32(k0 == 0)),
                    )

        return _BlockPhaseA("cuBLAS INT8", ws, cp.int32, reconstruct, 1, fill)

    def _cutlass_phase_a(self, pa: Any, pb: Any, moduli: ResidueSystem) -> ModpIgemm | None:
        """The CUTLASS Phase A (``kernels/gemm/modp_igemm.cu``) for residue stacks ``pa``,
        ``pb`` on this device, or None: off (``OZFFT_CUTLASS=0``), unavailable (not
        Hopper, no CUTLASS headers or nvcc), k past ``MODP_IGEMM_MAX_K`` (k-blocked),
        moduli outside ``MODP_IGEMM_MODULI``, n not a multiple of 16 (the byte planes'
        rows) or stacks not 16-byte aligned."""
        if pa.shape[-1] > MODP_IGEMM_MAX_K or pb.shape[-2] % MODP_IGEMM_ALIGN:
            return None
        if any(p not in MODP_IGEMM_MODULI for p in moduli.moduli):
            return None
        if pa.data.ptr % MODP_IGEMM_ALIGN or pb.data.ptr % MODP_IGEMM_ALIGN:
            return None
        return modp_igemm(self._cp.cuda.runtime.getDevice())

    def _epilogue_table(self, moduli: ResidueSystem, device: int) -> Any:
        """The CUTLASS epilogue's table (the moduli and their reduction constants,
        :func:`epilogue_table`) as a ``(4, N)`` int32 array on ``device`` (the current one;
        built once per device)."""
        key = (device, tuple(moduli.moduli))
        if key not in self._epilogue_tables:
            self._epilogue_tables[key] = self._cp.asarray(epilogue_table(key[1]))
        return self._epilogue_tables[key]

    def _cutlass_blocks(
        self,
        igemm: ModpIgemm,
        pa: Any,
        pb: Any,
        moduli: ResidueSystem,
        pairs: tuple[tuple[int, int], ...],
        is_complex: bool,
        out_dtype: np.dtype,
        budget: int,
    ) -> _BlockPhaseA:
        """Phase A on the CUTLASS kernel: per column block and product one launch over
        every modulus, each sum reduced to ``[0, p)`` and stored as a byte; Phase B then
        reads those byte planes (``OZ_PLANES_U8``), ``vec`` outputs a thread. The same
        bits as cuBLAS with INT32 planes, a quarter of the planes' traffic.

        ``pa``, ``pb``: residue stacks ``[modulus][plane][item][rows][kp]``; ``k <=
        MODP_IGEMM_MAX_K`` (no k-blocking); ``budget``: bytes for the planes."""
        cp = self._cp
        count, _, batch, m, kp = pa.shape
        n = pb.shape[3]
        ws = self.gemm_workspace(
            batch, m, n, kp, count, is_complex, len(pairs), False, out_dtype,
            block_budget=budget, residue_planes=pa.shape[1], plane_itemsize=1,
        )  # fmt: skip
        self._require_column_block(ws, f"an emulated {m}x{kp}x{n} product with {count} moduli")
        vec, dp4a = _phase_b_vec(moduli, is_complex, ws.col_block)
        macros = phase_b_macros(
            moduli, out_float=_binary32(out_dtype), byte_planes=True, dp4a_weights=dp4a
        )
        device = cp.cuda.runtime.getDevice()
        table = self._epilogue_table(moduli, device)
        stream = cp.cuda.get_current_stream().ptr
        workspace = igemm.workspace_bytes(m, ws.col_block, kp, count, device)
        scratch = self._alloc("CUTLASS workspace", (workspace,), cp.uint8, workspace)
        a_batch, b_batch = pa.strides[0], pb.strides[0]

        def fill(planes: Any, b: int, j0: int, nb: int) -> None:
            for t, (ia, ib) in enumerate(pairs):
                igemm(
                    pa[0, ia, b].data.ptr, kp, a_batch,
                    pb[0, ib, b, j0].data.ptr, kp, b_batch,
                    planes[0, t].data.ptr, ws.ldc, planes.strides[0],
                    table.data.ptr, m, nb, kp, count,
                    stream=stream, device=device,
                    workspace=scratch.data.ptr, workspace_bytes=workspace,
                )  # fmt: skip

        reconstruct = _reconstruct_kernel(macros, is_complex, vec, dp4a=dp4a)
        return _BlockPhaseA("CUTLASS byte-plane", ws, cp.uint8, reconstruct, vec, fill)

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
        """Products with ``k <= 64`` (``SMALL_PRODUCT_K``) on INT8 moduli, real or on a
        Gaussian system, in one launch of ``gemm/small_product.cu`` per 65535 items: each
        block forms the residues of a 64-row tile of A and of Bt, their INT8 products for
        every modulus (``mma.sync``, sums reduced mod p on chip) and the CRT
        reconstruction of its 64 x 64 outputs. No residue or INT32 plane reaches device
        memory. Up to ``_SP_MAX_OUTPUTS`` outputs (complex: half); off with
        ``OZFFT_FUSED_SMALL=0``."""
        return self._small_product(a, bt, moduli, out_dtype, rounding, shifts=(shift_a, shift_b))

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
        """:meth:`fused_product` whose kernel also computes the fast-mode shifts for
        ``budget_bits`` (``OZ_SP_SHIFTS``: each block the row statistics of its 64 A and
        64 Bt rows, whole since k <= 64) and counts NaN and Inf entries, raised as
        :class:`~ozfft.errors.NonFiniteInputError` (A first) once it has run; with
        ``counted`` (the plan probe has counted them) the count is not read and the call
        returns without waiting for the kernel; with ``shifts`` (the plan probe's, for
        this budget) the kernel reads them instead. Operands take exact base-256 slices
        where the budget allows (``small_product_slices``: real up to 8 digits, complex up
        to 9 with one item per block; ``OZFFT_SLICES=0``: residues), the same bits."""
        return self._small_product(
            a, bt, moduli, out_dtype, rounding, shifts=shifts, budget=budget_bits,
            check=not counted,
        )  # fmt: skip

    def _small_product(
        self,
        a: Any,
        bt: Any,
        moduli: ResidueSystem,
        out_dtype: Any,
        rounding: str,
        *,
        shifts: tuple[Any, Any] | None = None,
        budget: int = 0,
        check: bool = False,
    ) -> Any | None:
        """The small-product kernel, given the ``shifts`` ``(shift_a, shift_b)`` or
        computing them for the CRT budget ``budget`` (``check``: then read its NaN/Inf
        count, and wait for it); None where it does not apply. Given shifts with a
        ``budget`` are its fast-mode shifts (the plan probe's): slices may take them.
        ``bt`` may be the transposed view of a C-contiguous B: the slices kernels read B
        in place where a block takes one item (``OZ_SP_B_COLUMNS``), other kernels take it
        prepared. How a signature runs is decided once (:class:`_SmallLaunch`, kept per
        device, operand layouts and arguments): a call that finds it only allocates,
        launches and reads."""
        key = (
            self._cp.cuda.runtime.getDevice(), a.shape, a.strides, a.dtype, bt.shape,
            bt.strides, bt.dtype, bt.data.ptr % bt.dtype.itemsize == 0, moduli, out_dtype,
            rounding, shifts is None, budget, config.product_switches(),
        )  # fmt: skip
        plan = self._small_plans.get(key, _NO_PLAN)
        if plan is _NO_PLAN:
            plan = self._plan_small_product(
                a, bt, moduli, out_dtype, rounding, shifts is None, budget
            )
            put_bounded(self._small_plans, key, plan, _SMALL_PLANS_KEPT)
        if plan is None:
            return None
        return self._run_small_product(plan, a, bt, shifts, check)

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
        """:meth:`fused_fast_product` (its count read) prepared for these layouts: the
        :class:`_SmallLaunch` is decided here, so a call of ``run(a, b)`` only allocates,
        launches and reads (``b`` itself is the kernel's operand where it is read in place,
        or where ``swapaxes(b, -1, -2)`` is C-contiguous: the same address)."""
        plan = self._plan_small_product(a, bt, moduli, out_dtype, rounding, True, budget_bits)
        if plan is None:
            return None

        def run(a: Any, b: Any) -> Any:
            bt = b.swapaxes(-1, -2) if plan.prepare_bt else b
            return self._run_small_product(plan, a, bt, None, True)

        return run

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
        """:meth:`tiled_plan_probe` (its own statistics) and the product on its shifts
        (:meth:`fused_fast_product` with ``counted`` and ``shifts``) prepared for these
        layouts: both launch plans are decided here, so a call of ``run(a, b)`` only
        allocates, queues the probe's rows, the product and (at the wait) the test."""
        k, budget = a.shape[-1], rules.budget_bits
        # B read in place by both, where the product can (the probe, deciding from the same
        # layout, reads it in place exactly then): the probe then writes no Bt rows
        product = self._plan_small_product(a, bt, moduli, out_dtype, rounding, False, budget)
        probe = None
        if product is not None and not product.prepare_bt:
            probe = self._plan_probe(a, bt, rules, size=k, given=False, keep_bt=False)
        if probe is None:
            probe = self._plan_probe(a, bt, rules, size=k, given=False)
            if probe is None:
                return None
            product = self._plan_small_product(
                a, bt, moduli, out_dtype, rounding, False, budget, bt_rows=True
            )
            if product is None:
                return None
        shared_b = not probe.keeps_bt and probe.b_in_place

        def run(a: Any, b: Any) -> tuple[Any, PendingProbe]:
            # (B itself where the probe reads it in place: no transposed views made per call;
            # the product reads the probe's shifts by address: no arrays made of them)
            read = b if probe.b_in_place else b.swapaxes(-1, -2)  # (the probe's operand)
            with phase("guarantee", self._clock):
                pending, shifts_at = self._queue_probe(probe, a, read, arrays=False)
            operand = b if shared_b else pending.bt
            out = self._run_small_product(product, a, operand, None, False, shifts_at=shifts_at)
            return out, pending

        return run

    def forget_plans(self) -> None:
        """Drop the per-signature launch plans of the small products (built again on the
        next call). For tests that patch what the plans are built from."""
        self._small_plans.clear()

    def _plan_small_product(
        self,
        a: Any,
        bt: Any,
        moduli: ResidueSystem,
        out_dtype: Any,
        rounding: str,
        in_kernel: bool,
        budget: int,
        *,
        bt_rows: bool = False,
    ) -> _SmallLaunch | None:
        """How :meth:`_small_product` runs operands of these layouts (``in_kernel``: the
        kernel computes the shifts for ``budget``), or None where it does not apply.
        ``bt_rows``: the calls will pass C-contiguous rows of ``bt``'s shape (the plan
        probe's :attr:`~ozfft.engines.base.PendingProbe.bt`), whatever ``bt``'s layout."""
        is_complex = a.dtype.kind == "c"
        k = a.shape[-1]
        if (
            not _small_operands(a, bt, any_layout=True)
            or moduli.phase_a != "int8"
            or (is_complex and not moduli.gaussian)
            or not self._has_int8_mma()
        ):
            return None
        planes = 2 if is_complex else 1
        *batch_shape, m, _ = a.shape
        n = bt.shape[-2]
        batch = math.prod(batch_shape)
        if batch * m * n * planes > _SP_MAX_OUTPUTS or -(-m // SMALL_PRODUCT_TILE) > _GRID_Z:
            return None  # large products stage faster; grid y holds 65535 row tiles
        if batch * m * n == 0:
            return None  # nothing to launch: the staged path (and its NaN/Inf test) runs
        out_dtype = np.dtype(out_dtype)
        span_shift = _sp_span_shift(m, n)
        pack = SMALL_PRODUCT_TILE >> span_shift  # small items side by side on a tile's diagonal
        # fast-mode shifts for `budget`: exact slices where the digits fit the kernel
        # (complex: one item per block)
        slices = (
            small_product_slices(budget, planes)
            if budget > 0 and (planes == 1 or pack == 1) and config.small_product_slices()
            else None
        )
        # B itself, where a slices kernel (one item a block) reads its columns in place
        rows = bt_rows or bt.flags.c_contiguous
        in_place = not rows and slices and pack == 1
        b_in_place = _rows_of_transposed(a, bt) is not None if in_place else False
        kernel = self._small_product_kernel(
            moduli, planes, out_dtype, rounding, in_kernel, packed=pack > 1, slices=slices,
            b_columns=b_in_place,
        )  # fmt: skip
        if kernel is None:
            return None  # (the caller prepares a view for the stages)
        launch, smem, threads, columns = kernel
        col_tiles, row_tiles = -(-n // columns), -(-m // SMALL_PRODUCT_TILE)
        if slices and planes == 2:  # A's slices formed once for a block's column tiles
            per_block = _complex_tiles_per_block(
                min(batch, _GRID_Z), row_tiles, col_tiles, self._sm_count
            )
            col_tiles = -(-col_tiles // per_block)
        chunks = tuple(
            (b0, min(_GRID_Z * pack, batch - b0)) for b0 in range(0, batch, _GRID_Z * pack)
        )
        return _SmallLaunch(
            launch=launch,
            smem=smem,
            threads=threads,
            grid=(col_tiles, row_tiles),
            chunks=chunks,
            pack=pack,
            span_shift=span_shift,
            prepare_bt=not b_in_place and not rows,
            b_in_place=b_in_place,
            batch=batch,
            m=m,
            n=n,
            k=k,
            budget=int(budget),
            in_kernel=in_kernel,
            out_dtype=out_dtype,
            result_shape=None if a.ndim == 3 else (*batch_shape, m, n),
        )

    def _run_small_product(
        self,
        plan: _SmallLaunch,
        a: Any,
        bt: Any,
        shifts: tuple[Any, Any] | None,
        check: bool,
        *,
        shifts_at: int | None = None,
    ) -> Any:
        """One call of :meth:`_small_product` as ``plan`` says: the output, the count's
        zeros (or the given shifts as int32 stacks; ``shifts_at``: the address of such
        stacks, A's rows then Bt's, as the plan probe writes them), a launch per 65535
        blocks of items, the count's read where ``check``. Only ``bt``'s address is read
        unless ``plan.prepare_bt`` (B itself may stand for it where it is read in place)."""
        cp = self._cp
        batch, m, n, k = plan.batch, plan.m, plan.n, plan.k
        if plan.prepare_bt:
            bt = self.prepare_operand(bt)
        out = self._alloc(  # (the result's shape: the kernels read the address alone)
            "the product",
            (batch, m, n) if plan.result_shape is None else plan.result_shape,
            plan.out_dtype,
            batch * m * n * plan.out_dtype.itemsize,
        )
        # (stacks are C-contiguous, B's read in place as well: an item's first entry is the
        # stack's address plus the item's bytes; the shift pointers are not read where the
        # kernel computes them, nor the counts pointer where it is given them)
        a_ptr, bt_ptr, out_ptr = a.data.ptr, bt.data.ptr, out.data.ptr
        a_item, bt_item = m * k * a.dtype.itemsize, n * k * a.dtype.itemsize
        out_item = m * n * plan.out_dtype.itemsize
        if plan.in_kernel and check:  # NaN, Inf of A; NaN, Inf of Bt; the flag's address
            kept = _flagged_counts(cp)
            sa_ptr = sb_ptr = counts_ptr = kept.arm()
        elif plan.in_kernel:  # (counted, not read: no flag)
            counts = cp.zeros(_SP_COUNTS, cp.uint64)
            sa_ptr = sb_ptr = counts_ptr = counts.data.ptr
        elif shifts_at is not None:
            sa_ptr, sb_ptr = shifts_at, shifts_at + 4 * batch * m
            counts_ptr = sa_ptr
        else:  # (the probe's shifts are int32 and contiguous already: no copies)
            sa = _stack_shifts(cp, shifts[0], batch, m)
            sb = _stack_shifts(cp, shifts[1], batch, n)
            sa_ptr, sb_ptr = sa.data.ptr, sb.data.ptr
            counts_ptr = sa_ptr
        for b0, items in plan.chunks:
            shift_ptrs = (
                (sa_ptr, sb_ptr) if plan.in_kernel else (sa_ptr + 4 * m * b0, sb_ptr + 4 * n * b0)
            )
            with phase("fused", self._clock):
                args = (
                    a_ptr + a_item * b0, bt_ptr + bt_item * b0, m, n, k, *shift_ptrs,
                    out_ptr + out_item * b0, plan.budget, counts_ptr, items, plan.span_shift,
                )  # fmt: skip
                plan.launch(
                    (*plan.grid, -(-items // plan.pack)),
                    (plan.threads,),
                    args,
                    shared_mem=plan.smem,
                )
        if plan.in_kernel and check:
            counted = kept.read()
            if counted is not None:
                for i, operand in enumerate(("a", "b")):
                    _raise_non_finite(operand, int(counted[2 * i]), int(counted[2 * i + 1]))
        return out

    def _has_int8_mma(self) -> bool:
        """Whether the current device has ``mma.sync`` m16n8k32 on INT8 (sm_80 on); older
        ones stage every product (cuBLAS)."""
        device = self._cp.cuda.Device().id
        if device not in self._int8_mma:
            self._int8_mma[device] = compute_capability(device) >= (8, 0)
        return self._int8_mma[device]

    def _small_shared(self, planes: int) -> int:
        """Dynamic shared bytes a small-product block may take on the current device: real
        blocks two per SM, Gaussian ones one, less the kernel's static shift table (read
        once per device: cupy builds the whole attribute table on each read)."""
        key = (self._cp.cuda.Device().id, planes)
        if key not in self._sp_shared:
            attributes = self._cp.cuda.Device().attributes
            per_block = attributes["MaxSharedMemoryPerBlockOptin"]
            if planes == 1:
                per_sm = attributes["MaxSharedMemoryPerMultiprocessor"]
                per_block = min(per_block, per_sm // 2 - 1024)
            self._sp_shared[key] = per_block - SMALL_PRODUCT_STATIC_SHARED
        return self._sp_shared[key]

    def _small_product_kernel(
        self,
        moduli: ResidueSystem,
        planes: int,
        out_dtype: Any,
        rounding: str,
        shifts: bool,
        *,
        packed: bool = False,
        slices: int | None = None,
        b_columns: bool = False,
    ) -> tuple[Any, int, int, int] | None:
        """The launcher of the small-product kernel for these moduli (``shifts``: the
        variant that computes them; ``packed``: the one with several small items per
        block; ``slices``: the exact-slices kernel with that many digits, fast-mode shifts
        only, complex ones not ``packed``; ``b_columns``: the slices kernel that reads B in
        place, not ``packed``), its dynamic shared bytes, threads per block and output columns
        per block; None where the moduli's sums do not fit a block
        (:meth:`_small_shared`). Kept per device and arguments: a call that finds it
        builds no macros."""
        out_float = _binary32(out_dtype)
        key = (self._cp.cuda.runtime.getDevice(), moduli, planes, out_float, rounding, shifts,
               packed, slices or 0, b_columns)  # fmt: skip
        if key not in self._small:
            self._small[key] = self._build_small_product(
                moduli, planes, out_float, rounding, shifts, packed, slices or 0, b_columns
            )
        return self._small[key]

    def _build_small_product(
        self,
        moduli: ResidueSystem,
        planes: int,
        out_float: bool,
        rounding: str,
        shifts: bool,
        packed: bool,
        slices: int,
        b_columns: bool = False,
    ) -> tuple[Any, int, int, int] | None:
        """:meth:`_small_product_kernel`'s value, built."""
        columns = SMALL_PRODUCT_TILE
        if slices and planes == 2:
            out = np.dtype(np.complex64 if out_float else np.complex128)
            chunk, smem = moduli.count, small_complex_slice_shared(slices, out.itemsize)
            name, threads = "oz_small_product_slices_gaussian", SMALL_COMPLEX_SLICE_THREADS
            columns = SMALL_COMPLEX_SLICE_COLUMNS
        elif slices:
            chunk, smem = moduli.count, slices * SMALL_SLICE_BYTES
            name, threads = "oz_small_product_slices_real", SMALL_SLICE_THREADS
        else:
            sized = small_product_chunk(moduli.count, planes, self._small_shared(planes))
            if sized is None:
                return None
            chunk, smem = sized
            name = "oz_small_product_gaussian" if planes == 2 else "oz_small_product_real"
            threads = SMALL_PRODUCT_THREADS * planes
        macros = small_product_macros(
            moduli,
            out_float=out_float,
            rounding=rounding,
            chunk=chunk,
            shifts=shifts,
            packed=packed,
            slices=slices,
            b_columns=b_columns,
        )
        kernel = get_function(_SMALL_PRODUCT_CU, name, macros)
        # always: the static shift table counts against the 48 KB default as well
        kernel.max_dynamic_shared_size_bytes = smem
        return launcher(kernel, _SP_SIGNATURE), smem, threads, columns

    # -- the accuracy plan's tiled test ---------------------------------------------
    def tiled_plan_probe(
        self,
        a: Any,
        bt: Any,
        rules: ProbeRules,
        *,
        stats: tuple[RowStats, RowStats] | None = None,
        index: Any | None = None,
    ) -> PendingProbe | None:
        """A memset of the state's head, three launches of ``gemm/plan_probe.cu`` and one
        asynchronous read: ``oz_probe_rows_*`` (a block per 64 rows of an
        operand: the rows' statistics, nb, q_off, the maxima, and per 4-row tile the
        minima of the magnitudes and the power of two of the pairing rule); then
        ``oz_probe_pairs_*`` (a block per 64 x 64 tile pair of an item: the exact
        lower-bound products of its 16 x 16 tile pairs and their scaled minima, merged
        over the item with ``atomicMin``); ``oz_probe_deficits`` (each row's deficit, the
        largest per operand). Without ``stats`` for ``k <= 64`` (the rows kernel computes
        the statistics and counts NaN and Inf); with them for at most ``_PROBE_SUBSET``
        inner indices (``oz_probe_rows_given_*``: all of k, or ``index``). With its own
        statistics the rows kernel also writes the rows' fast-mode shifts for
        ``rules.budget_bits`` (:attr:`PendingProbe.shifts`), which the small product reads; and
        where ``bt`` is the transposed view of a C-contiguous B, it reads B in place (the
        blocks of Bt's rows stage their columns of B transposed in shared memory) and
        writes Bt's rows (:attr:`PendingProbe.bt`): no separate transposed copy. Other
        views are prepared here. Off with ``OZFFT_FUSED_SMALL=0``.

        The memset and the rows are queued here; the pairs, the deficits and the read at
        the first wait on the returned probe, on a side stream that starts after the rows
        (:func:`_fork_point`): a product queued in between on this stream (reading the
        shifts, and Bt's rows or B itself) starts right after the rows and runs beside the
        test. (So the profiling phase ``guarantee``, timed on the side stream, overlaps the
        product's ``fused``: their sum may exceed the call's time.)"""
        size = a.shape[-1] if index is None else int(index.shape[0])
        plan = self._plan_probe(a, bt, rules, size=size, given=stats is not None)
        return None if plan is None else self._run_probe(plan, a, bt, stats, index)

    def _plan_probe(
        self,
        a: Any,
        bt: Any,
        rules: ProbeRules,
        *,
        size: int,
        given: bool,
        keep_bt: bool = True,
    ) -> _ProbeLaunch | None:
        """How :meth:`tiled_plan_probe` runs operands of these layouts over ``size`` inner
        indices (``given``: with the caller's statistics), or None where it does not
        apply. ``keep_bt=False``: where B is read in place, its rows are not written out
        (:attr:`PendingProbe.bt` None: the caller's product reads B in place too)."""
        is_complex = a.dtype.kind == "c"
        k = a.shape[-1]
        max_k = None if given else SMALL_PRODUCT_K
        if (
            not _small_operands(a, bt, max_k, any_layout=True)
            or rules.tile != _PROBE_TILE
            or size > _PROBE_SUBSET
        ):
            return None
        *batch_shape, m, _ = a.shape
        n = bt.shape[-2]
        batch = math.prod(batch_shape)
        if batch * m * n == 0 or -(-m // _PROBE_ROWS) > _GRID_Z:
            return None
        b_in_place = not given and _rows_of_transposed(a, bt) is not None
        planes = 2 if is_complex else 1
        tiles = batch * (-(-m // _PROBE_TILE) + -(-n // _PROBE_TILE))
        width = size * planes
        # one allocation, in 8-byte words: the state (int64, OZ_PROBE_OUT + tiles; its head
        # is what the read takes), scale (double, tiles), q and the shifts (int32, batch (m +
        # n) each), the tile minima (uint32, tiles x width); then, where B is read in place
        # and its rows are kept (keeps_bt), Bt's rows (256-byte aligned), which the product
        # reads
        rows = batch * (m + n)
        words = -(-(_PROBE_OUT + 2 * tiles + rows + -(-tiles * width // 2)) // 32) * 32
        part = "complex" if is_complex else "real"
        kernel_rules = (rules.lower_bound_bits, rules.budget_bits, ceil_log2_int(rules.terms),
                        rules.pairing_offset, rules.never)  # fmt: skip
        keeps_bt = b_in_place and keep_bt
        stage = _probe_stage_bytes(k, planes) if b_in_place else 0  # (B's staged columns)
        in_place = "in_place_" if b_in_place and not keeps_bt else ""
        rows_kernel = pairs_kernel = deficits_kernel = items_kernel = None
        if not given and max(m, n) <= _PROBE_ITEMS_MAX:
            items_name = f"oz_probe_items_{in_place}{part}"
            shared = max(stage, _PROBE_MINIMA_BYTES)  # (then the minima)
            if batch <= self._probe_items_per_sm(items_name, planes, shared) * self._sm_count:
                items_kernel = self._probe_kernel(items_name, _probe_items_shared(planes))
                stage = shared
        if items_kernel is None:
            rows_name = (
                f"oz_probe_rows_given_{part}" if given else f"oz_probe_rows_{in_place}{part}"
            )
            rows_kernel = self._probe_kernel(rows_name, 0 if given else _PROBE_STAGE_MAX)
            pairs_kernel = self._probe_kernel(f"oz_probe_pairs_{part}")
            deficits_kernel = self._probe_kernel("oz_probe_deficits")
        return _ProbeLaunch(
            rows_kernel=rows_kernel,
            pairs_kernel=pairs_kernel,
            deficits_kernel=deficits_kernel,
            items_kernel=items_kernel,
            batch_shape=tuple(batch_shape),
            batch=batch,
            m=m,
            n=n,
            k=k,
            size=size,
            width=width,
            tiles=tiles,
            words=words,
            bt_bytes=batch * n * k * 8 * planes if keeps_bt else 0,
            stage=stage,
            b_in_place=b_in_place,
            keeps_bt=keeps_bt,
            given=given,
            rules=kernel_rules,
            row_blocks=-(-max(m, n) // _PROBE_ROWS),
            pair_grid=(-(-n // _PROBE_ROWS), -(-m // _PROBE_ROWS)),
            deficit_blocks=max(1, min(-(-batch * (m + n) // _THREADS), 4 * self._sm_count)),
            never=rules.never,
        )

    def _run_probe(
        self,
        plan: _ProbeLaunch,
        a: Any,
        bt: Any,
        stats: tuple[RowStats, RowStats] | None = None,
        index: Any | None = None,
    ) -> PendingProbe:
        """One :meth:`tiled_plan_probe` as ``plan`` says (:meth:`_queue_probe`; ``bt`` as
        the plan's: B is read in place from it where the plan says so)."""
        operand = bt.swapaxes(-1, -2) if plan.b_in_place else bt
        return self._queue_probe(plan, a, operand, stats, index)[0]

    def _queue_probe(
        self,
        plan: _ProbeLaunch,
        a: Any,
        operand: Any,
        stats: tuple[RowStats, RowStats] | None = None,
        index: Any | None = None,
        *,
        arrays: bool = True,
    ) -> tuple[PendingProbe, int | None]:
        """The probe's launches: the state's allocation and the memset of its head, the
        rows kernel, and the test (pairs, deficits, read) queued at the first wait on the
        side stream; or the items kernel (the whole probe) and the read behind it on this
        stream. ``operand``: B itself where the plan reads it in place, else Bt (the
        plan's ``bt``). Returns the pending probe and the address of the
        shifts it writes (A's rows, then Bt's; None where it writes none);
        ``arrays=False``: :attr:`PendingProbe.shifts` stays None (a caller that reads the
        shifts by address makes no arrays of them)."""
        cp = self._cp
        batch, m, n, k = plan.batch, plan.m, plan.n, plan.k
        b, bt = (operand, None) if plan.b_in_place else (None, operand)
        if b is None and not bt.flags.c_contiguous:
            bt = self.prepare_operand(bt)
        words = plan.words
        state = self._alloc(
            "the plan probe's state",
            (words + plan.bt_bytes // 8,),
            cp.int64,
            8 * words + plan.bt_bytes,
        )
        if plan.keeps_bt:  # Bt's rows, which the rows kernel writes from B
            bt = cp.ndarray(
                (*b.shape[:-2], b.shape[-1], b.shape[-2]), b.dtype, state.data + 8 * words
            )
        scale = state.data.ptr + 8 * (_PROBE_OUT + plan.tiles)
        q = scale + 8 * plan.tiles
        minima = q + 8 * batch * (m + n)
        head = 8 * _PROBE_OUT  # zeroes: deficits, biased maxima, counts (rows set the minima)
        cp.cuda.runtime.memsetAsync(state.data.ptr, 0, head, cp.cuda.get_current_stream().ptr)
        shifts = None
        if not plan.given:
            given = (0,) * 5
            shifts = q + 4 * batch * (m + n)  # A's rows, then Bt's
        else:
            # (the arrays stay referenced here while the kernels are queued)
            arrays = [cp.ascontiguousarray(index, cp.int64)] if index is not None else [None]
            for row_stats in stats:
                arrays += [cp.ascontiguousarray(row_stats.max_exp, cp.int32)]
                arrays += [cp.ascontiguousarray(row_stats.sumsq, cp.int64)]
            given = tuple(0 if x is None else x.data.ptr for x in arrays)
        for b0 in range(0, batch, _GRID_Z):
            items = min(_GRID_Z, batch - b0)
            # (bt_out: Bt's rows, or without them B itself: it marks B read in place)
            args = (a, bt if b is None else b, batch, b0, m, n, k, plan.size, *given,
                    *plan.rules, state, q, minima, scale, 0 if shifts is None else shifts,
                    0 if b is None else (bt if plan.keeps_bt else b).data.ptr)  # fmt: skip
            if plan.items_kernel is not None:
                plan.items_kernel((1, items, 1), (_PROBE_THREADS,), args, shared_mem=plan.stage)
            else:
                plan.rows_kernel(
                    (plan.row_blocks, items, 2), (_PROBE_THREADS,), args, shared_mem=plan.stage
                )
        reads: list[Callable[[], np.ndarray]] = []
        if plan.items_kernel is not None:  # the whole test ran: its read, before the product
            reads.append(_read_async(cp, state, _PROBE_OUT))
        else:
            side = _fork_point(cp)  # the rows are queued: the test may start from here

        def test() -> Callable[[], np.ndarray]:
            """The tile-pair test and its read, queued once (at the first wait) on the side
            stream, after the rows: work queued on this stream since (the product) starts
            right after the rows and runs beside the test."""
            if not reads:
                with side(), phase("guarantee", self._clock):
                    for b0 in range(0, batch, _GRID_Z):
                        items = min(_GRID_Z, batch - b0)
                        args = (batch, b0, m, n, plan.width, minima, scale, state)
                        plan.pairs_kernel((*plan.pair_grid, items), (_PROBE_PAIR_THREADS,), args)
                    args = (state, q, batch, m, n, plan.never)
                    plan.deficits_kernel((plan.deficit_blocks,), (_THREADS,), args)
                    reads.append(_read_async(cp, state, _PROBE_OUT))
            return reads[0]

        def result() -> TiledProbe:
            # (the probe's arrays stay referenced until the read is done; one conversion of
            # the head to Python ints)
            host = test()()[:_PROBE_OUT].tolist()
            for i, name in enumerate(("a", "b")):
                _raise_non_finite(name, host[6 + 2 * i], host[7 + 2 * i])
            maxima = tuple(v ^ _PROBE_MAX_BIAS for v in host[2:6])  # (sign bit flipped)
            return TiledProbe(host[0], host[1], maxima)

        shifts_at, arrays_of_shifts = shifts, None
        if shifts is not None and arrays:  # A's rows, then Bt's: arrays on its memory
            at = state.data + (shifts - state.data.ptr)
            arrays_of_shifts = (
                cp.ndarray((*plan.batch_shape, m), cp.int32, at),
                cp.ndarray((*plan.batch_shape, n), cp.int32, at + 4 * batch * m),
            )
        kept_bt = None if b is not None and not plan.keeps_bt else bt
        return PendingProbe(result, arrays_of_shifts, kept_bt), shifts_at

    def _probe_items_per_sm(self, name: str, planes: int, stage: int) -> int:
        """Blocks of the items kernel ``name`` an SM of the current device holds at once with
        ``stage`` dynamic shared bytes (by its static shared memory, registers and threads),
        or 0 where the kernel's largest dynamic shared memory does not fit a block there:
        the probe then takes three launches (read once per device and name and bytes)."""
        key = (self._cp.cuda.runtime.getDevice(), name, stage)
        if key not in self._probe_items_fit:
            attributes = self._cp.cuda.Device().attributes
            kernel = get_function(_PLAN_PROBE_CU, name, scaling_macros())
            static = kernel.shared_size_bytes
            fits = (
                static + _probe_items_shared(planes) <= attributes["MaxSharedMemoryPerBlockOptin"]
            )
            registers = -(-kernel.num_regs // 8) * 8 * _PROBE_THREADS  # (8-register granules)
            self._probe_items_fit[key] = fits * min(
                attributes["MaxSharedMemoryPerMultiprocessor"] // (static + stage + 1024),
                attributes["MaxRegistersPerMultiprocessor"] // registers,
                attributes["MaxThreadsPerMultiProcessor"] // _PROBE_THREADS,
            )
        return self._probe_items_fit[key]

    def _probe_kernel(self, name: str, shared: int = 0) -> Any:
        """The launcher of ``gemm/plan_probe.cu``'s kernel ``name``; ``shared``: the most
        dynamic shared bytes it is ever launched with (the same for every call of the
        name: the rows kernels' staged columns of B, past the 48 KB default)."""
        signature = _PROBE_SIGNATURES[name]
        return self._named_kernel(_PLAN_PROBE_CU, name, scaling_macros(), signature, shared)

    # -- the FP8 Phase A -------------------------------------------------------------
    def _require_fp8_tensor_cores(self) -> None:
        """An FP8 residue system needs e4m3 tensor cores (``mma.sync`` e4m3: sm_89 on)."""
        check_fp8_tensor_cores(compute_capability())

    def _fp8_residues(
        self, x: Any, shift: Any, system: ResidueSystem, rounding: str
    ) -> ResidueStack:
        """e4m3 digit planes ``(N, planes, D, ..., rows, kp)`` (``D = max(digits)``, ``kp``
        a multiple of the FP8 kernel's k-step): digit ``j`` of the symmetric residue of
        the scaled integers (``trunc(2**shift x)``, or their ``rounding``) modulo each
        ``m_i = s_i**d_i`` (``gemm/fp8_residues.cu``; the NumPy engine's residues, split
        as :meth:`ResidueSystem.split_array`)."""
        self._require_fp8_tensor_cores()
        # fp8_macros checks what the kernels assume of the system
        macros = fp8_macros(system) | rounding_macros(rounding)
        cp = self._cp
        flat, rows, k, parts = self._as_rows(x)
        kp = fp8_pad_k(k)
        nplanes = 3 if parts == 2 else 1
        digits = max(system.digits)
        shape = (system.count, nplanes, digits, rows, kp)
        planes = self._alloc("FP8 digit planes", shape, cp.uint8, int(np.prod(shape)))
        name = "oz_fp8_residues_complex" if parts == 2 else "oz_fp8_residues_real"
        self._launch_residues(_FP8_RESIDUES_CU, name, macros, flat, rows, k, kp, shift, planes)
        return ResidueStack(
            planes.reshape(system.count, nplanes, digits, *x.shape[:-1], kp),
            is_complex=parts == 2,
        )

    def _fp8_operands(self, ra: ResidueStack, rbt: ResidueStack, system: ResidueSystem):
        """The digit planes as ``(N, planes, D, batch, rows, kp)`` arrays, the batch shape,
        m, n and kp; a stack that is not the system's FP8 digit planes is an error."""
        digits = max(system.digits)
        shapes = []
        for stack in (ra, rbt):
            planes = stack.planes
            want = (system.count, 3 if stack.is_complex else 1, digits)
            if planes.ndim < 5 or planes.dtype != self._cp.uint8 or planes.shape[:3] != want:
                raise ValueError(
                    f"not the FP8 digit planes of this system: shape {planes.shape}, dtype "
                    f"{planes.dtype} (expected uint8 {want} + (..., rows, kp), from residues())"
                )
            shapes.append(planes.shape)
        (*_, m, kp), (*_, n, kp_b) = shapes
        batch_shape = tuple(shapes[0][3:-2])
        if kp != kp_b or batch_shape != tuple(shapes[1][3:-2]):
            raise ValueError(f"FP8 digit planes of different k or batch: {shapes[0]}, {shapes[1]}")
        batch = int(np.prod(batch_shape)) if batch_shape else 1
        pa = self._cp.ascontiguousarray(ra.planes).reshape(*shapes[0][:3], batch, m, kp)
        pb = self._cp.ascontiguousarray(rbt.planes).reshape(*shapes[1][:3], batch, n, kp)
        return pa, pb, batch_shape, m, n, kp

    def _fp8_phase_a(
        self,
        system: ResidueSystem,
        pa: Any,
        pb: Any,
        pairs: tuple[tuple[int, int], ...],
        c: Any,
        ldc: int,
        *,
        items: int,
        item0: int = 0,
        col0: int = 0,
        cols: int | None = None,
    ) -> None:
        """Launch ``gemm/fp8_phase_a.cu``: INT32 residues in ``[0, m_i)`` of every product
        ``pairs[t]`` (A plane, Bt plane) of items ``item0 .. item0 + items`` and Bt rows
        (output columns) ``col0 .. col0 + cols`` into ``c``: ``[item][modulus][product][m]
        [ldc]`` (the item stride is ``count * products * m * ldc``; one item: no stride)."""
        count, nplanes, _, batch, m, kp = pa.shape
        n = pb.shape[4]
        cols = n - col0 if cols is None else cols
        nprod = len(pairs)
        code = sum((ia | ib << 2) << (4 * t) for t, (ia, ib) in enumerate(pairs))
        tiles = -(-m // FP8_TILE_M) * -(-cols // FP8_TILE_N)
        if tiles == 0 or items == 0:
            return
        if tiles >= 1 << 31:
            raise ValueError(f"an {m} x {cols} FP8 product has too many output tiles")
        kernel = get_function(_FP8_PHASE_A_CU, "oz_fp8_phase_a", fp8_macros(system))
        per_item = count * nprod
        c_item = per_item * m * ldc
        chunk = max(1, _GRID_Z // per_item)
        for i0 in range(item0, item0 + items, chunk):
            n_items = min(chunk, item0 + items - i0)
            kernel(
                (tiles, 1, n_items * per_item),
                (_FP8_THREADS,),
                (
                    np.uint64(pa.data.ptr + i0 * m * kp),
                    np.uint64(pb.data.ptr + (i0 * n + col0) * kp),
                    np.int64(m),
                    np.int64(cols),
                    np.int64(kp),
                    np.int64(batch * m * kp),
                    np.int64(batch * n * kp),
                    np.int64(m * kp),
                    np.int64(n * kp),
                    np.int32(nplanes),
                    np.int32(nprod),
                    np.int32(code),
                    np.uint64(c.data.ptr + (i0 - item0) * c_item * c.itemsize),
                    np.int64(ldc),
                    np.int64(c_item),
                ),
            )

    def modular_products(
        self,
        ra: ResidueStack,
        rbt: ResidueStack,
        moduli: ResidueSystem,
        *,
        complex_method: str = "karatsuba",
    ) -> Any:
        """Phase A of an FP8 residue system alone, as the NumPy engine's
        ``modular_products``: ``(N, [2,] ..., m, n)`` residues ``u_i`` of the product, uint16
        (uint8 when every modulus is at most 256), for checks and probes; the products of
        :meth:`exact_product` go to Phase B block by block instead."""
        if moduli.phase_a != "fp8":
            raise NotImplementedError("modular_products runs the FP8 Phase A only")
        cp = self._cp
        self._require_fp8_tensor_cores()
        products = _products(ra, rbt, moduli, complex_method)
        pa, pb, batch_shape, m, n, _ = self._fp8_operands(ra, rbt, moduli)
        batch = pa.shape[3]
        pairs = _PRODUCT_PLANES[products]
        planes = cp.zeros((batch, moduli.count, products, m, n), cp.int32)
        with phase("phase_a", self._clock):
            self._fp8_phase_a(moduli, pa, pb, pairs, planes, n, items=batch)
        t = cp.moveaxis(planes, 0, 2)  # (N, products, batch, m, n)
        p = cp.asarray(np.array(moduli.moduli, np.int32)).reshape(-1, 1, 1, 1)
        if not ra.is_complex:
            u = t[:, 0]
        elif products == 3:
            u = cp.stack([(t[:, 0] - t[:, 1]) % p, (t[:, 2] - t[:, 0] - t[:, 1]) % p], axis=1)
        else:
            u = cp.stack([(t[:, 0] - t[:, 1]) % p, (t[:, 2] + t[:, 3]) % p], axis=1)
        dtype = cp.uint8 if max(moduli.moduli) <= 256 else cp.uint16
        return u.astype(dtype).reshape(*u.shape[:-3], *batch_shape, m, n)

    def _fp8_exact_product(
        self,
        ra: ResidueStack,
        rbt: ResidueStack,
        shift_a: Any,
        shift_b: Any,
        system: ResidueSystem,
        out_dtype: Any,
        *,
        complex_method: str,
    ) -> Any:
        """:meth:`exact_product` with the FP8 Phase A: the FP8 kernel writes each column
        block's INT32 residue planes (its k-blocks are reduced inside it, so one plane set
        suffices for any k), then Phase B with the system's constants; a stack of whole
        products runs as one launch of each, as the INT8 path's stacked products."""
        cp = self._cp
        self._require_fp8_tensor_cores()
        products = _products(ra, rbt, system, complex_method)
        out_dtype = np.dtype(out_dtype)
        pa, pb, batch_shape, m, n, kp = self._fp8_operands(ra, rbt, system)
        count, batch = system.count, pa.shape[3]
        sa = cp.ascontiguousarray(shift_a.reshape(batch, m).astype(cp.int32, copy=False))
        sb = cp.ascontiguousarray(shift_b.reshape(batch, n).astype(cp.int32, copy=False))
        # one set of INT32 planes whatever k (no k-block planes): plan as for k <= K_BLOCK
        budget = self._block_budget(batch, m, n, out_dtype)
        ws = self.gemm_workspace(
            batch, m, n, min(kp, K_BLOCK), count, ra.is_complex, products, False, out_dtype,
            block_budget=budget,
        )  # fmt: skip
        self._require_column_block(ws, f"an emulated {m}x{kp}x{n} FP8 product with {count} moduli")
        ldc, pairs = ws.ldc, _PRODUCT_PLANES[products]
        macros = fp8_phase_b_macros(system, out_float=_binary32(out_dtype))
        reconstruct = _reconstruct_kernel(macros, ra.is_complex)
        if self._stacked_fits(batch, count, products, m, n, ws, False, budget):
            out = cp.empty((batch, m, n), out_dtype)
            planes = self._stacked_planes((batch, count, products, m, ldc))
            with phase("phase_a", self._clock):
                self._fp8_phase_a(system, pa, pb, pairs, planes, ldc, items=batch)
            with phase("phase_b", self._clock):
                _stacked_phase_b(
                    reconstruct, planes, ldc, products, ra.is_complex, sa, sb, out,
                    plane=m * ldc, item=count * products * m * ldc,
                )  # fmt: skip
            return out.reshape(*batch_shape, m, n)

        def fill(planes: Any, b: int, j0: int, nb: int) -> None:
            self._fp8_phase_a(system, pa, pb, pairs, planes, ldc, items=1, item0=b, col0=j0,
                              cols=nb)  # fmt: skip

        blocks = _BlockPhaseA("FP8", ws, cp.int32, reconstruct, 1, fill)
        out = self._by_column_blocks(blocks, sa, sb, (count, batch, m, n), pairs, out_dtype,
                                     ra.is_complex)  # fmt: skip
        return out.reshape(*batch_shape, m, n)

    def _stacked_planes(self, shape: tuple[int, ...]) -> Any:
        """INT32 Phase-A planes of a stack of products (``m x ldc`` planes of every item,
        modulus and product, in the order ``shape`` names)."""
        return self._alloc("stacked Phase-A planes", shape, self._cp.int32, 4 * math.prod(shape))

    def _stacked_fits(self, batch, count, products, m, n, ws, kblocked, budget) -> bool:
        """Whether a stack of products runs as one batch: whole products (one column
        block, no k-blocking) whose INT32 planes for every item fit ``budget`` bytes."""
        if batch < 2 or kblocked or ws.col_block != n:
            return False
        return batch * count * products * m * ws.ldc * 4 <= budget

    def _require_column_block(self, ws: GemmWorkspace, what: str) -> None:
        """Raise :class:`DeviceMemoryError` for ``what`` where not even one column block's
        planes fit (``ws.col_block == 0``)."""
        if ws.col_block == 0:
            raise DeviceMemoryError(what, ws.total_bytes, self._free_bytes())

    def _block_budget(self, batch: int, m: int, n: int, out_dtype: Any) -> int:
        """Bytes for INT32 Phase-A planes: half the free device memory less the output,
        capped by ``OZFFT_WORKSPACE``."""
        budget = self._free_bytes() // 2 - batch * m * n * np.dtype(out_dtype).itemsize
        limit = config.workspace_limit()
        return budget if limit is None else min(budget, limit)

    def _stacked_product(self, pa, pb, sa, sb, out, count, pairs, reconstruct, is_complex, ws):
        """Phase A of every item, modulus and product of a stack in one strided-batched
        INT8 GEMM, Phase B as one launch per 65535 items (grid z): no loop over items,
        moduli or products.

        The planes are laid out ``[modulus][product][item][m][ldc]``: where product ``t``
        pairs plane ``t`` of both operands (real, Gaussian and Karatsuba products), the
        residue stacks ``[modulus][plane][item][rows][kp]`` and the INT32 planes advance by
        one fixed stride per (modulus, product, item), so one call covers them all. The
        four-product method (cross pairs) takes one call per modulus and product."""
        batch, m, kp = pa.shape[2], pa.shape[3], pa.shape[4]
        n = pb.shape[3]
        ldc, products = ws.ldc, len(pairs)
        planes = self._stacked_planes((count, products, batch, m, ldc))
        strides = (n * kp, m * kp, m * ldc)
        uniform = all(ia == ib == t for t, (ia, ib) in enumerate(pairs))
        with phase("phase_a", self._clock):
            if uniform and pa.shape[1] == pb.shape[1] == products:
                total = count * products * batch
                for g0 in range(0, total, _GEMM_BATCH):
                    self._gemm_s8(
                        n, m, kp, pb.data.ptr + g0 * n * kp, kp, pa.data.ptr + g0 * m * kp, kp,
                        planes.data.ptr + g0 * m * ldc * 4, ldc,
                        strides=strides, count=min(_GEMM_BATCH, total - g0),
                    )  # fmt: skip
            else:
                for i in range(count):
                    for t, (ia, ib) in enumerate(pairs):
                        self._gemm_s8(
                            n, m, kp, pb[i, ib].data.ptr, kp, pa[i, ia].data.ptr, kp,
                            planes[i, t].data.ptr, ldc, strides=strides, count=batch,
                        )  # fmt: skip
        with phase("phase_b", self._clock):
            _stacked_phase_b(
                reconstruct, planes, ldc, products, is_complex, sa, sb, out,
                plane=batch * m * ldc, item=m * ldc,
            )  # fmt: skip


@dataclass(frozen=True)
class _BlockPhaseA:
    """One product's Phase A, a column block at a time: the seam between this engine's
    Phase-A backends (cuBLAS INT8 GEMMs with INT32 planes, the CUTLASS kernel with byte
    planes, the FP8 kernel with INT32 planes) and the column-block loop they share
    (:meth:`CudaEngine._by_column_blocks`). ``fill(planes, item, col0, cols)`` writes the
    residues of columns ``col0 .. col0 + cols`` of one item into ``planes`` ``(N,
    products, m, ws.ldc)`` of ``plane_dtype``; ``reconstruct`` is the Phase B kernel that
    reads them, ``vec`` outputs a thread."""

    backend: str
    ws: GemmWorkspace
    plane_dtype: Any
    reconstruct: Any
    vec: int
    fill: Callable[[Any, int, int, int], None]


def _products(ra: ResidueStack, rbt: ResidueStack, moduli: Any, complex_method: str) -> int:
    """Phase-A products per modulus: 1 real; complex: 2 Gaussian, 3 Karatsuba, 4 four-product
    (:func:`~ozfft.engines.base.complex_products`)."""
    if ra.is_complex != rbt.is_complex:
        raise ValueError("both residue stacks must be real or both complex")
    return complex_products(moduli, complex_method) if ra.is_complex else 1


def _stats_launch(rows: int, width: int, sm_count: int) -> tuple[str, int, int]:
    """Kernel, threads per block and blocks of the row statistics (a block per row at a
    time). Rows wider than a block and at most :data:`STATS_CACHED` values per thread:
    ``oz_row_stats_cached``, one block of :data:`_STATS_THREADS` per SM, the row held in
    registers (read once). Wider rows: ``oz_row_stats``, two such blocks per SM (a row's
    second pass then finds it in L2). Short rows (stacks of small products): a block of
    the row's width rounded up to a power of two (at least a warp) and as many blocks as
    fill the SMs, so that no thread idles on a row it has no entry of. The statistics are
    order-free integer reductions: the same for any launch."""
    threads = min(_STATS_THREADS, max(32, 1 << (max(width, 1) - 1).bit_length()))
    if threads < width <= threads * STATS_CACHED:
        return "oz_row_stats_cached", threads, max(1, min(rows, sm_count))
    per_sm = max(2, 2048 // threads)
    return "oz_row_stats", threads, max(1, min(rows, per_sm * sm_count))


def _complex_tiles_per_block(items: int, row_tiles: int, col_tiles: int, sm_count: int) -> int:
    """Column tiles per block of the complex slices kernel (it forms A's slices once for
    them): ``SMALL_COMPLEX_TILES_PER_BLOCK`` where they divide evenly (an odd tile left
    to a block of its own kept the others waiting: 1000 x 64 x 96 ran 3-4 % slower) and the
    launch keeps at least two waves of blocks (two per SM), else 1."""
    per_block = SMALL_COMPLEX_TILES_PER_BLOCK
    if col_tiles % per_block or items * row_tiles * (col_tiles // per_block) < 4 * sm_count:
        return 1
    return per_block


def _small_operands(
    a: Any, bt: Any, max_k: int | None = SMALL_PRODUCT_K, *, any_layout: bool = False
) -> bool:
    """Whether the small-product kernels (and the plan probe) may read these prepared
    operands: switched on (``OZFFT_FUSED_SMALL``), ``0 < k <= max_k`` (None: any k),
    C-contiguous rows of float64 or complex128 in both (``any_layout``: ``bt`` in any
    layout, which the probe reads in place or prepares)."""
    operand = np.dtype(np.complex128 if a.dtype.kind == "c" else np.float64)
    k = a.shape[-1]
    return (
        config.fused_small_products()
        and 0 < k
        and (max_k is None or k <= max_k)
        and a.dtype == bt.dtype == operand
        and a.flags.c_contiguous
        and (any_layout or bt.flags.c_contiguous)
    )


def _rows_of_transposed(a: Any, bt: Any) -> Any | None:
    """B where ``bt`` is the transposed view of a C-contiguous B (``swapaxes(b, -1, -2)``)
    with ``a``'s dtype and batch shape, aligned to its entries (the kernels load a complex
    entry as one 16-byte double2), which the probe's rows kernel and the slices kernels
    (``OZ_SP_B_COLUMNS``) read in place; else None."""
    if bt.flags.c_contiguous or bt.ndim != a.ndim or bt.ndim < 2 or bt.dtype != a.dtype:
        return None
    b = bt.swapaxes(-1, -2)
    if not b.flags.c_contiguous or bt.shape[:-2] != a.shape[:-2]:
        return None
    return b if b.data.ptr % b.dtype.itemsize == 0 else None


def _sp_span_shift(m: int, n: int) -> int:
    """log2 of the tile rows one item takes in the small-product kernel: 6 (a 64-row tile
    per item and block), or for items of at most 32 (16) rows and columns 5 (4), so that a
    block computes two (four) of them on its tile's diagonal (``OZ_SP_TILE``)."""
    span = max(m, n)
    return 4 if span <= 16 else 5 if span <= 32 else 6


def _counts_check(cp: Any, counts: Any, *operands: str) -> Callable[[], None]:
    """The NaN/Inf test of a kernel's counts, two per operand (NaN, Inf; in the order of
    ``operands``), read by :func:`_read_async` (the caller waits for that kernel only, not
    for work queued after it). The check raises for the first operand with a non-finite
    entry."""
    read = _read_async(cp, counts, 2 * len(operands))

    def check() -> None:
        host = read()
        for i, operand in enumerate(operands):
            _raise_non_finite(operand, int(host[2 * i]), int(host[2 * i + 1]))

    return check


#: bytes of a kept page-locked read buffer (the probe's state head: 10 int64 values)
_READ_BYTES = 128


class _Kept(threading.local):
    """What the engine keeps per thread and device (events belong to a device; new ones,
    and page-locked buffers, cost ~10 µs of host time per call): :func:`_read_async`'s
    page-locked buffers and events, reused once read, and those of reads dropped unread
    (parked until their copy is done); :func:`_fork_point`'s events and
    the side stream (of the device's highest priority, so that its short kernels take SMs
    as the main stream's blocks retire); the small products' flagged NaN/Inf counts."""

    def __init__(self) -> None:
        self.reads: dict[int, list[tuple[np.ndarray, int, Any]]] = {}
        self.parked_reads: dict[int, list[tuple[np.ndarray, int, Any]]] = {}
        self.fork_events: dict[int, list[Any]] = {}
        self.side_streams: dict[int, Any] = {}
        self.counts: dict[int, FlaggedCounts] = {}


def _flagged_counts(cp: Any) -> FlaggedCounts:
    """The thread's :class:`~.flags.FlaggedCounts` of the current device (the small
    products' NaN/Inf counts)."""
    device = cp.cuda.runtime.getDevice()
    kept = _KEPT.counts.get(device)
    if kept is None:
        kept = _KEPT.counts[device] = FlaggedCounts(cp)
    return kept


_KEPT = _Kept()

#: a stream priority past every device's range (lower numbers are higher priorities)
_HIGHEST_PRIORITY = -(1 << 16)


def _fork_point(cp: Any) -> Callable[[], AbstractContextManager]:
    """The work queued on the current stream so far, as a point later work may start from
    on a side stream: returns ``side``, whose ``with side(): ...`` runs its body on the
    fork's device with the thread's side stream current, that stream waiting for the point
    first. Work queued on the current stream after the fork point does not delay the side
    stream's, nor the other way round; whoever queues side work waits for it before freeing
    what it reads. A body that raises waits for what it queued before the error goes on."""
    device = cp.cuda.runtime.getDevice()
    free = _KEPT.fork_events.setdefault(device, [])
    point = free.pop() if free else cp.cuda.Event(disable_timing=True)
    point.record(cp.cuda.get_current_stream())

    @contextmanager
    def side() -> Iterator[Any]:
        with cp.cuda.Device(device):
            stream = _KEPT.side_streams.get(device)
            if stream is None:  # (CUDA clamps a priority past the device's range to its end)
                stream = cp.cuda.Stream(non_blocking=True, priority=_HIGHEST_PRIORITY)
                _KEPT.side_streams[device] = stream
            stream.wait_event(point)
            try:
                with stream:
                    yield stream
            except BaseException:
                stream.synchronize()  # (nothing it reads is freed under it)
                raise
        free.append(point)  # (the wait took the point's state: the event may be recorded again)

    return side


def _read_async(cp: Any, values: Any, count: int) -> Callable[[], np.ndarray]:
    """The first ``count`` values of a device array, copied asynchronously into page-locked
    memory with an event behind the copy: the returned function waits for that event (the
    kernels queued before it), not for work queued since, and returns the host values (a
    copy: the page-locked buffer goes back to the thread's kept ones).

    A read dropped unread (its caller raised in between, say) parks its buffer until the
    copy is done, so that no page-locked memory goes back to cupy's pool while the copy
    may still write it; a later read takes the finished ones back."""
    import cupyx

    nbytes = count * values.dtype.itemsize
    device = cp.cuda.runtime.getDevice()
    free = _KEPT.reads.setdefault(device, [])
    parked = _KEPT.parked_reads.setdefault(device, [])
    for at in reversed(range(len(parked))):  # by place: any of them may be done first
        if parked[at][2].done:  # (a query: no wait)
            finished = parked.pop(at)
            if finished[0].nbytes == _READ_BYTES:
                free.append(finished)
    if free and nbytes <= _READ_BYTES:
        slot = free.pop()
    else:
        host = cupyx.empty_pinned((max(nbytes, _READ_BYTES),), np.uint8)
        slot = (host, host.ctypes.data, cp.cuda.Event(disable_timing=True))
    host, address, done = slot
    stream = cp.cuda.get_current_stream()
    cp.cuda.runtime.memcpyAsync(address, values.data.ptr, nbytes, _D2H, stream.ptr)
    done.record(stream)
    taken: list[np.ndarray] = []

    def read() -> np.ndarray:
        if not taken:
            done.synchronize()
            taken.append(host[:nbytes].view(values.dtype).copy())
            unread.detach()
            if host.nbytes == _READ_BYTES:
                free.append(slot)
        return taken[0]

    unread = weakref.finalize(read, parked.append, slot)
    unread.atexit = False  # (nothing to keep at exit)
    return read


def _stack_shifts(cp: Any, shift: Any, batch: int, rows: int) -> Any:
    """Row shifts ``(..., rows)`` as C-contiguous int32 memory of ``batch`` rows of ``rows``
    (the array itself where it is such memory already, whatever its shape: the kernels
    read its address)."""
    if shift.dtype == np.int32 and shift.flags.c_contiguous and shift.size == batch * rows:
        return shift
    return cp.ascontiguousarray(shift.reshape(batch, rows).astype(cp.int32, copy=False))


def _raise_non_finite(operand: str, nans: int, infs: int) -> None:
    """:class:`NonFiniteInputError` for ``operand`` if it has NaN or Inf entries."""
    if nans or infs:
        kinds = " and ".join(kind for kind, n in (("NaN", nans), ("Inf", infs)) if n)
        raise NonFiniteInputError(operand, nans + infs, kinds)


def _binary32(out_dtype: Any) -> bool:
    """Whether the result is binary32 (float32 or complex64): ``OZ_OUT_FLOAT``."""
    return out_dtype in (np.float32, np.complex64)


def _phase_b_vec(moduli: ResidueSystem, is_complex: bool, col_block: int) -> tuple[int, bool]:
    """Byte-plane Phase B's outputs a thread (``OZ_PB_VEC``) and whether it weights on
    ``dp4a``: four outputs a thread where the weighting is on ``dp4a`` (real products on
    INT8 moduli, complex ones on a Gaussian system), else ``_PB_VEC_REAL`` /
    ``_PB_VEC_COMPLEX``, else one: the first whose multiples the column blocks are (a
    thread writes all of its adjacent outputs; the last block is a multiple too, since the
    CUTLASS Phase A takes ``n`` in multiples of ``MODP_IGEMM_ALIGN``)."""
    if is_complex:
        choices = [(4, True)] if _PB_DP4A_COMPLEX and moduli.gaussian else []
        choices.append((_PB_VEC_COMPLEX, False))
    else:
        dp4a = _PB_DP4A and _PB_VEC_REAL == 4 and not moduli.gaussian
        choices = [(_PB_VEC_REAL, dp4a)]
    return next(((v, d) for v, d in choices if col_block % v == 0), (1, False))


def _reconstruct_kernel(
    macros: Macros, is_complex: bool, vec: int = 1, *, dp4a: bool = False
) -> Any:
    """Phase B's kernel (``gemm/phase_b.cu``) for real or complex outputs; ``vec > 1``:
    the byte planes' ``_vec`` kernel, ``vec`` adjacent outputs a thread (``OZ_PB_VEC``),
    with ``dp4a`` weighted on ``dp4a`` (``OZ_PB_DP4A``: ``macros`` from
    :func:`phase_b_macros` with ``dp4a_weights``)."""
    name = "oz_reconstruct_complex" if is_complex else "oz_reconstruct_real"
    if dp4a and (vec != 4 or "OZ_WEIGHT_BYTES" not in macros):
        raise ValueError("the dp4a weighting takes four outputs a thread and the weights' bytes")
    if dp4a and is_complex != ("OZ_GAUSSIAN" in macros):
        raise ValueError(
            "the dp4a weighting takes real products, or complex ones on a Gaussian system"
        )
    if vec > 1:
        macros, name = macros | {"OZ_PB_VEC": str(vec)}, name + "_vec"
        if dp4a:
            macros = macros | {"OZ_PB_DP4A": "1"}
    return get_function(_PHASE_B_CU, name, macros)


def _block_phase_b(reconstruct, cplanes, ldc, products, is_complex, sa, sb, out, b, j0, nb,
                   vec=1):  # fmt: skip
    """Phase B of item ``b``'s column block ``j0 .. j0 + nb`` from its planes ``(N,
    products, m, ldc)`` (``vec`` outputs a thread: the byte planes' ``_vec`` kernels)."""
    _, m, n = out.shape
    args = [cplanes, np.int64(m), np.int64(nb), np.int64(ldc), np.int64(m * ldc)]
    if is_complex:
        args.append(np.int32(products))
    out_ptr = out.data.ptr + (b * m * n + j0) * out.itemsize
    sb_ptr = sb.data.ptr + (b * n + j0) * sb.itemsize
    args += [sa[b], np.uint64(sb_ptr), np.uint64(out_ptr), np.int64(n)]
    args += [np.int64(0), np.int64(0), np.int64(0)]
    reconstruct(_grid_rows(-(-nb // vec), m), (_THREADS,), tuple(args))


def _stacked_phase_b(reconstruct, planes, ldc, products, is_complex, sa, sb, out, plane, item):
    """Phase B of a whole stack from its INT32 planes (``plane`` values between a modulus's
    or product's planes, ``item`` between items' first planes): one launch per 65535 items
    (grid z)."""
    batch, m, n = out.shape
    gx, gy = _grid_rows(n, m)
    for b0 in range(0, batch, _GRID_Z):
        items = min(_GRID_Z, batch - b0)
        first = planes.data.ptr + b0 * item * planes.itemsize
        args = [np.uint64(first), np.int64(m), np.int64(n), np.int64(ldc), np.int64(plane)]
        if is_complex:
            args.append(np.int32(products))
        args += [sa[b0], sb[b0], out[b0], np.int64(n)]
        args += [np.int64(item), np.int64(n), np.int64(m * n)]
        reconstruct((gx, gy, items), (_THREADS,), tuple(args))


def _require_int8(moduli: Any) -> None:
    """Where the CUDA engine has the INT8 Phase A only (``integer_residues``, the FFT's
    stage matrices; residues and exact_product take FP8 systems too): any other system is
    an error there (docs/numerics.md, "FP8 accumulation")."""
    if moduli.phase_a != "int8":
        raise NotImplementedError(
            f"the CUDA engine's integer residues (the Ozaki-II FFT stage path, moduli=) are "
            f"INT8 only; {moduli.phase_a!r} runs there on the NumPy engine"
        )
