"""Where the kernel sources live and what each one includes.

The sources sit in ``ozfft/kernels/`` of an installed wheel (the top-level ``kernels/``
folder is mapped there at build time) or in ``kernels/`` of a source checkout or editable
install, one folder per area (``common/``, ``gemm/``, ``fft/``, ``probes/``; see
``kernels/README.md``). A source is named by its path relative to that root, e.g.
``"gemm/phase_b.cu"``, and includes headers by paths relative to the root, e.g.
``#include "common/ozaki_common.cuh"`` (the root is NVRTC's include path).

Every function taking ``root`` reads that directory instead of :func:`kernel_dir`
(tests build temporary kernel trees with it).
"""

from __future__ import annotations

import posixpath
import re
from functools import cache
from pathlib import Path, PurePosixPath

from ..._logging import logger

__all__ = [
    "MARKER_HEADER",
    "include_closure",
    "kernel_dir",
    "kernel_files",
    "resolve_source",
    "source_stem",
]

_PACKAGE = Path(__file__).resolve().parents[2]  # .../ozfft

#: a header every kernel tree has; it marks the directory as the kernels root
MARKER_HEADER = "common/ozaki_common.cuh"

#: ``#include "..."`` at the start of a line (angle-bracket includes are NVRTC's own)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


@cache
def kernel_dir() -> Path:
    """Root directory of the ``.cu``/``.cuh`` kernel sources."""
    for candidate in (_PACKAGE / "kernels", _PACKAGE.parent / "kernels"):
        if (candidate / MARKER_HEADER).is_file():
            return candidate
    raise FileNotFoundError(
        "ozfft's CUDA kernel sources were not found (expected ozfft/kernels/ in the "
        "installed package or kernels/ in a source checkout); reinstall ozfft"
    )


def kernel_files(root: Path | None = None) -> list[Path]:
    """Every kernel source and header under the root, in every area folder."""
    root = kernel_dir() if root is None else root
    return sorted([*root.rglob("*.cu"), *root.rglob("*.cuh")])


def _inside(rel: str) -> bool:
    return not (rel.startswith("/") or rel == ".." or rel.startswith("../"))


def resolve_source(source: str, root: Path | None = None) -> str:
    """Canonical name (POSIX path relative to the root) of the kernel source ``source``.

    ``"gemm/phase_b.cu"`` names itself. A bare file name (``"phase_b.cu"``, the names
    used before the sources moved into area folders) is accepted when exactly one area
    folder holds a file of that name; new code should pass the full relative path.
    """
    root = kernel_dir() if root is None else root
    rel = posixpath.normpath(PurePosixPath(source).as_posix())
    if not _inside(rel):
        raise ValueError(f"kernel source {source!r} is not a path inside the kernels folder")
    if (root / rel).is_file():
        return rel
    if "/" not in rel:
        matches = sorted(p.relative_to(root).as_posix() for p in root.glob(f"*/{rel}"))
        if len(matches) == 1:
            logger.debug("kernel source %r resolved to %r", source, matches[0])
            return matches[0]
        if matches:
            raise ValueError(
                f"kernel source {source!r} is ambiguous ({', '.join(matches)}); "
                "name it by its path relative to the kernels folder"
            )
    raise FileNotFoundError(f"kernel source {source!r} not found under {root}")


def _resolve_include(name: str, includer: str, is_main: bool, root: Path) -> str | None:
    """Relative path of the file ``#include "name"`` in ``includer`` reads.

    Like the preprocessor: a header on disk first looks beside itself, then in the
    include path (the root). The main source is handed to NVRTC as a string, so it
    only has the include path.
    """
    bases = [posixpath.dirname(includer)] if not is_main else []
    for base in [*bases, ""]:
        rel = posixpath.normpath(posixpath.join(base, name))
        if _inside(rel) and (root / rel).is_file():
            return rel
    return None


def include_closure(source: str, root: Path | None = None) -> tuple[str, ...]:
    """``source`` and every header it includes, recursively (sorted relative paths).

    Includes that resolve to no file under the root are left to NVRTC (its built-in
    headers, or a compile error naming the missing file).
    """
    root = kernel_dir() if root is None else root
    main = resolve_source(source, root)
    seen: set[str] = set()
    stack = [(main, True)]
    while stack:
        rel, is_main = stack.pop()
        if rel in seen:
            continue
        seen.add(rel)
        for name in _INCLUDE.findall((root / rel).read_text()):
            target = _resolve_include(name, rel, is_main, root)
            if target is None:
                logger.debug("%s includes %r, which is not a kernel file", rel, name)
            else:
                stack.append((target, False))
    return tuple(sorted(seen))


def source_stem(source: str) -> str:
    """File-name-safe stem of a relative source path: ``gemm/phase_b.cu`` -> ``gemm-phase_b``."""
    return source.removesuffix(".cu").replace("/", "-")
