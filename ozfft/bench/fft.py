"""``ozfft bench fft``: ozfft's FFTs against cuFFT (cupy) in the same process.

Cases (``--cases``; each is the function of that name in ``ozfft`` and in
``cupy.fft``, default axes):

* ``fftn``  — 3-D c2c of an ``n³`` complex128 cube (``--sizes``);
* ``ifftn`` — its inverse (``norm="backward"``: conjugation and the 1/n³ included);
* ``rfftn`` — 3-D r2c of an ``n³`` float64 cube (``--sizes``);
* ``fft2``  — 2-D c2c over the last two axes of a batch (``--fft2-shapes``, default
  ``64x1024x1024``);
* ``fft``   — 1-D c2c of length ``L`` (``--lengths``, default ``2**18 2**20 2**24``).

Per case and size: median times (CUDA events), ``ratio`` = ``cuFFT ms / ozfft ms``
(> 1: ozfft is faster; the markdown table shows its inverse, ozfft/cuFFT), the
pass-count memory roof ``passes · (in + out bytes) / B_HBM`` (one read and one write
per transformed axis; ``B_HBM`` the device-to-device copy bandwidth measured in the
same run), and, where the long-double reference is
computed (at most ``--max-error-size``³ elements, or a 1-D length of at most
``--max-error-length``), both transforms' relative L2 error and the fraction of
output components equal to the correctly rounded exact DFT
(:func:`ozfft.reference.correctly_rounded_fraction`). Writes ``fft.json`` and
``fft.md``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..reference import (
    correctly_rounded_fraction,
    long_double_fftn,
    long_double_rfftn,
    relative_l2_error,
)
from .gpu import gpu_campaign
from .results import (
    add_phase_a,
    add_seed_and_out,
    command_line_args,
    fmt,
    gpu_label,
    markdown_row,
    markdown_table,
    record_gpu,
    run_and_save,
    write_results,
)
from .timing import median_ms

__all__ = [
    "CASES",
    "DEFAULT_FFT2_SHAPES",
    "DEFAULT_LENGTHS",
    "DEFAULT_SIZES",
    "HEADER",
    "FFTCase",
    "add_arguments",
    "case_shapes",
    "main",
    "parse_dims",
    "reference_wanted",
    "roof_ms",
    "row",
    "run",
    "table",
    "write",
]


@dataclass(frozen=True)
class FFTCase:
    """One benchmarked transform: the same-named function of ozfft and cupy.fft."""

    name: str  #: function name in ``ozfft`` and ``cupy.fft``
    op: str  #: record label
    real_input: bool
    axes: tuple[int, ...] | None  #: transformed axes (None: all)
    what: str
    inverse: bool = False  #: the inverse transform (reference: conj(fft(conj x)) / N)

    def passes(self, ndim: int) -> int:
        """Transformed axes: one read and one write of the data each, at best."""
        return ndim if self.axes is None else len(self.axes)


CASES: dict[str, FFTCase] = {
    "fftn": FFTCase("fftn", "z2z_3d", False, None, "3-D c2c, n³ complex128"),
    "ifftn": FFTCase("ifftn", "z2z_3d_inverse", False, None, "3-D inverse c2c", inverse=True),
    "rfftn": FFTCase("rfftn", "d2z_3d", True, None, "3-D r2c, n³ float64"),
    "fft2": FFTCase("fft2", "z2z_2d_batched", False, (-2, -1), "2-D c2c over the last two axes"),
    "fft": FFTCase("fft", "z2z_1d", False, (-1,), "1-D c2c"),
}
DEFAULT_SIZES = (64, 128, 256, 512)
DEFAULT_FFT2_SHAPES = ((64, 1024, 1024),)
DEFAULT_LENGTHS = (2**18, 2**20, 2**24)


def case_shapes(
    case: FFTCase,
    sizes: Sequence[int] = DEFAULT_SIZES,
    fft2_shapes: Sequence[tuple[int, ...]] = DEFAULT_FFT2_SHAPES,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
) -> list[tuple[int, ...]]:
    """Input shapes of ``case``: cubes ``n³`` (fftn, rfftn), the batches of fft2, or
    1-D lengths (fft)."""
    if case.name == "fft":
        return [(int(n),) for n in lengths]
    if case.name == "fft2":
        return [tuple(int(v) for v in s) for s in fft2_shapes]
    return [(int(n),) * 3 for n in sizes]


def reference_wanted(
    case: FFTCase, shape: tuple[int, ...], max_error_size: int, max_error_length: int
) -> bool:
    """Whether the (CPU, long-double) reference is computed: 1-D lengths up to
    ``max_error_length``, other inputs up to ``max_error_size``³ elements."""
    if case.name == "fft":
        return shape[-1] <= max_error_length
    return math.prod(shape) <= max_error_size**3


def roof_ms(case: FFTCase, ndim: int, in_bytes: int, out_bytes: int, bandwidth: float) -> float:
    """Memory roof ``passes · (in + out bytes) / B_HBM`` in milliseconds, for an
    ``ndim``-dimensional input (``bandwidth`` in bytes/s)."""
    return case.passes(ndim) * (in_bytes + out_bytes) / bandwidth * 1e3


def _input(case: FFTCase, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x if case.real_input else x + 1j * rng.standard_normal(shape)


def _reference(case: FFTCase, host: np.ndarray) -> np.ndarray:
    if case.real_input:
        return long_double_rfftn(host, case.axes)
    if case.inverse:
        axes = range(host.ndim) if case.axes is None else case.axes
        count = math.prod(host.shape[a] for a in axes)
        return np.conj(long_double_fftn(np.conj(host), case.axes)) / np.longdouble(count)
    return long_double_fftn(host, case.axes)


def run(
    sizes: Sequence[int],
    reps: int,
    max_error_size: int,
    seed: int,
    *,
    cases: Sequence[str] = ("fftn",),
    fft2_shapes: Sequence[tuple[int, ...]] = DEFAULT_FFT2_SHAPES,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    max_error_length: int = 2**20,
    on_record: Callable[[list[dict]], None] | None = None,
    phases: Sequence[str | None] = (None,),
) -> list[dict]:
    """Benchmark every case and shape on the current GPU, ozfft once per Phase A of
    ``phases`` (``"int8"``, ``"fp8"``, ``"auto"``; None: ``OZFFT_PHASE_A``); return the
    records."""
    import cupy as cp

    import ozfft
    from ozfft.engines.select import cuda_engine, resolve_phase_a

    from .ceilings import hbm_copy_bandwidth

    gpu = gpu_label()
    bandwidth = hbm_copy_bandwidth(cp)
    rng = np.random.default_rng(seed)
    records: list[dict] = []
    for name in cases:
        case = CASES[name]
        ours_fn: Callable[[Any], Any] = getattr(ozfft, case.name)
        cufft_fn: Callable[[Any], Any] = getattr(cp.fft, case.name)
        for shape in case_shapes(case, sizes, fft2_shapes, lengths):
            host = _input(case, shape, rng)
            x = cp.asarray(host)
            cufft_ms = median_ms(cp, lambda x=x, f=cufft_fn: f(x), max(reps, 5))
            native = cufft_fn(x)
            ref = None
            for phase in phases:
                phase_a = resolve_phase_a(phase, cuda_engine())
                call = lambda x=x, f=ours_fn, p=phase_a: f(x, phase_a=p)  # noqa: E731
                ms = median_ms(cp, call, reps, warm=1)
                ours = call()
                rec: dict[str, Any] = {
                    "case": case.name,
                    "op": case.op,
                    "shape": list(shape),
                    "n": shape[-1],
                    "phase_a": phase_a,
                    "ms": ms,
                    "cufft_ms": cufft_ms,
                    "ratio": cufft_ms / ms,
                    "roof_ms": roof_ms(case, x.ndim, x.nbytes, ours.nbytes, bandwidth),
                    "hbm_TBps": bandwidth / 1e12,
                    "rel_l2": None,
                    "cufft_rel_l2": None,
                    "correctly_rounded": None,
                    "cufft_correctly_rounded": None,
                    "gpu": gpu,
                }
                if reference_wanted(case, shape, max_error_size, max_error_length):
                    ref = _reference(case, host) if ref is None else ref
                    got, theirs = cp.asnumpy(ours), cp.asnumpy(native)
                    rec["rel_l2"] = relative_l2_error(got, ref)
                    rec["cufft_rel_l2"] = relative_l2_error(theirs, ref)
                    rec["correctly_rounded"] = correctly_rounded_fraction(got, ref)
                    rec["cufft_correctly_rounded"] = correctly_rounded_fraction(theirs, ref)
                records.append(rec)
                print(row(rec), flush=True)
                if on_record is not None:
                    on_record(records)
                del ours
            del x, native
            cp.get_default_memory_pool().free_all_blocks()
    return records


HEADER = (
    "| case | shape | ozfft ms | cuFFT ms | ozfft/cuFFT | roof ms | ozfft relL2 | "
    "cuFFT relL2 | ozfft correctly rounded | cuFFT correctly rounded |"
)


def _shape_text(r: dict) -> str:
    shape = r.get("shape") or ([r["n"]] * 3 if "n" in r else None)
    return "x".join(str(v) for v in shape) if shape else "n/a"


def _slowdown(r: dict) -> float | None:
    """ozfft's time over cuFFT's (the record's ``ratio`` is the inverse)."""
    ms, cufft_ms = r.get("ms"), r.get("cufft_ms")
    return ms / cufft_ms if ms and cufft_ms else None


def row(r: dict) -> str:
    """One markdown row of a record (records without ``case`` are 3-D fftn cubes)."""
    case = r.get("case", "fftn")
    cells = [
        case if r.get("phase_a", "int8") == "int8" else f"{case} ({r['phase_a']})",
        _shape_text(r),
        fmt(r.get("ms"), ".3f"),
        fmt(r.get("cufft_ms"), ".3f"),
        fmt(_slowdown(r), ".2f"),
        fmt(r.get("roof_ms"), ".3f"),
        fmt(r.get("rel_l2"), ".2e"),
        fmt(r.get("cufft_rel_l2"), ".2e"),
        fmt(r.get("correctly_rounded"), ".4f"),
        fmt(r.get("cufft_correctly_rounded"), ".4f"),
    ]
    return markdown_row(cells)


def table(records: Sequence[dict]) -> list[str]:
    """The markdown table of ``records`` (header, rule, one row each)."""
    return markdown_table(HEADER, map(row, records))


def write(records: list[dict], out: Path) -> None:
    """``fft.json`` and ``fft.md`` under ``out``."""
    hbm = records[0].get("hbm_TBps") if records else None
    lines = [
        f"# ozfft FFTs vs cuFFT on {record_gpu(records)}",
        "",
        f"HBM copy bandwidth measured in the same run: {fmt(hbm, '.2f')} TB/s; roof: one",
        "read and one write per transformed axis. Errors: relative L2 against a",
        "long-double transform; correctly rounded: fraction of output components equal",
        "to the long-double reference rounded to float64 (n/a: reference not computed).",
        "ozfft: fused fixed-point passes, one kernel per axis pass on INT8 tensor cores",
        "(kernels/fft/fixed_pass.cu; lengths above 1024 in four-step passes; a case marked",
        "(fp8): phase_a='fp8', the stage products on e4m3 MMAs); ozfft/cuFFT is the time",
        "ratio (lower is better).",
        "",
        *table(records),
    ]
    write_results(records, out, "fft", lines)


def parse_dims(text: str) -> tuple[int, ...]:
    """``"64x1024x1024"`` -> ``(64, 1024, 1024)`` (at least two positive sizes)."""
    try:
        dims = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        dims = ()
    if len(dims) < 2 or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"shape must be like 64x1024x1024, got {text!r}")
    return dims


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ozfft bench fft``."""
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=tuple(CASES),
        default=["fftn"],
        help="transforms to time (ozfft.<case> vs cupy.fft.<case>)",
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="n of the n³ cubes"
    )
    parser.add_argument(
        "--fft2-shapes",
        type=parse_dims,
        nargs="+",
        default=list(DEFAULT_FFT2_SHAPES),
        help="batch shapes of the fft2 case (transform over the last two axes)",
    )
    parser.add_argument(
        "--lengths",
        type=int,
        nargs="+",
        default=list(DEFAULT_LENGTHS),
        help="lengths of the 1-D fft case",
    )
    parser.add_argument("--reps", type=int, default=3)
    add_phase_a(parser)
    parser.add_argument(
        "--max-error-size",
        type=int,
        default=128,
        help="errors for inputs of at most this cubed elements (the reference runs on the CPU)",
    )
    parser.add_argument(
        "--max-error-length",
        type=int,
        default=2**20,
        help="errors for 1-D lengths up to this",
    )
    add_seed_and_out(parser, "fft")


def main(args: argparse.Namespace | None = None) -> int:
    """Run the campaign (``ozfft bench fft``; ``python -m ozfft.bench.fft`` parses the
    command line and checks for a GPU first, as the CLI does)."""
    if args is None:
        return gpu_campaign(command_line_args(__doc__, add_arguments), "fft", main)
    return run_and_save(
        args.out,
        "fft",
        HEADER,
        write,
        lambda save: run(
            args.sizes,
            args.reps,
            args.max_error_size,
            args.seed,
            cases=args.cases,
            fft2_shapes=args.fft2_shapes,
            lengths=args.lengths,
            max_error_length=args.max_error_length,
            on_record=save,
            phases=args.phase_a,
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
