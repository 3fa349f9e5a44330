"""``ozfft bench ceilings``: what this GPU and ozfft's own kernels reach.

HBM copy bandwidth (bytes read + written), INT8 tensor-core GEMM (cuBLAS ``gemmEx``,
the call ozfft's Phase A makes), FP8 GEMM (torch ``_scaled_mm``, when torch is
installed), INT32 multiply-add and FP64 FMA rates (``kernels/ceilings.cu``), and the
rates of ozfft's residue and Phase-B kernels inside an 8192³ emulated DGEMM. CUDA
events, warm-up, median of repeats. Also counts the SASS instructions of the Phase-B
and residue kernels (``cuobjdump``) to cross-check the model's per-element counts.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter

import numpy as np

from .model import phase_b_instructions, residue_fp64_ops
from .timing import median_ms

__all__ = ["hbm_copy_bandwidth", "measure", "ncu_counts", "sass_counts"]


def hbm_copy_bandwidth(cp) -> float:
    """Bytes/s of a 2 GiB device-to-device copy, counting bytes read plus written."""
    a = cp.ones((2 << 30) // 8)
    b = cp.empty_like(a)
    ms = median_ms(cp, lambda: b.__setitem__(Ellipsis, a), 7, warm=1)
    return 2 * a.nbytes / (ms * 1e-3)


def _int8_gemm(cp, engine, n: int = 8192) -> float:
    a = cp.random.randint(-128, 128, (n, n), dtype=cp.int8)
    b = cp.random.randint(-128, 128, (n, n), dtype=cp.int8)
    c = cp.empty((n, n), cp.int32)
    ms = median_ms(
        cp, lambda: engine._gemm_s8(n, n, n, b.data.ptr, n, a.data.ptr, n, c.data.ptr, n), 7
    )
    return 2 * n**3 / (ms * 1e-3)


def _fp8_gemm(n: int = 8192) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t().contiguous().t()
    one = torch.tensor(1.0, device="cuda")

    def run():
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


def _alu(cp, sm_count: int) -> dict[str, float]:
    from ..engines.cuda.compiler import get_function

    blocks, threads, iters = sm_count * 16, 256, 4096
    out = {}
    for name, dtype, args in (
        ("imad", cp.int32, (np.int32(3), np.int32(1))),
        ("dfma", cp.float64, (np.float64(0.999), np.float64(1e-3))),
    ):
        kernel = get_function("ceilings.cu", f"oz_probe_{name}", {})
        buf = cp.empty(blocks * threads, dtype)
        ms = median_ms(
            cp,
            lambda k=kernel, b=buf, a=args: k((blocks,), (threads,), (b, *a, np.int32(iters))),
            5,
            warm=1,
        )
        out[name] = blocks * threads * iters * 16 * 8 / (ms * 1e-3)
    return out


def sass_counts(source: str, function: str, macros: dict[str, str]) -> dict | None:
    """Static SASS instruction histogram of one kernel (None without cuobjdump)."""
    tool = shutil.which("cuobjdump")
    if tool is None:
        return None
    from ..engines.cuda.compiler import cubin_path

    cubin = cubin_path(source, macros)
    text = subprocess.run(
        [tool, "-sass", "-fun", function, str(cubin)], capture_output=True, text=True
    ).stdout
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", text)
    if not ops:
        return None
    hist = Counter(op.split(".")[0] for op in ops)
    return {"total": len(ops), "top": hist.most_common(12)}


def measure(num_moduli: int = 16) -> dict:
    """All ceilings of the current GPU (needs cupy and a GPU)."""
    import cupy as cp

    from ..engines.cuda.constants import moduli_macros
    from ..engines.select import cuda_engine
    from ..ozaki.moduli import moduli_set
    from ..reference import phi_matrix

    engine = cuda_engine()
    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    sm_count = props["multiProcessorCount"]
    result = {
        "gpu": gpu,
        "sms": sm_count,
        "hbm_Bps": hbm_copy_bandwidth(cp),
        "int8_gemm_ops": _int8_gemm(cp, engine),
        "fp8_gemm_flops": _fp8_gemm(),
    }
    alu = _alu(cp, sm_count)
    result["int32_imad_ops"] = alu["imad"]
    result["fp64_fma_ops"] = alu["dfma"]

    # ozfft's own kernels inside an emulated 8192^3 complex GEMM
    from .gemm import _phases

    n = 8192
    rng = np.random.default_rng(0)
    a = cp.asarray(phi_matrix(rng, (n, n), 0.5, np.complex128))
    b = cp.asarray(phi_matrix(rng, (n, n), 0.5, np.complex128))
    _phases(cp, engine, a, b, num_moduli, "fast", np.dtype(np.complex128))  # warm-up/compile
    phases = _phases(cp, engine, a, b, num_moduli, "fast", np.dtype(np.complex128))
    planes = 3 * num_moduli
    elements = 2 * n * n  # both operands
    result["ozfft_residues_Bps"] = elements * (16 + planes) / (phases["residues"] * 1e-3)
    result["ozfft_phase_b_outputs_per_s"] = n * n / (phases["phase_b"] * 1e-3)
    result["ozfft_phase_b_Bps"] = n * n * (4 * planes + 16) / (phases["phase_b"] * 1e-3)
    result["phases_ms"] = phases

    macros = moduli_macros(moduli_set(num_moduli), with_limbs=True)
    sass_b = sass_counts("phase_b.cu", "oz_reconstruct_complex", macros)
    sass_r = sass_counts(
        "residues.cu",
        "oz_residues_complex",
        moduli_macros(moduli_set(num_moduli), with_limbs=False),
    )
    result["sass"] = {
        "phase_b_per_complex_output": sass_b,
        "phase_b_model": phase_b_instructions(num_moduli),
        "residues_per_4_elements": sass_r,
        "residues_model_fp64_per_element": residue_fp64_ops(num_moduli),
    }
    result["ncu"] = ncu_counts()
    return result


def ncu_counts(timeout: int = 300) -> dict | None:
    """Executed thread instructions per output of ozfft's kernels, measured with ncu on
    :mod:`ozfft.bench.ncu_probe` (None without ncu or when counters are unavailable)."""
    import os
    import sys

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
    outputs = 1024 * 1024  # the probe's product
    residue_elements = 1024 * 64  # per residue launch (A, then Bt)
    return {
        "phase_b_per_complex_output": counts["oz_reconstruct_complex"][0] / outputs,
        "residues_per_complex_element": (
            counts["oz_residues_complex"][0] / residue_elements
            if "oz_residues_complex" in counts
            else None
        ),
        "phase_b_model": phase_b_instructions(16),
    }
