"""``ozfft bench ceilings``: what this GPU and ozfft's own kernels reach.

* HBM copy bandwidth (bytes read + written, 2 GiB device-to-device copy);
* INT8 tensor-core GEMM: cuBLAS ``gemmEx`` (INT8 x INT8 -> INT32, the routine ozfft's
  Phase A uses), called here directly, because ``cupy.matmul`` on int8 does not use
  the tensor cores; this measures the library, not ozfft;
* FP8 GEMM (torch ``_scaled_mm``, when torch is installed);
* INT32 multiply-add and FP64 FMA rates from the probe kernels
  (``kernels/probes/ceilings.cu``);
* the rates of ozfft's residue and Phase-B kernels inside an emulated 8192³ ZGEMM,
  measured through the public API: ``ozfft.matmul`` on cupy arrays inside
  :func:`ozfft.profiling.profile_phases` (``n/a`` when the engine does not report a
  phase);
* the static SASS instruction counts of the Phase-B and residue kernels
  (``cuobjdump``) and, with ``ncu`` installed, the executed counts of
  :mod:`ozfft.bench.ncu_probe`, to cross-check the model (:mod:`ozfft.bench.model`).

CUDA events, warm-up, median of repeats.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from .model import phase_b_instructions, residue_fp64_ops
from .phases import profile_call
from .results import gpu_label
from .timing import median_ms

__all__ = [
    "PROBE_SOURCES",
    "CudaDataType",
    "hbm_copy_bandwidth",
    "int8_gemm_rate",
    "measure",
    "ncu_counts",
    "ozfft_kernel_rates",
    "sass_counts",
]


class CudaDataType(IntEnum):
    """``cudaDataType_t`` values of the CUDA Toolkit's ``library_types.h`` that
    ``gemmEx`` takes (cupy exposes the cuBLAS enums but not all data types)."""

    CUDA_R_8I = 3
    CUDA_R_32I = 10


#: kernel sources by their path in the kernels folder's area layout, then by their
#: earlier top-level name (the compiler accepts either, whichever layout is installed)
PROBE_SOURCES = ("probes/ceilings.cu", "ceilings.cu")
_PHASE_B_SOURCES = ("gemm/phase_b.cu", "phase_b.cu")
_RESIDUES_SOURCES = ("gemm/residues.cu", "residues.cu")

_T = TypeVar("_T")


class _EngineCompiler(NamedTuple):
    get_function: Callable[..., Any]
    cubin_path: Callable[..., Path]
    moduli_macros: Callable[..., Mapping[str, str]]


def _engine_compiler() -> _EngineCompiler:
    """The CUDA engine's public kernel accessors: the rate-probe kernels (``kernel``) and,
    for the SASS cross-check, the cubin of one of its own kernels specialized as it
    specializes them (``kernel_cubin`` + ``gemm_kernel_macros``)."""
    from ..engines.select import cuda_engine

    engine = cuda_engine()
    return _EngineCompiler(
        engine.kernel,
        engine.kernel_cubin,
        lambda moduli, *, with_limbs: engine.gemm_kernel_macros(
            moduli.count, with_limbs=with_limbs
        ),
    )


def _first_source(sources: Sequence[str], use: Callable[[str], _T]) -> _T:
    """``use(source)`` for the first of ``sources`` that exists (FileNotFoundError:
    try the next one)."""
    for source in sources[:-1]:
        try:
            return use(source)
        except FileNotFoundError:
            continue
    return use(sources[-1])


def _probe_function(name: str) -> Any:
    """Compiled probe kernel ``name`` (``probes/ceilings.cu``, or ``ceilings.cu``
    before the move)."""
    get_function = _engine_compiler().get_function
    return _first_source(PROBE_SOURCES, lambda source: get_function(source, name, {}))


def hbm_copy_bandwidth(cp: Any) -> float:
    """Bytes/s of a 2 GiB device-to-device copy, counting bytes read plus written."""
    a = cp.ones((2 << 30) // 8)
    b = cp.empty_like(a)
    ms = median_ms(cp, lambda: b.__setitem__(Ellipsis, a), 7, warm=1)
    return 2 * a.nbytes / (ms * 1e-3)


def int8_gemm_rate(cp: Any, n: int = 8192) -> float:
    """Integer ops/s (``2 n³`` per product) of cuBLAS ``gemmEx`` on ``n³`` INT8 operands
    with INT32 results and compute type ``CUBLAS_COMPUTE_32I`` (tensor cores)."""
    from cupy_backends.cuda.libs import cublas

    a = cp.random.randint(-128, 128, (n, n), dtype=cp.int8)
    b = cp.random.randint(-128, 128, (n, n), dtype=cp.int8)
    c = cp.empty((n, n), cp.int32)
    one = np.array(1, dtype=np.int32)  # alpha, beta: host scalars of the compute type
    zero = np.array(0, dtype=np.int32)
    handle = cp.cuda.device.get_cublas_handle()

    def product() -> None:
        # column-major C = A^T B ("TN": k-major operands, what IMMA wants for INT8)
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        cublas.gemmEx(
            handle,
            cublas.CUBLAS_OP_T,
            cublas.CUBLAS_OP_N,
            n,
            n,
            n,
            one.ctypes.data,
            a.data.ptr,
            CudaDataType.CUDA_R_8I,
            n,
            b.data.ptr,
            CudaDataType.CUDA_R_8I,
            n,
            zero.ctypes.data,
            c.data.ptr,
            CudaDataType.CUDA_R_32I,
            n,
            cublas.CUBLAS_COMPUTE_32I,
            cublas.CUBLAS_GEMM_DEFAULT,
        )

    ms = median_ms(cp, product, 7)
    return 2 * n**3 / (ms * 1e-3)


def _fp8_gemm(n: int = 8192) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t().contiguous().t()
    one = torch.tensor(1.0, device="cuda")

    def run() -> None:
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float32)

    for _ in range(3):
        run()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(7):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return 2 * n**3 / (float(np.median(times)) * 1e-3)


_MMA_OPS = 16 * 8 * 32 * 2
"""INT8 operations of one ``mma.sync.m16n8k32`` (a warp instruction)."""


def _alu(cp: Any, sm_count: int) -> dict[str, float]:
    """Rates of the pipe probes (``probes/ceilings.cu``; ``iters`` loop trips per thread):
    IMAD, DFMA and DP4A instructions/s (16 x 8 chains per trip), and the INT8 operations/s
    of ``mma.sync`` from registers (16 warp instructions per trip, eight accumulator tiles)."""
    blocks, threads, iters = sm_count * 16, 256, 4096
    out = {}
    for name, dtype, args, per_trip in (
        ("imad", cp.int32, (np.int32(3), np.int32(1)), 16 * 8),
        ("dfma", cp.float64, (np.float64(0.999), np.float64(1e-3)), 16 * 8),
        ("dp4a", cp.int32, (np.int32(0x01FF7F80), np.int32(1)), 16 * 8),
        ("imma", cp.int32, (np.int32(0x05F3117F), np.int32(0x7E80FF01)), 16 * _MMA_OPS / 32),
    ):
        kernel = _probe_function(f"oz_probe_{name}")
        buf = cp.empty(blocks * threads, dtype)
        ms = median_ms(
            cp,
            lambda k=kernel, b=buf, a=args: k((blocks,), (threads,), (b, *a, np.int32(iters))),
            5,
            warm=1,
        )
        out[name] = blocks * threads * iters * per_trip / (ms * 1e-3)
    return out


def sass_counts(
    sources: Sequence[str], function: str, num_moduli: int, *, with_limbs: bool
) -> dict | None:
    """Static SASS instruction histogram of ozfft kernel ``function`` (from the first
    existing of ``sources``) as the engine specializes it for ``num_moduli`` float64
    outputs (None without ``cuobjdump``)."""
    tool = shutil.which("cuobjdump")
    if tool is None:
        return None
    from ..ozaki.residue_system import int8_system

    compiler = _engine_compiler()
    macros = compiler.moduli_macros(int8_system(num_moduli), with_limbs=with_limbs)
    cubin = _first_source(sources, lambda source: compiler.cubin_path(source, macros))
    text = subprocess.run(
        [tool, "-sass", "-fun", function, str(cubin)], capture_output=True, text=True
    ).stdout
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", text)
    if not ops:
        return None
    hist = Counter(op.split(".")[0] for op in ops)
    return {"total": len(ops), "top": hist.most_common(12)}


def ozfft_kernel_rates(cp: Any, n: int = 8192, num_moduli: int = 16) -> dict[str, Any]:
    """Rates of ozfft's Karatsuba residue and Phase-B kernels inside an emulated ``n³``
    ZGEMM: the kernels of the unfused FFT stage path that the model prices (a ZGEMM through
    ``ozfft.matmul`` runs on Gaussian moduli instead, docs/numerics.md).

    From the profiled phase times of the product with ``complex_method="karatsuba"`` on
    cupy arrays (median of 3 after a warm-up call). With ``P = 3 N`` INT8 planes per
    complex element (re, im, re + im): residues move ``2 n² (16 + P)`` bytes (both
    operands, complex128 in, INT8 planes out); Phase B reads ``4 P`` bytes of INT32
    planes and writes 16 per complex output, ``n²`` outputs. None for a phase the engine
    does not report.
    """
    from ..engines.select import cuda_engine
    from ..reference import phi_matrix
    from ..scheme.gemm import emulated_matmul

    rng = np.random.default_rng(0)
    a = cp.asarray(phi_matrix(rng, (n, n), 0.5, np.complex128))
    b = cp.asarray(phi_matrix(rng, (n, n), 0.5, np.complex128))
    engine = cuda_engine()

    def product() -> Any:
        return emulated_matmul(
            engine,
            a,
            b,
            num_moduli=num_moduli,
            mode="fast",
            out_dtype=np.complex128,
            complex_method="karatsuba",
        )

    product()  # compile and warm up
    phases = profile_call(product, 3)
    planes = 3 * num_moduli
    residues_ms, phase_b_ms = phases["residues"], phases["phase_b"]
    return {
        "phases_ms": phases,
        "ozfft_residues_Bps": (
            None if residues_ms is None else 2 * n * n * (16 + planes) / (residues_ms * 1e-3)
        ),
        "ozfft_phase_b_outputs_per_s": None if phase_b_ms is None else n * n / (phase_b_ms * 1e-3),
        "ozfft_phase_b_Bps": (
            None if phase_b_ms is None else n * n * (4 * planes + 16) / (phase_b_ms * 1e-3)
        ),
    }


def measure(num_moduli: int = 16) -> dict:
    """All ceilings of the current GPU (needs cupy and a GPU)."""
    import cupy as cp

    sm_count = int(cp.cuda.Device().attributes["MultiProcessorCount"])
    result: dict[str, Any] = {
        "gpu": gpu_label(),
        "sms": sm_count,
        "hbm_Bps": hbm_copy_bandwidth(cp),
        "int8_gemm_ops": int8_gemm_rate(cp),
        "fp8_gemm_flops": _fp8_gemm(),
    }
    alu = _alu(cp, sm_count)
    result["int32_imad_ops"] = alu["imad"]
    result["fp64_fma_ops"] = alu["dfma"]
    result["int32_dp4a_ops"] = alu["dp4a"]
    result["int8_mma_sync_ops"] = alu["imma"]
    result.update(ozfft_kernel_rates(cp, 8192, num_moduli))
    result["sass"] = {
        "phase_b_per_complex_output": sass_counts(
            _PHASE_B_SOURCES, "oz_reconstruct_complex", num_moduli, with_limbs=True
        ),
        "phase_b_model": phase_b_instructions(num_moduli),
        "residues_per_4_elements": sass_counts(
            _RESIDUES_SOURCES, "oz_residues_complex", num_moduli, with_limbs=False
        ),
        "residues_model_fp64_per_element": residue_fp64_ops(num_moduli),
    }
    result["ncu"] = ncu_counts()
    return result


def ncu_counts(timeout: int = 300) -> dict | None:
    """Executed thread instructions per output of ozfft's kernels, measured with ncu on
    ``python -m ozfft.bench.ncu_probe`` (None without ncu or when counters are
    unavailable)."""
    from . import ncu_probe

    tool = shutil.which("ncu")
    if tool is None:
        return None
    cmd = [
        tool,
        "--clock-control",
        "none",
        "--metrics",
        "smsp__sass_thread_inst_executed.sum",
        "-k",
        "regex:oz_reconstruct_complex|oz_residues_complex",
        sys.executable,
        "-m",
        "ozfft.bench.ncu_probe",
    ]
    try:
        text = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    counts: dict[str, list[int]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\s+(oz_\w+) \(", line)
        if m:
            current = m.group(1)
        m = re.search(r"smsp__sass_thread_inst_executed.sum\s+inst\s+([\d,]+)", line)
        if m and current:
            counts.setdefault(current, []).append(int(m.group(1).replace(",", "")))
    if "oz_reconstruct_complex" not in counts:
        return None
    m_, k_, n_ = ncu_probe.SHAPE
    outputs = m_ * n_  # the probe's product
    residue_elements = m_ * k_  # per residue launch (A, then Bt)
    return {
        "phase_b_per_complex_output": counts["oz_reconstruct_complex"][0] / outputs,
        "residues_per_complex_element": (
            counts["oz_residues_complex"][0] / residue_elements
            if "oz_residues_complex" in counts
            else None
        ),
        "phase_b_model": phase_b_instructions(ncu_probe.NUM_MODULI),
    }
