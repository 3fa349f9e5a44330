"""Run numpy's and scipy's own FFT test suites against ozfft and report the counts.

    python tests/peer/run.py                 # all three suites, two at a time
    python tests/peer/run.py numpy -- -x     # one suite; arguments after -- go to pytest
    python tests/peer/run.py --baseline      # the same suites without ozfft (reference)

Each suite runs in its own pytest process (``tests/peer/plugin.py`` sets it up: numpy.fft
patched to ozfft's functions; ozfft as the global scipy.fft backend with scipy
registered as fallback). The exit status is 0 when no test failed or errored.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# suite -> (package whose tests run, test directory inside it, conftest cut-off directory)
SUITES = {
    "numpy": ("numpy", "fft/tests", "fft"),
    "scipy": ("scipy", "fft/tests", ""),
    "pocketfft": ("scipy", "fft/_pocketfft/tests", ""),
}
# numpy's package conftest is not loaded (the cut-off is numpy/fft): it imports
# hypothesis, which ozfft's tests do not need, and numpy's fft tests use none of its
# fixtures. scipy's package conftest is loaded (the ``xp`` fixture, its markers).


def _site(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise SystemExit(f"{package} is not installed")
    return Path(spec.origin).resolve().parent


def suite_available(suite: str) -> bool:
    """Whether the installed package ships the suite's test directory."""
    package, tests, _ = SUITES[suite]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return False
    return (Path(spec.origin).resolve().parent / tests).is_dir()


def suite_command(suite: str, report: Path, pytest_args: list[str]) -> tuple[list[str], dict]:
    package, tests, cut = SUITES[suite]
    pkg_dir = _site(package)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(ROOT / "tests" / "peer" / "peer.ini"),
        "--rootdir",
        str(pkg_dir.parent),
        "--confcutdir",
        str(pkg_dir / cut),
        "-q",
        "-p",
        "no:randomly",
        str(pkg_dir / tests),
        *pytest_args,
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # one BLAS thread per suite process: the suites run side by side, and their
    # thread-safety tests call from 16 Python threads at once (ozfft's exact float64
    # products give the same bits for any thread count)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    env["OZFFT_PEER_SUITE"] = suite
    env["OZFFT_PEER_REPORT"] = str(report)
    return command, env


def run_suite(
    suite: str, pytest_args: list[str] = (), baseline: bool = False, quiet: bool = False
) -> dict:
    """Run one suite; return its report (plugin JSON) with ``seconds`` and ``output``."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command, env = suite_command(suite, report, list(pytest_args))
        if baseline:
            env["OZFFT_PEER_BASELINE"] = "1"
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if not report.exists():
            raise RuntimeError(
                f"peer suite {suite!r} wrote no report (exit {proc.returncode}):\n"
                f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        data = json.loads(report.read_text())
    data["seconds"] = seconds
    data["output"] = proc.stdout + proc.stderr
    data["returncode"] = proc.returncode
    return data


def summarize(data: dict) -> dict:
    """Counts of one suite's report."""
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0, "xpassed": 0}
    for outcome in data["outcomes"].values():
        counts[outcome] = counts.get(outcome, 0) + 1
    counts["excluded"] = len(data["excluded"])
    counts["suite skips"] = counts["skipped"] - counts["excluded"]
    calls = data["calls"]
    counts["reached ozfft"] = sum(1 for c in calls.values() if c["ozfft"])
    counts["handed off"] = sum(1 for c in calls.values() if c["fallback"])
    counts["collected"] = data["collected"]
    counts["seconds"] = round(data["seconds"], 1)
    return counts


def failures(data: dict) -> list[str]:
    return sorted(k for k, v in data["outcomes"].items() if v in ("failed", "error"))


COLUMNS = [
    "collected",
    "passed",
    "failed",
    "error",
    "suite skips",
    "excluded",
    "xfailed",
    "reached ozfft",
    "handed off",
    "seconds",
]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, pytest_args = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", help=f"any of {', '.join(SUITES)} (default: all)")
    parser.add_argument("--baseline", action="store_true", help="run without ozfft")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="suites run at once")
    parser.add_argument("-v", "--verbose", action="store_true", help="print pytest's output")
    args = parser.parse_args(argv)
    suites = args.suites or list(SUITES)
    unknown = sorted(set(suites) - set(SUITES))
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(SUITES)}")
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = dict(
            zip(
                suites,
                pool.map(lambda s: run_suite(s, pytest_args, args.baseline), suites),
                strict=True,
            )
        )
    bad = 0
    header = f"{'suite':<10}" + "".join(f"{c:>14}" for c in COLUMNS)
    print(("BASELINE (no ozfft)\n" if args.baseline else "") + header)
    for suite, data in results.items():
        counts = summarize(data)
        print(f"{suite:<10}" + "".join(f"{counts[c]:>14}" for c in COLUMNS))
    for suite, data in results.items():
        failed = failures(data)
        bad += len(failed)
        if args.verbose or failed:
            print(f"\n--- {suite}: {len(failed)} failed ---")
            for nodeid in failed:
                print("  " + nodeid)
            if args.verbose:
                print(data["output"][-20000:])
        if data["excluded"]:
            print(f"\n{suite}: excluded by the harness")
            for nodeid, reason in sorted(data["excluded"].items()):
                print(f"  {nodeid}: {reason}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
