"""The ``ozfft`` command.

Errors are one line on stderr, ``<prog>: error: <message>``, with no traceback: bad
arguments (argparse, exit status 2) and ozfft's own exceptions (:class:`OzfftError`)
or bad values (``ValueError``, e.g. an ``OZFFT_*`` variable; exit status 1). ``--help``
shows every option's default; a bare ``ozfft`` (or ``ozfft bench``) prints its help.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from ._logging import logger
from ._version import __version__
from .errors import OzfftError

__all__ = ["OzfftArgumentParser", "build_parser", "main"]


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows defaults; ``None`` defaults and flags are left unannotated."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if any(action.default is v for v in (None, False, True)):
            return action.help
        return super()._get_help_string(action)


class OzfftArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``<prog>: error: <message>``)
    followed by exit status 2, and whose help shows the defaults."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        """Options without a help text still show their default in ``--help``."""
        default = kwargs.get("default")
        flag_or_unset = any(default is v for v in (None, False, True, argparse.SUPPRESS))
        if kwargs.get("help") is None and not flag_or_unset:
            kwargs["help"] = "default: %(default)s"
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        one_line = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {one_line} (see {self.prog} --help)\n")


def _cmd_check(args: argparse.Namespace) -> int:
    import numpy as np

    from .check import run_fft_check, run_gemm_check
    from .engines.select import describe_engines

    print(f"ozfft {__version__} check — {describe_engines()}")
    cases = [("float64", args.size), ("complex128", max(args.size // 2, 1))]
    if args.fp32:
        cases += [("float32", args.size), ("complex64", max(args.size // 2, 1))]
    header = (
        f"{'op':6} {'engine':6} {'shape':16} {'moduli':>18} {'mode':8} "
        f"{'ozfft err':>10} {'native err':>10} {'ozfft s':>9} {'native s':>9}  result"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for dtype, size in cases:
        r = run_gemm_check(
            size, dtype=np.dtype(dtype), mode=args.mode, moduli=args.moduli, seed=args.seed
        )
        ok &= r.passed
        print(
            f"{r.op:6} {r.engine:6} {r.shape:16} {r.moduli:>18} {r.mode:8} "
            f"{r.error:10.2e} {r.native_error:10.2e} {r.seconds:9.4f} {r.native_seconds:9.4f}  "
            f"{'ok' if r.passed else 'FAIL'}"
        )
    f = run_fft_check(args.fft_size, seed=args.seed)
    ok &= f.passed
    print(
        f"{f.op:6} {f.engine:6} {f.shape:16} {f.moduli:>18} {f.mode:8} "
        f"{f.error:10.2e} {f.native_error:10.2e} {f.seconds:9.4f} {f.native_seconds:9.4f}  "
        f"{'ok' if f.passed else 'FAIL'}"
    )
    print("GEMM errors: max relative error of sampled entries against exact rational products.")
    print(
        "moduli: the INT8 count the accuracy guarantee chose; a complex product runs on "
        "(N Gaussian) moduli, two products each, with the same bits."
    )
    print(f"FFT errors: relative L2 against a long-double transform ({f.reference}).")
    print("native: the same engine's library (numpy BLAS / pocketfft, or cuBLAS / cuFFT).")
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = OzfftArgumentParser(
        prog="ozfft",
        description="FP64-accurate GEMMs (and FFTs) on INT8 tensor cores by the Ozaki scheme II.",
    )
    parser.add_argument("--version", action="version", version=f"ozfft {__version__}")
    parser.set_defaults(func=_help_of(parser))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = sub.add_parser("check", help="run emulated products, checked against exact references")
    check.add_argument("--size", type=int, default=512, help="matrix size n (n x n x n)")
    check.add_argument(
        "--mode", choices=("fast", "accurate"), default="fast", help="scaling mode of the GEMMs"
    )
    check.add_argument(
        "--moduli",
        type=int,
        default=None,
        help="explicit moduli count (turns the accuracy guarantee off; default: chosen per call)",
    )
    check.add_argument("--fp32", action="store_true", help="also check SGEMM and CGEMM emulation")
    check.add_argument("--fft-size", type=int, default=32, help="FFT cube size n (n x n x n)")
    check.add_argument("--seed", type=int, default=0, help="seed of the random test matrices")
    check.set_defaults(func=_cmd_check)

    from .bench.results import RESULTS_ROOT

    bench = sub.add_parser("bench", help="benchmark campaigns against native libraries")
    bench_sub = bench.add_subparsers(dest="campaign", metavar="CAMPAIGN")
    bench.set_defaults(func=_help_of(bench))
    from .bench import gemm as bench_gemm

    gemm = bench_sub.add_parser("gemm", help="emulated D/Z/S/C GEMM vs cuBLAS (needs a GPU)")
    bench_gemm.add_arguments(gemm)
    gemm.set_defaults(func=_cmd_bench_gemm)
    from .bench import fft as bench_fft

    fft = bench_sub.add_parser("fft", help="fftn / rfftn / fft2 / 1-D fft vs cuFFT (needs a GPU)")
    bench_fft.add_arguments(fft)
    fft.set_defaults(func=_cmd_bench_fft)
    from .bench import numpy_gemm as bench_numpy_gemm

    numpy_gemm = bench_sub.add_parser(
        "numpy-gemm", help="NumPy-engine DGEMM vs N numpy float64 matmuls (CPU)"
    )
    bench_numpy_gemm.add_arguments(numpy_gemm)
    numpy_gemm.set_defaults(func=_cmd_bench_numpy_gemm)

    from .distributed import bench as bench_distributed

    distributed = bench_sub.add_parser(
        "distributed",
        help="ozfft.distributed scaling vs the same slab decomposition with cuFFT (mpiexec)",
        description="Weak and strong scaling of ozfft.distributed over the ranks of "
        "MPI.COMM_WORLD (one GPU per rank), against the same slab decomposition with "
        "cuFFT; launch under mpiexec, e.g. mpiexec -n 4 ozfft bench distributed.",
    )
    bench_distributed.add_arguments(distributed)
    distributed.set_defaults(func=_cmd_bench_distributed)

    from .bench import fp8 as bench_fp8

    fp8 = bench_sub.add_parser(
        "fp8", help="how exact FP8 (e4m3) tensor-core accumulation is on this GPU"
    )
    bench_fp8.add_arguments(fp8)
    fp8.set_defaults(func=_cmd_bench_fp8)

    ceil = bench_sub.add_parser("ceilings", help="measure this GPU's and ozfft's rates")
    ceil.add_argument("--out", type=Path, default=None, help="write ceilings.json here")
    ceil.set_defaults(func=_cmd_bench_ceilings)

    fl = bench_sub.add_parser("floors", help="bandwidth floors and projected 1024³ times")
    fl.add_argument(
        "--model-only", action="store_true", help="datasheet model only (no GPU needed)"
    )
    fl.add_argument("--n", type=int, default=1024, help="FFT cube size n of the projection")
    fl.add_argument("--moduli", type=int, default=16, help="moduli count of the model")
    fl.add_argument("--out", type=Path, default=None, help="write floors.json/report here")
    fl.set_defaults(func=_cmd_bench_floors)

    every = bench_sub.add_parser("all", help="the whole campaign, resumable, with a report")
    every.add_argument("--out", type=Path, default=RESULTS_ROOT / "campaign", help="results folder")
    every.add_argument("--restart", action="store_true", help="ignore earlier results")
    every.add_argument(
        "--fft-sizes", type=int, nargs="+", default=[64, 128, 256, 512], help="FFT cube sizes"
    )
    every.add_argument(
        "--gemm-shapes", nargs="+", default=["4096", "8192", "16384"], help="GEMM shapes"
    )
    every.set_defaults(func=_cmd_bench_all)
    return parser


def _write_ceilings(args: argparse.Namespace) -> int:
    from .bench import ceilings

    text = json.dumps(ceilings.measure(), indent=1, default=str)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "ceilings.json").write_text(text)
    return 0


def _cmd_bench_ceilings(args: argparse.Namespace) -> int:
    return _gpu_campaign(args, "ceilings", _write_ceilings)


def _cmd_bench_floors(args: argparse.Namespace) -> int:
    from .bench.campaign import floors_lines, floors_result
    from .bench.report import write_report

    ceilings = None
    if not args.model_only:
        from .bench import ceilings as ceil_mod
        from .bench.gpu import cuda_unavailable

        why = cuda_unavailable()
        if why is not None:
            print(f"ozfft bench floors: {why}; use --model-only", file=sys.stderr)
            return 2
        ceilings = ceil_mod.measure()
    result = floors_result(ceilings, args.n, args.moduli)
    print("\n".join(floors_lines(result)))
    if args.out:
        results = {"floors": result}
        if ceilings:
            results["ceilings"] = ceilings
        print(f"report: {write_report(results, args.out)}")
    return 0


def _cmd_bench_all(args: argparse.Namespace) -> int:
    from .bench import campaign

    return _gpu_campaign(args, "all", campaign.run_all)


def _gpu_campaign(
    args: argparse.Namespace, name: str, run: Callable[[argparse.Namespace], int]
) -> int:
    """Run a benchmark campaign that needs the CUDA engine, or say why it cannot."""
    from .bench.gpu import gpu_campaign

    return gpu_campaign(args, name, run)


def _cmd_bench_fft(args: argparse.Namespace) -> int:
    from .bench import fft

    return _gpu_campaign(args, "fft", fft.main)


def _cmd_bench_fp8(args: argparse.Namespace) -> int:
    from .bench import fp8

    return _gpu_campaign(args, "fp8", fp8.main)


def _cmd_bench_gemm(args: argparse.Namespace) -> int:
    from .bench import gemm

    return _gpu_campaign(args, "gemm", gemm.main)


def _cmd_bench_distributed(args: argparse.Namespace) -> int:
    from .bench.results import results_dir
    from .distributed import bench

    return bench.main(args, lambda device, ranks: results_dir(f"{device} x{ranks}"))


def _cmd_bench_numpy_gemm(args: argparse.Namespace) -> int:
    from .bench import numpy_gemm

    return numpy_gemm.main(args)


def _help_of(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def show(args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    return show


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's message (KernelCompileError carries an NVRTC
    log); the rest goes to the debug log."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    if len(lines) > 1:
        logger.debug("full message:\n%s", exc)
        return f"{lines[0]} (+{len(lines) - 1} more lines; OZFFT_LOG_LEVEL=DEBUG shows them)"
    return lines[0]


def main(argv: list[str] | None = None) -> int:
    """Run the ``ozfft`` command; the exit status (0 ok, 1 failed check or error,
    2 bad arguments, 130 interrupted)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    if getattr(args, "size", 1) < 1:
        print("ozfft: error: --size must be >= 1", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except (OzfftError, ValueError) as exc:
        print(f"ozfft: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ozfft: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
