"""Bandwidth-floor model of ozfft's 3-D FFT, from ozfft's own implementation.

Two models, per complex element and per axis pass (one 1-D transform of every line
along an axis):

**The fused fixed-point pass** (what the GPU runs: ``kernels/fft/fixed_pass.cu``, one
kernel per pass, one pass per axis for ``n <= 1024``, four-step passes beyond; numerics
in :mod:`ozfft.ozaki.fixed_point`), for the plan's radices ``r_1 .. r_s``
(:func:`ozfft.fourier.plan.fixed_point_radices`):

* bytes: ``BYTES_FUSED = 32`` (16 read + 16 written: the memory roof);
* tensor-core work: a stage issues ``fixed_stage_mmas(r)`` INT8 MMAs per task, a task
  being ``r`` elements of each of ``MMA_LINES = 8`` lines (the MMA's N), so
  ``sum_i fixed_stage_mmas(r_i) / (8 r_i)`` MMAs per complex element: m16n8k16 (2048
  MACs, 4096 ops) where ``2 r <= 16``, m16n8k32 (4096 MACs, ``MMA_OPS = 8192`` ops)
  beyond (n = 512 = 8·8·8: 3 × 41 / 64 = 1.92 m16n8k16 = 7,872 ops);
* integer instructions: ``FUSED_INT_ENTRY_EXIT + s * FUSED_INT_PER_STAGE``
  (+ ``FUSED_INT_TWIDDLE`` in the twiddled row pass of a four-step plan). The per-stage
  constant is the integer part of the stage loop of the sm_90 build, which is
  straight-line code (all of it executes); the entry/exit constant is the rest of the
  executed integer count that ncu measured on an H200 for an n = 512 pass (see the
  constants below);
* no FP64 operation at all.

A four-step length needs no transpose: the twiddled row pass writes its result in
natural order.

**Unfused Ozaki-II stages** (the earlier path, ``moduli=N``): for a stage of size ``k``
with ``N`` moduli,

* tensor-core integer ops: ``3 N 2 k`` (Karatsuba: three INT8 GEMMs per modulus);
* INT32-pipe instructions in Phase B (``phase_b.cu``, one complex output): per modulus
  3 loads, 3 partial reductions and per part one multiply-add per base-2**31 weight
  digit; per part a cost per digit and a fixed one for carries, quotient, the +-P/2
  test and the rounding (``PHASE_B_FIXED_PER_DIGIT``, ``PHASE_B_FIXED``);
* FP64-pipe operations in the residue kernel (``residues.cu``): the digit split of both
  parts plus, per modulus, 2 FMAs per part and 5 for each exact reduction (3 per
  modulus: re, im, re+im);
* bytes: the unfused path's traffic (row statistics, transposed copies, INT8 residue
  planes, INT32 Phase-A planes, result).

A unit keeps the transform at the memory roof iff its rate is at least
``ops_per_element / 32 B * B_HBM``: that multiple of ``B_HBM`` is the unit's *floor*.
A native radix FFT needs ``5 log2(n)`` flops per element and pass (the usual
``5 n log2 n`` flop count of a length-``n`` FFT), the floor ``5 log2 n / 32`` (1.56 for
n = 1024). The projected n³ time is the largest of the memory time and each unit's
time (full overlap assumed: a lower bound).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..fourier.plan import (
    factorize,
    fixed_layout,
    fixed_point_radices,
    fixed_stage_mma_k,
    fixed_stage_mmas,
    four_step_split,
)
from ..ozaki.fixed_point import FORMATS
from ..ozaki.residue_system import int8_system

__all__ = [
    "BYTES_FUSED",
    "FP8_OPS_PER_INT8_OP",
    "FUSED_INT_ENTRY_EXIT",
    "FUSED_INT_PER_STAGE",
    "FUSED_INT_TWIDDLE",
    "GPUS",
    "H200_MEASURED",
    "MMA_OPS",
    "MMA_SYNC_FRACTION",
    "FusedCounts",
    "FusedPass",
    "GPUSpec",
    "PassCounts",
    "fft_pass_counts",
    "floors",
    "fused_counts",
    "fused_floors",
    "fused_int_instructions",
    "fused_stage_mmas_per_element",
    "fused_stage_ops_per_element",
    "native_fft_flops_per_element",
    "phase_b_instructions",
    "project",
    "project_fused",
    "residue_fp64_ops",
]

BYTES_FUSED = 32  #: complex128 read + write per element and pass
#: Phase B instructions per real output beyond the residues' share (kernels/common/
#: ozaki_common.cuh, oz_crt_finish on its common path): per base-2**31 digit, carry
#: normalization and the remainder X - qP; fixed, the quotient from the top digits, the
#: +-P/2 test on the top two digits, the 62-bit window with its sticky bit, one conversion,
#: the scaling and the store. Read off the sm_90 SASS (nvcc 13.0; 90, 99 and 107 on the path
#: for four, five and six digits; 170 for five before the window replaced the word-wise
#: negation and rounding).
PHASE_B_FIXED_PER_DIGIT = 8
PHASE_B_FIXED = 59
#: partial reduction of an INT32 sum below 2**24: shift, mask, multiply-add by 2**16 mod p
PARTIAL_INSTRUCTIONS = 3
#: executed instructions of oz_residues_complex per complex element at 16 moduli (ncu,
#: H200, 2026-11-21): the FP64 operations of the model plus conversions, stores, indexing
RESIDUES_EXECUTED_16 = 770


def _digits31(num_moduli: int) -> int:
    """Base-2**31 digits of P (and of every CRT weight) for the first ``num_moduli``."""
    return -(-int8_system(num_moduli).product.bit_length() // 31)


def phase_b_instructions(num_moduli: int) -> int:
    """Modelled INT32-pipe instructions of ``oz_reconstruct_complex`` per complex output
    (Karatsuba: three products per modulus)."""
    digits = _digits31(num_moduli)
    # 3 loads and their 64-bit addresses; 3 partial reductions; Re = T1 - T2 and
    # Im = T3 - T1 - T2; one multiply-add per weight digit and part
    per_modulus = 3 + 3 * 2 + 3 * PARTIAL_INSTRUCTIONS + 3 + 2 * digits
    per_part = PHASE_B_FIXED_PER_DIGIT * digits + PHASE_B_FIXED
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
    """What one axis pass of the unfused Ozaki-II stage path executes per complex element
    (the earlier CUDA path, ``moduli=N``; the GPU now runs :class:`FusedCounts`)."""

    n: int
    num_moduli: int
    stages: list
    tc_ops: int
    int32_instr: int
    fp64_ops: int
    bytes_unfused: int
    bytes_fused: int = BYTES_FUSED


def fft_pass_counts(n: int, num_moduli: int = 16, radices: list[int] | None = None) -> PassCounts:
    """Unfused (Ozaki-II stages) counts per element for one axis of length ``n`` as the
    stage plan splits it (or with the given ``radices``)."""
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
    #: whether the fused pass's mma.sync fraction of the INT8 peak was measured on this
    #: GPU's SM (Hopper: measured on an H200) or is assumed to carry over
    mma_fraction_measured: bool = False


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
        mma_fraction_measured=True,
    ),
    GPUSpec(
        "H200 SXM",
        4.8,
        34.0,
        1979.0,
        1979.0,
        132 * 64 * 1.98e-3,
        "NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200); SMs and lanes as H100",
        mma_fraction_measured=True,
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
        mma_fraction_measured=True,
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
    """Unfused (Ozaki-II stages): each unit's floor as a multiple of ``B_HBM`` (ops per
    fused byte)."""
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
    """Unfused (Ozaki-II stages): projected 3-D n³ FFT times (ms) on ``gpu`` for native
    FP64 and for the stage path, unfused (``ozfft_unfused_ms``) and with the stages
    hypothetically fused (``ozfft_fused_ms``: still one Phase B per stage). The fused
    fixed-point pass the GPU runs is :func:`project_fused`."""
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


# -- the fused fixed-point pass (kernels/fft/fixed_pass.cu) ------------------------------

#: m16n8k32 INT8 MMA: 16 x 8 x 32 = 4096 multiply-adds, 8192 ops
MMA_MACS = 16 * 8 * 32
MMA_OPS = 2 * MMA_MACS
#: lines per MMA tile (the MMA's N): a stage task is r elements of each of 8 lines
MMA_LINES = 8

#: ncu on an H200, one fused pass over 512³ (radices 8·8·8, fp64, float64 in and out;
#: bench/results/nvidia-h200/fft.md run): 1.853e9 executed warp instructions for 512³ =
#: 1.342e8 elements, i.e. 13.8 warp = 442 thread instructions per element, 75 % of them
#: integer/logic (the rest IMMA, loads/stores, shuffles, barriers, uniform-datapath and
#: control), 3.72 ms, DRAM 2.15 GB read + 2.12 GB written (1.15 TB/s)
NCU_512_WARP_INSTRUCTIONS = 1.853e9
NCU_512_THREAD_INSTR_PER_ELEMENT = 442
NCU_512_INTEGER_FRACTION = 0.752
NCU_512_PASS_MS = 3.72
#: integer instructions per complex element and stage: the stage loop of the sm_90 build
#: of kernels/fft/fixed_pass.cu (nvcc 13.0, n = 512, 8 warps) is straight-line code
#: executing per 64-element task and thread 212, 133 and 102 integer/logic instructions
#: in stages 1-3 (of 261, 190 and 151 in all, 41 of them IMMA): 106 (with the float64
#: entry conversion), 66.5 and 51 (no renormalization OR after the last stage) per
#: element (x 32 threads / 64 elements). The model charges every stage the middle one's
#: 67; the first stage's conversion and the last stage's saving go to the entry/exit.
FUSED_INT_PER_STAGE = 67
#: integer instructions per complex element at entry and exit (loads, line exponents,
#: conversions, index arithmetic, stores): calibrated so that an n = 512 pass (3 stages)
#: equals the ncu count above, round(0.752 * 442) - 3 * 67 = 332 - 201 = 131
FUSED_INT_ENTRY_EXIT = round(NCU_512_INTEGER_FRACTION * NCU_512_THREAD_INSTR_PER_ELEMENT) - (
    3 * FUSED_INT_PER_STAGE
)
#: extra integer instructions per element of the twiddled row pass of a four-step plan
#: (its own entry sweep: conversion, 128-bit exact twiddle product, rounding, line OR):
#: the sweep of the sm_90 n = 1024 build has 212 integer instructions per element, of
#: which the 42 of the conversion a plain pass does in its first stage
FUSED_INT_TWIDDLE = 212 - 42

#: INT8 rate the fused pass's mma.sync reached on an H200 (first kernel, 512³: ~515
#: TOPS-equivalent, docs/perf-notes.md "Fused fixed-point FFT pass on an H200") over the
#: 1979 TOPS dense datasheet peak: 26 %. Measured for Hopper (H100, H200 and GH200 share
#: the SM); for every other GPU an assumption.
MMA_SYNC_TOPS_H200 = 515.0
MMA_SYNC_FRACTION = MMA_SYNC_TOPS_H200 / 1979.0

#: tensor ops of the FP8 (e4m3) Phase A per INT8 op of the fused pass: each byte-digit
#: product is four e4m3 products of 4-bit halves (two k32 MMAs for one k16 MMA where 2r
#: <= 16, four k32 MMAs for one k32 elsewhere; docs/numerics.md, "FP8 Phase A of the FFT")
FP8_OPS_PER_INT8_OP = 4

#: the measured H200 points of one run (bench/results/nvidia-h200/fft.md, 3-D c2c
#: complex128 cubes, the kernel of docs/perf-notes.md round 7): n -> (ozfft ms, cuFFT ms)
H200_MEASURED: dict[int, tuple[float, float]] = {
    256: (1.1712, 0.4425),
    512: (9.5510, 3.3276),
    1024: (92.4553, 31.8508),
}
H200_MEASURED_SOURCE = "bench/results/nvidia-h200/fft.md"


def fused_stage_mmas_per_element(r: int, precision: str = "fp64") -> float:
    """MMA instructions per complex element of a radix-``r`` stage of the fused pass:
    ``fixed_stage_mmas(r) / (8 r)`` (a task covers r elements of each of 8 lines)."""
    return fixed_stage_mmas(r, FORMATS[precision]) / (MMA_LINES * r)


def fused_stage_ops_per_element(r: int, precision: str = "fp64") -> float:
    """INT8 tensor ops per complex element of a radix-``r`` stage: its MMAs times
    ``2 * 16 * 8 * k`` (k = 16 or 32, :func:`~ozfft.fourier.plan.fixed_stage_mma_k`)."""
    return fused_stage_mmas_per_element(r, precision) * 2 * 16 * 8 * fixed_stage_mma_k(r)


def fused_int_instructions(stages: int, twiddle: bool = False) -> int:
    """Modelled integer instructions per complex element of one fused pass of
    ``stages`` stages: ``FUSED_INT_ENTRY_EXIT + stages * FUSED_INT_PER_STAGE`` (+
    ``FUSED_INT_TWIDDLE`` for the twiddled row pass of a four-step plan)."""
    return (
        FUSED_INT_ENTRY_EXIT + stages * FUSED_INT_PER_STAGE + (FUSED_INT_TWIDDLE if twiddle else 0)
    )


@dataclass(frozen=True)
class FusedPass:
    """One fused pass of length ``n`` (per complex element of the transformed line)."""

    n: int
    radices: tuple[int, ...]
    twiddle: bool
    mmas: float
    tc_ops: float
    int_instr: int
    bytes: int = BYTES_FUSED


@dataclass(frozen=True)
class FusedCounts:
    """What the fused fixed-point path executes per complex element for one axis of
    length ``n``: its passes (one for ``n <= 1024``) and their sums."""

    n: int
    layout: str
    passes: tuple[FusedPass, ...]
    mmas: float
    tc_ops: float
    int_instr: int
    bytes: int

    @property
    def stages(self) -> list[int]:
        return [r for p in self.passes for r in p.radices]


def _fused_pass(n: int, twiddle: bool, precision: str) -> FusedPass:
    radices = fixed_point_radices(n)
    mmas = sum(fused_stage_mmas_per_element(r, precision) for r in radices)
    ops = sum(fused_stage_ops_per_element(r, precision) for r in radices)
    return FusedPass(n, radices, twiddle, mmas, ops, fused_int_instructions(len(radices), twiddle))


def fused_counts(n: int, precision: str = "fp64") -> FusedCounts:
    """Counts per complex element of the fused fixed-point transform of length ``n``:
    one pass (``n <= 1024``) or four-step passes (column passes of ``n_a``, a twiddled
    row pass of ``n_b`` that writes natural order). Bluestein lengths are not modelled
    (ValueError); the integer constants are calibrated for fp64."""
    layout = fixed_layout(n)
    if layout == "one-pass":
        passes: tuple[FusedPass, ...] = (_fused_pass(n, False, precision),)
    elif layout == "four-step":
        n_a, n_b = four_step_split(n)
        passes = (*fused_counts(n_a, precision).passes, _fused_pass(n_b, True, precision))
    else:
        raise ValueError(f"length {n}: the fused model covers one-pass and four-step lengths")
    return FusedCounts(
        n,
        layout,
        passes,
        sum(p.mmas for p in passes),
        sum(p.tc_ops for p in passes),
        sum(p.int_instr for p in passes),
        sum(p.bytes for p in passes),
    )


def fused_floors(n: int = 1024) -> dict[str, float]:
    """The fused pass's floors as multiples of ``B_HBM`` (ops per roof byte): INT8
    tensor ops (at the unit's rate, whatever fraction of its peak it reaches), integer
    instructions, and the bytes over the 32-byte roof (1 for one pass)."""
    c = fused_counts(n)
    return {
        "native_fp64": native_fft_flops_per_element(n) / BYTES_FUSED,
        "tensor_int8": c.tc_ops / BYTES_FUSED,
        "int32": c.int_instr / BYTES_FUSED,
        "bytes_over_roof": c.bytes / BYTES_FUSED,
    }


def project_fused(gpu: GPUSpec, n: int = 1024, dims: int = 3) -> dict:
    """Projected n^dims FP64 FFT time (ms) of the fused fixed-point path on ``gpu``: the
    largest of the memory time, the tensor time at ``MMA_SYNC_FRACTION`` of the INT8
    dense peak and the integer time at the INT32 rate (full overlap: a lower bound);
    a unit whose rate the cited source lacks is left out (``complete`` False). Also the
    rates the GPU would need to run the pass at memory speed."""
    elements = n**dims
    c = fused_counts(n)
    bw = gpu.hbm_TBps * 1e12
    roof = dims * elements * BYTES_FUSED / bw * 1e3
    memory = dims * elements * c.bytes / bw * 1e3
    tensor_rate = None if gpu.int8_TOPS is None else gpu.int8_TOPS * 1e12 * MMA_SYNC_FRACTION
    fp8_rate = None if gpu.fp8_TFLOPS is None else gpu.fp8_TFLOPS * 1e12 * MMA_SYNC_FRACTION
    int_rate = None if gpu.int32_Tops is None else gpu.int32_Tops * 1e12

    def t(per_element: float, rate: float | None) -> float | None:
        return None if rate is None else dims * elements * per_element / rate * 1e3

    native = t(native_fft_flops_per_element(n), gpu.fp64_TFLOPS and gpu.fp64_TFLOPS * 1e12)
    tensor_int8 = t(c.tc_ops, tensor_rate)
    tensor_fp8 = t(FP8_OPS_PER_INT8_OP * c.tc_ops, fp8_rate)
    # Phase A as "auto" would pick it: INT8 unless the GPU's INT8 is cut (no dense INT8
    # rate in its source) or its FP8 products would finish first
    phase_a = (
        "fp8"
        if tensor_fp8 is not None and (tensor_int8 is None or tensor_fp8 < tensor_int8)
        else "int8"
    )
    parts = {
        "memory": memory,
        "tensor_int8": tensor_int8,
        "int32": t(c.int_instr, int_rate),
    }
    if phase_a == "fp8":
        parts["tensor_fp8"] = tensor_fp8
        del parts["tensor_int8"]
    known = {k: v for k, v in parts.items() if v is not None}
    binding = max(known, key=known.get)
    return {
        "gpu": gpu.name,
        "n": n,
        "dims": dims,
        "phase_a": phase_a,
        "radices": c.stages,
        "passes_per_axis": len(c.passes),
        "roof_ms": roof,
        "native_fp64_ms": None if native is None else max(roof, native),
        "fused_ms": known[binding],
        "binding": binding,
        "parts_ms": parts,
        "complete": len(known) == len(parts),
        "mma_fraction": MMA_SYNC_FRACTION,
        "mma_fraction_measured": gpu.mma_fraction_measured,
        # rates for the memory roof: floor x B_HBM (INT8 also as the datasheet peak that
        # the measured mma.sync fraction would need)
        "needs": {
            "int8_TOPS_effective": c.tc_ops / BYTES_FUSED * gpu.hbm_TBps,
            "int8_TOPS_peak": c.tc_ops / BYTES_FUSED * gpu.hbm_TBps / MMA_SYNC_FRACTION,
            "int32_Tops": c.int_instr / BYTES_FUSED * gpu.hbm_TBps,
        },
        "has": {
            "int8_TOPS_effective": None if tensor_rate is None else tensor_rate / 1e12,
            "int32_Tops": gpu.int32_Tops,
        },
        "spec": asdict(gpu),
    }
