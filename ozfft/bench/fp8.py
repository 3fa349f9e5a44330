"""``ozfft bench fp8``: how exact FP8 (e4m3) tensor-core products with FP32 accumulation are
on this GPU — the limit an FP8 Phase A must block its sums by (docs/numerics.md, "FP8
accumulation").

e4m3 holds every integer of magnitude at most 16 exactly (three mantissa bits), so the
digits of an FP8 residue are integers in ``[-16, 16]`` and one product is at most 256 in
magnitude. What is not documented is how many bits the tensor core keeps when it adds
products into its FP32 accumulator (DeepSeek-V3 reports about 14 on Hopper through
cuBLAS). Each test here is one warp's chain of ``mma.sync.m16n8k32`` e4m3 products into
one accumulator (``kernels/probes/fp8_accumulate.cu``), against the exact integer sum:

* every digit product ``a b`` (``a, b`` in ``[-16, 16]``) alone;
* worst-case full chains: every k of every step ``16 · 16`` (``+8192`` per step), for k
  from 32 to 65536, also with alternating signs;
* retained bits: ``m`` full steps (a partial sum of ``8192 m``), then a step adding 1 —
  the sum ``8192 m + 1`` is exact only while the accumulator keeps ``log2(8192 m) + 1``
  bits — and the same after cancellation back to a small sum.

The exact k-block of FP8 products is then ``2^bits / 256`` (every partial sum of worst-case
digits stays an integer of at most ``bits`` bits).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from ..engines.select import compute_capability
from ..ozaki.residue_system import e4m3_codes
from .results import gpu_label, markdown_table, results_dir, write_results

__all__ = ["E4M3_INT_MAX", "e4m3_byte", "exact_sum", "main", "measure", "run_chains"]

E4M3_INT_MAX = 16  #: every integer of at most this magnitude is an e4m3 number
_SOURCE = "probes/fp8_accumulate.cu"
_FULL_K = 32  #: k of one m16n8k32 product

Step = tuple[str, int, int]  #: ("full" or "unit", a, b): 32 a b or a b per output


def e4m3_byte(v: int) -> int:
    """The e4m3 (OCP "fn" variant) byte of the integer ``v``, ``|v| <= 16``: sign, four
    exponent bits (bias 7), three mantissa bits (:func:`~ozfft.ozaki.residue_system.e4m3_codes`)."""
    v = int(v)
    if abs(v) > E4M3_INT_MAX:
        raise ValueError(f"{v} is not an integer e4m3 holds exactly (|v| <= {E4M3_INT_MAX})")
    return int(e4m3_codes(np.array([v]))[0])


def exact_sum(steps: list[Step]) -> int:
    """The exact integer an output of the chain ``steps`` should hold."""
    return sum((_FULL_K if mode == "full" else 1) * a * b for mode, a, b in steps)


def run_chains(chains: list[list[Step]]) -> list[float]:
    """Each chain run by one warp on the current GPU; the accumulator of output (0, 0)."""
    import cupy as cp

    from ..engines.select import cuda_engine

    count = max(len(c) for c in chains)
    shape = (len(chains), count)
    a, b, mode = (np.zeros(shape, np.uint8) for _ in range(3))
    for t, chain in enumerate(chains):
        for i, (kind, x, y) in enumerate(chain):  # shorter chains end in zero unit steps
            a[t, i], b[t, i], mode[t, i] = e4m3_byte(x), e4m3_byte(y), kind == "full"
    out = cp.zeros(len(chains), cp.float32)
    kernel = cuda_engine().kernel(_SOURCE, "oz_probe_fp8_chain")
    args = (cp.asarray(a), cp.asarray(b), cp.asarray(mode), np.int32(count), out)
    kernel((len(chains),), (32,), args)
    return [float(v) for v in out.get()]


def _exact(chains: list[list[Step]]) -> list[bool]:
    got = run_chains(chains)
    return [g == exact_sum(c) for g, c in zip(got, chains, strict=True)]


def measure(max_steps: int = 2048) -> dict[str, Any]:
    """The tests of the module docstring on the current GPU."""
    major, minor = compute_capability()
    if (major, minor) < (8, 9):
        raise RuntimeError(
            f"FP8 tensor cores need compute capability 8.9 or later (this GPU: {major}.{minor})"
        )
    digits = range(-E4M3_INT_MAX, E4M3_INT_MAX + 1)
    products = [[("unit", x, y)] for x in digits for y in digits]
    steps = [1 << i for i in range(max_steps.bit_length()) if 1 << i <= max_steps]
    full = [[("full", 16, 16)] * n for n in steps]
    alternating = [[("full", 16, 16 if i % 2 == 0 else -16) for i in range(n)] for n in steps]
    after_big = [[("full", 16, 16)] * m + [("unit", 1, 1)] for m in steps]
    cancelled = [[("full", 16, 16)] * m + [("full", 16, -16)] * m + [("unit", 1, 1)] for m in steps]
    ks = [_FULL_K * n for n in steps]  # k of a chain of n products
    sums = [8192 * m for m in steps]  # the partial sum before the +1
    full_ok = dict(zip(ks, _exact(full), strict=True))
    big_ok = dict(zip(sums, _exact(after_big), strict=True))
    # the largest partial sum to which +1 still adds exactly
    passing = [s for s, ok in big_ok.items() if ok]
    bits = (max(passing) + 1).bit_length() if passing else None
    exact_k = [k for k, ok in full_ok.items() if ok]
    return {
        "gpu": gpu_label(),
        "instruction": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        "every_digit_product_exact": all(_exact(products)),
        "full_chain_exact": full_ok,
        "alternating_chain_exact": dict(zip(ks, _exact(alternating), strict=True)),
        "plus_one_after_sum_exact": big_ok,
        "plus_one_after_cancellation_exact": dict(zip(sums, _exact(cancelled), strict=True)),
        "retained_bits": bits,
        "largest_exact_worst_case_k": max(exact_k) if exact_k else None,
        "k_block": (1 << bits) // 256 if bits else None,
    }


def markdown(result: dict[str, Any]) -> list[str]:
    """The result as the lines of ``fp8.md``."""
    lines = [
        f"# FP8 (e4m3) tensor-core accumulation on {result['gpu']}",
        "",
        f"`{result['instruction']}`, one warp per chain, FP32 accumulator; exact: the",
        "accumulator equals the integer sum (ozfft bench fp8, ozfft/bench/fp8.py).",
        "",
        f"Every digit product a·b, a, b in [-16, 16], exact: "
        f"{result['every_digit_product_exact']}. Bits the accumulator keeps: "
        f"{result['retained_bits']}; worst-case chains exact up to k = "
        f"{result['largest_exact_worst_case_k']}; k-block for exact FP8 sums: "
        f"{result['k_block']}.",
        "",
    ]
    rows = []
    for k, ok in result["full_chain_exact"].items():
        s = k // _FULL_K * 8192
        rows.append(
            f"| {k} | {k * 256} | {_mark(ok)} | {_mark(result['alternating_chain_exact'][k])} | "
            f"{s} | {_mark(result['plus_one_after_sum_exact'][s])} | "
            f"{_mark(result['plus_one_after_cancellation_exact'][s])} |"
        )
    header = (
        "| k | worst-case sum (256 k) | all +16·16 exact | alternating signs exact | "
        "partial sum S | S + 1 exact | S − S + 1 exact |"
    )
    return lines + markdown_table(header, rows)


def _mark(ok: bool) -> str:
    return "yes" if ok else "**no**"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-steps", type=int, default=2048, help="longest chain, in m16n8k32 products"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder of fp8.json and fp8.md (default: bench/results/<gpu>)",
    )


def main(args: argparse.Namespace) -> int:
    result = measure(args.max_steps)
    text = markdown(result)
    print("\n".join(text))
    out = args.out if args.out is not None else results_dir(result["gpu"])
    write_results([result], out, "fp8", text)
    print(f"wrote {out / 'fp8.json'} and {out / 'fp8.md'}")
    return 0
