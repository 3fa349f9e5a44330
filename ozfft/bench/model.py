"""Bandwidth-floor model of ozfft's 3-D FFT, from ozfft's own implementation.

Per complex element and per axis pass (one 1-D transform of every line along an axis)
for a stage of size ``k`` with ``N`` moduli, the unfused CUDA path executes:

* tensor-core integer ops: ``3 N 2 k`` (Karatsuba: three INT8 GEMMs per modulus);
* INT32-pipe instructions in Phase B (``phase_b.cu``, one complex output): per modulus
  3 loads, 5 constant-divisor reductions, and per part ``L`` limb multiply-adds
  (2 instructions each); per part a fixed cost for carries, quotient, corrections and
  the rounding (``PHASE_B_FIXED``);
* FP64-pipe operations in the residue kernel (``residues.cu``): the digit split of both
  parts plus, per modulus, 2 FMAs per part and 5 for each exact reduction (3 per
  modulus: re, im, re+im);
* bytes: ``BYTES_FUSED = 32`` (read and write the element once — the memory roof), and
  the unfused path's traffic (row statistics, transposed copies, INT8 residue planes,
  INT32 Phase-A planes, result).

A unit keeps the transform at the memory roof iff its rate is at least
``ops_per_element / 32 B * B_HBM``: that multiple of ``B_HBM`` is the unit's *floor*.
A native radix FFT needs ``5 log2(n)`` flops per element and pass (the usual
``5 n log2 n`` flop count of a length-``n`` FFT), the floor ``5 log2 n / 32`` (1.56 for
n = 1024). The projected 1024³ time is the largest of the memory roof and each unit's
time (full overlap assumed).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..fourier.plan import factorize
from ..ozaki.moduli import moduli_set

__all__ = [
    "BYTES_FUSED",
    "GPUS",
    "GPUSpec",
    "PassCounts",
    "fft_pass_counts",
    "floors",
    "native_fft_flops_per_element",
    "phase_b_instructions",
    "project",
    "residue_fp64_ops",
]

BYTES_FUSED = 32  #: complex128 read + write per element and pass
#: Phase B fixed instructions per real output: carry propagation, quotient estimate,
#: exact +-P corrections, sign/magnitude, rounding and store. Calibrated so that the
#: model equals the executed count measured with ncu on an H200 (2026-11-21, 16 moduli:
#: 1761 thread instructions per complex output of oz_reconstruct_complex).
PHASE_B_FIXED_PER_LIMB = 22
PHASE_B_FIXED = 266
#: constant-divisor modulo of an int32 (mul-hi, shifts, multiply-subtract, sign fix)
MOD_INSTRUCTIONS = 8
#: executed instructions of oz_residues_complex per complex element at 16 moduli (ncu,
#: H200, 2026-11-21): the FP64 operations of the model plus conversions, stores, indexing
RESIDUES_EXECUTED_16 = 770


def _limbs32(num_moduli: int) -> int:
    m = moduli_set(num_moduli)
    return -(-((m.count * 256 * m.product).bit_length() + 1) // 32)


def phase_b_instructions(num_moduli: int) -> int:
    """Modelled INT32-pipe instructions of ``oz_reconstruct_complex`` per complex output."""
    limbs = _limbs32(num_moduli)
    per_modulus = 3 + 5 * MOD_INSTRUCTIONS  # 3 loads; t1, t2, t3, Re, Im reductions
    per_part = 2 * num_moduli * limbs + PHASE_B_FIXED_PER_LIMB * limbs + PHASE_B_FIXED
    return num_moduli * per_modulus + 2 * per_part


def residue_fp64_ops(num_moduli: int) -> int:
    """Modelled FP64 operations of ``oz_residues_complex`` per complex element."""
    digits = 2 * 8  # scalbn, trunc and two exact subtractions per 24-bit digit, both parts
    return digits + num_moduli * (2 * 2 + 3 * 5)


def native_fft_flops_per_element(n: int) -> float:
    """Radix-2 operation count of a length-n complex FFT, per element: 5 log2 n."""
    return 5 * math.log2(n)


@dataclass(frozen=True)
class PassCounts:
    """What one axis pass of the unfused CUDA path executes per complex element."""

    n: int
    num_moduli: int
    stages: list
    tc_ops: int
    int32_instr: int
    fp64_ops: int
    bytes_unfused: int
    bytes_fused: int = BYTES_FUSED


def fft_pass_counts(n: int, num_moduli: int = 16, radices: list[int] | None = None) -> PassCounts:
    """Counts per element for one axis of length ``n`` as ozfft plans it today (or with
    the given ``radices``)."""
    stages = list(radices) if radices is not None else factorize(n) or []
    if not stages:  # Bluestein: three power-of-two passes of length m >= 2n - 1
        m = 1 << math.ceil(math.log2(2 * n - 1))
        inner = fft_pass_counts(m, num_moduli)
        return PassCounts(
            n,
            num_moduli,
            ["bluestein", *inner.stages],
            2 * inner.tc_ops,
            2 * inner.int32_instr,
            2 * inner.fp64_ops,
            2 * inner.bytes_unfused,
        )
    tc = sum(3 * num_moduli * 2 * r for r in stages)
    planes = 3 * num_moduli
    per_stage_bytes = (
        16 * 2
        + 16 * 2  # row statistics read twice, transposed operand copy (r + w)
        + 16
        + planes  # residue kernel: read, write INT8 planes
        + planes
        + 4 * planes  # GEMMs: read residues, write INT32 planes
        + 4 * planes
        + 16  # Phase B: read INT32 planes, write the result
        + 2 * 32  # executor regrouping before and after the stage
    )
    stage_count = len(stages)
    return PassCounts(
        n,
        num_moduli,
        stages,
        tc,
        stage_count * phase_b_instructions(num_moduli),
        stage_count * residue_fp64_ops(num_moduli),
        stage_count * per_stage_bytes,
    )


@dataclass(frozen=True)
class GPUSpec:
    """Datasheet rates (per second); None where the cited source gives none."""

    name: str
    hbm_TBps: float
    fp64_TFLOPS: float | None
    int8_TOPS: float | None
    fp8_TFLOPS: float | None
    int32_Tops: float | None
    source: str


#: Datasheet values. INT32 = SMs x INT32 lanes per SM x boost clock where the
#: architecture whitepaper gives the lanes; None where no public source states it.
GPUS: tuple[GPUSpec, ...] = (
    GPUSpec(
        "H100 SXM",
        3.35,
        34.0,
        1979.0,
        1979.0,
        132 * 64 * 1.98e-3,
        "NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100); Hopper whitepaper: "
        "132 SMs, 64 INT32 lanes/SM, 1.98 GHz",
    ),
    GPUSpec(
        "H200 SXM",
        4.8,
        34.0,
        1979.0,
        1979.0,
        132 * 64 * 1.98e-3,
        "NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200); SMs and lanes as H100",
    ),
    GPUSpec(
        "GH200 (HBM3e)",
        4.9,
        34.0,
        1979.0,
        1979.0,
        132 * 64 * 1.98e-3,
        "NVIDIA GH200 Grace Hopper datasheet (nvidia.com/en-us/data-center/"
        "grace-hopper-superchip); GPU as H100",
    ),
    GPUSpec(
        "B200",
        8.0,
        40.0,
        4500.0,
        4500.0,
        None,
        "NVIDIA DGX/HGX B200 datasheet (nvidia.com/en-us/data-center/dgx-b200), dense "
        "rates; FP64 and HBM per GPU from the same datasheet",
    ),
    GPUSpec(
        "B300",
        8.0,
        1.3,
        None,
        4500.0,
        None,
        "NVIDIA Blackwell Ultra (B300) announcement: ~1.3 TFLOP/s FP64, 8 TB/s, dense FP8",
    ),
    GPUSpec(
        "Rubin (R200)",
        22.0,
        33.0,
        None,
        None,
        None,
        "NVIDIA's Vera Rubin platform blog (2026) and G. K. Lockwood's R200 notes "
        "(33 TF FP64, 22 TB/s)",
    ),
    GPUSpec(
        "MI300X",
        5.3,
        81.7,
        2614.9,
        2614.9,
        None,
        "AMD Instinct MI300X datasheet (amd.com/en/products/accelerators/instinct/"
        "mi300/mi300x.html), dense rates",
    ),
    GPUSpec(
        "RTX 5080",
        0.96,
        0.88,
        None,
        None,
        None,
        "NVIDIA GeForce RTX 5080 specifications (nvidia.com, 30 Gbps GDDR7 x 256 bit); "
        "FP64 = 1/64 of 56.3 TFLOP/s FP32 (Blackwell GeForce whitepaper)",
    ),
)


def floors(
    n: int = 1024, num_moduli: int = 16, radices: list[int] | None = None
) -> dict[str, float]:
    """Each unit's floor as a multiple of ``B_HBM`` (ops per fused byte)."""
    c = fft_pass_counts(n, num_moduli, radices)
    return {
        "native_fp64": native_fft_flops_per_element(n) / BYTES_FUSED,
        "tensor_int8": c.tc_ops / BYTES_FUSED,
        "int32": c.int32_instr / BYTES_FUSED,
        "fp64_residues": c.fp64_ops / BYTES_FUSED,
        "unfused_bytes_over_fused": c.bytes_unfused / BYTES_FUSED,
    }


def project(
    gpu: GPUSpec, n: int = 1024, num_moduli: int = 16, radices: list[int] | None = None
) -> dict:
    """Projected 3-D n³ FFT times (ms) on ``gpu`` for native FP64 and for ozfft."""
    elements = n**3
    passes = 3
    bw = gpu.hbm_TBps * 1e12
    c = fft_pass_counts(n, num_moduli, radices)
    roof = passes * elements * BYTES_FUSED / bw * 1e3

    def t(ops_per_element, rate):
        return None if rate is None else passes * elements * ops_per_element / rate * 1e3

    native = t(native_fft_flops_per_element(n), gpu.fp64_TFLOPS and gpu.fp64_TFLOPS * 1e12)
    parts = {
        "tensor_int8": t(c.tc_ops, gpu.int8_TOPS and gpu.int8_TOPS * 1e12),
        "int32": t(c.int32_instr, gpu.int32_Tops and gpu.int32_Tops * 1e12),
        "fp64_residues": t(c.fp64_ops, gpu.fp64_TFLOPS and gpu.fp64_TFLOPS * 1e12),
        "unfused_bytes": passes * elements * c.bytes_unfused / bw * 1e3,
    }
    known = [v for v in parts.values() if v is not None]
    fused_known = [v for k, v in parts.items() if v is not None and k != "unfused_bytes"]
    return {
        "gpu": gpu.name,
        "n": n,
        "moduli": num_moduli,
        "radices": c.stages,
        "roof_ms": roof,
        "native_fp64_ms": None if native is None else max(roof, native),
        "ozfft_unfused_ms": max([roof, *known]),
        "ozfft_fused_ms": max([roof, *fused_known]),
        "parts_ms": parts,
        "complete": all(v is not None for v in parts.values()),
        "spec": asdict(gpu),
    }
