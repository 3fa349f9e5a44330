"""Where the campaigns write, how their tables print, and the run-and-save loop they share.

Results go to ``bench/results/<device>/`` of the working directory (one folder per GPU
or CPU class, as committed in the repository) unless ``--out`` says otherwise. Each
campaign writes ``<stem>.json`` (its list of records) and ``<stem>.md`` (a markdown
table of them under a few lines of preamble).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "RESULTS_ROOT",
    "add_phase_a",
    "add_seed_and_out",
    "command_line_args",
    "device_slug",
    "fmt",
    "gpu_label",
    "markdown_row",
    "markdown_table",
    "record_gpu",
    "results_dir",
    "run_and_save",
    "write_results",
]

#: the results store, relative to the working directory (the repository root)
RESULTS_ROOT = Path("bench/results")


def device_slug(name: str) -> str:
    """Folder name of a device: ``"NVIDIA H200"`` -> ``"nvidia-h200"``."""
    return "-".join(name.lower().split()) or "unknown"


def results_dir(device: str) -> Path:
    """Default output folder of a campaign run on ``device``."""
    return RESULTS_ROOT / device_slug(device)


def gpu_label() -> str:
    """The current GPU's name (``ozfft.engines.select.gpu_name``), or ``"unknown GPU"``."""
    from ..engines.select import gpu_name

    return gpu_name() or "unknown GPU"


def fmt(value: float | None, spec: str = ".3g") -> str:
    """``format(value, spec)``, or ``"n/a"`` for a missing number."""
    return "n/a" if value is None else format(value, spec)


def markdown_row(cells: Iterable[str]) -> str:
    """``| a | b | ... |``: one markdown table row of ``cells``."""
    return "| " + " | ".join(cells) + " |"


def markdown_table(header: str, rows: Iterable[str]) -> list[str]:
    """``header``, its ``|---|`` rule and ``rows``: the lines of a markdown table."""
    return [header, "|" + "---|" * (header.count("|") - 1), *rows]


def record_gpu(records: list[dict]) -> str:
    """The GPU named by the first record (``"?"`` for no records)."""
    return records[0]["gpu"] if records else "?"


def write_results(records: list[dict], out: Path, stem: str, markdown: list[str]) -> None:
    """``<stem>.json`` (``records``) and ``<stem>.md`` (the lines ``markdown``) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(records, indent=1))
    (out / f"{stem}.md").write_text("\n".join(markdown) + "\n")


def add_phase_a(parser: argparse.ArgumentParser) -> None:
    """``--phase-a``: ozfft's Phase A, one row per choice (default ``OZFFT_PHASE_A``)."""
    parser.add_argument(
        "--phase-a",
        nargs="+",
        choices=("int8", "fp8", "auto"),
        default=[None],
        help="Phase A of ozfft's products, one row per choice (default: OZFFT_PHASE_A, else auto)",
    )


def add_seed_and_out(
    parser: argparse.ArgumentParser, stem: str, default_folder: str = "bench/results/<gpu>"
) -> None:
    """The ``--seed`` and ``--out`` options every campaign has (``--out`` None: the
    campaign's default folder, ``default_folder`` in the help)."""
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"folder for {stem}.json and {stem}.md (default {default_folder})",
    )


def command_line_args(
    doc: str, add_arguments: Callable[[argparse.ArgumentParser], None]
) -> argparse.Namespace:
    """Parse ``sys.argv`` for a campaign run as ``python -m ozfft.bench.<campaign>``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    add_arguments(parser)
    return parser.parse_args()


def run_and_save(
    out: Path | None,
    stem: str,
    header: str,
    write: Callable[[list[dict], Path], None],
    run: Callable[[Callable[[list[dict]], None]], list[dict]],
) -> int:
    """Print ``header``, then ``run(save)``, where ``save(records)`` rewrites the results
    (``write(records, out)``) after every record so that a cut-off run keeps what it
    measured; ``out`` is None: :func:`results_dir` of the first record's GPU. Says where
    it wrote; returns 0."""
    where = out

    def save(records: list[dict]) -> None:
        nonlocal where
        if where is None:
            where = results_dir(record_gpu(records))
        write(records, where)

    print(header)
    records = run(save)
    if records and where is not None:
        print(f"wrote {where / f'{stem}.json'} and {where / f'{stem}.md'}")
    return 0
