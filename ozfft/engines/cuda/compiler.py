"""Run-time compilation of the kernels with NVRTC (``cuda.core``) and an on-disk cache.

Cache key (sha256): the source's name and its own include closure (the source and every
header it includes, recursively: names and bytes; see :mod:`.sources`), the macro
prologue, the compile options, the GPU architecture, the NVRTC version and the ozfft
version. Editing one header thus recompiles only the sources that include it.

Cache files: ``<area>-<stem>-<arch>-<key>.cubin`` (e.g. ``gemm-phase_b-sm_90-….cubin``)
plus ``<that name>.sha256``, the digest of the cubin. A cubin whose digest is missing or
does not match (a damaged file) is compiled again, with a warning. Files are written
atomically (temporary file + ``os.replace``) so concurrent processes never see a
partial one. The cache directory (``OZFFT_CACHE_DIR``, see :mod:`ozfft.config`) is
created private to the user (mode 0700).

An NVRTC failure raises :class:`~ozfft.errors.KernelCompileError` with the NVRTC log;
the specialized source (prologue + text) is saved as ``failed-<stem>-<key>.cu`` in the
cache directory. Modules are loaded with cupy (``RawModule``) and launched on cupy's
current stream.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ... import config
from ..._logging import logger
from ..._version import __version__
from ...errors import DeviceUnavailableError, KernelCompileError
from ..base import compute_capability
from .constants import NO_MACROS, Macros
from .sources import include_closure, kernel_dir, resolve_source, source_stem

__all__ = [
    "CACHE_DIR_MODE",
    "cache_entry",
    "cache_key",
    "cached_binary",
    "cached_cubin",
    "compile_options",
    "cubin_path",
    "ensure_cache_dir",
    "get_function",
    "load_module",
    "nvrtc_version",
    "verify_cubin",
]

_STD = "c++17"
#: the cache directory is private to its user
CACHE_DIR_MODE = 0o700
_KEY_CHARS = 32


def _require_cuda_core() -> tuple[Any, Any]:
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError:
        try:  # cuda-core < 0.4 keeps the API under .experimental
            from cuda.core.experimental import Program, ProgramOptions
        except ImportError as exc:
            raise DeviceUnavailableError(
                "the CUDA engine compiles its kernels with cuda-python; install it with "
                "`pip install 'ozfft[cuda]'` (cupy-cuda13x, cuda-core, cuda-bindings)"
            ) from exc
    return Program, ProgramOptions


@cache
def nvrtc_version() -> str:
    """``major.minor`` of the NVRTC library cuda-python uses."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:  # older cuda-python layout
        from cuda import nvrtc  # type: ignore[no-redef]
    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def compile_options(arch: str) -> tuple[str, ...]:
    """The options that change the binary (they are part of the cache key)."""
    return (f"arch={arch}", f"std={_STD}")


def _as_macros(macros: Mapping[str, str]) -> Macros:
    return macros if isinstance(macros, Macros) else Macros(macros)


def cache_key(
    source: str, macros: Mapping[str, str], arch: str, nvrtc: str, *, root: Path | None = None
) -> str:
    """sha256 over everything that changes the cubin of ``source`` (see the module doc)."""
    root = kernel_dir() if root is None else root
    source = resolve_source(source, root)
    h = hashlib.sha256()
    for part in (source, _as_macros(macros).prologue, *compile_options(arch), nvrtc, __version__):
        h.update(part.encode())
        h.update(b"\0")
    for rel in include_closure(source, root):
        data = (root / rel).read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def ensure_cache_dir(directory: os.PathLike | str) -> Path:
    """Create the cache directory with mode 0700; tighten one of ours that others may
    write to (a planted cubin would run on the GPU)."""
    path = Path(directory)
    os.makedirs(path, mode=CACHE_DIR_MODE, exist_ok=True)
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        if hasattr(os, "getuid") and info.st_uid == os.getuid():
            logger.warning(
                "kernel cache %s was writable by group/others (mode %o); setting it to %o",
                path,
                mode,
                CACHE_DIR_MODE,
            )
            os.chmod(path, CACHE_DIR_MODE)
        else:
            logger.warning(
                "kernel cache %s is writable by other users and not yours (mode %o); "
                "set OZFFT_CACHE_DIR to a private directory",
                path,
                mode,
            )
    return path


def _atomic_write(path: os.PathLike | str, data: bytes) -> None:
    directory = os.path.dirname(os.fspath(path))
    os.makedirs(directory, mode=CACHE_DIR_MODE, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=Path(path).suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _digest_path(cubin: Path) -> Path:
    return cubin.with_name(cubin.name + ".sha256")


def _store_verified(path: Path, data: bytes) -> None:
    """Write a cached binary and its sha256 beside it, each atomically."""
    _atomic_write(path, data)
    _atomic_write(_digest_path(path), (hashlib.sha256(data).hexdigest() + "\n").encode())


def cached_binary(path: Path, build: Callable[[], bytes]) -> Path:
    """``path`` where it holds a binary whose sha256 matches the one beside it, else
    ``build()``'s bytes written there with their sha256 (a damaged entry is logged and built
    again): the cache of the cubins (:func:`cached_cubin`) and of the CUTLASS Phase A's
    library (:mod:`.cutlass_phase_a`)."""
    if path.is_file():
        problem = verify_cubin(path)
        if problem is None:
            logger.debug("kernel cache hit: %s", path)
            return path
        logger.warning("kernel cache entry %s is unusable (%s); compiling it again", path, problem)
    _store_verified(path, build())
    return path


def verify_cubin(cubin: Path) -> str | None:
    """Why the cached ``cubin`` (or any binary :func:`cached_binary` wrote) cannot be used
    (``None`` when its sha256 matches)."""
    digest = _digest_path(cubin)
    try:
        want = digest.read_text().strip()
    except FileNotFoundError:
        return f"its checksum file {digest.name} is missing"
    got = hashlib.sha256(cubin.read_bytes()).hexdigest()
    if got != want:
        return "its sha256 does not match the recorded one (damaged file)"
    return None


def _nvrtc_compile(text: str, name: str, arch: str, root: Path) -> bytes:
    """Compile ``text`` (prologue + source) to a cubin; NVRTC's errors propagate
    (tests replace this function: NVRTC needs the CUDA stack)."""
    program_cls, options_cls = _require_cuda_core()
    options = options_cls(name=name, arch=arch, std=_STD, include_path=[str(root)])
    logger.info("compiling %s for %s with NVRTC %s", name, arch, nvrtc_version())
    program = program_cls(text, "c++", options=options)
    return bytes(program.compile("cubin").code)


def _build(source: str, macros: Macros, arch: str, key: str, root: Path, directory: Path) -> bytes:
    text = macros.prologue + (root / source).read_text()
    try:
        return _nvrtc_compile(text, source, arch, root)
    except DeviceUnavailableError:  # no cuda-python: not a fault of the source
        raise
    except Exception as exc:
        # cuda.core's NVRTCError carries the program log in its message
        dump: Path | None = directory / f"failed-{source_stem(source)}-{key[:_KEY_CHARS]}.cu"
        try:
            _atomic_write(dump, text.encode())
        except OSError as write_error:
            logger.warning("could not save the failed kernel source: %s", write_error)
            dump = None
        raise KernelCompileError(source, arch, str(exc), dump) from exc


def cached_cubin(
    source: str,
    macros: Mapping[str, str],
    arch: str,
    *,
    nvrtc: str | None = None,
    root: Path | None = None,
    directory: os.PathLike | str | None = None,
) -> Path:
    """Path of the verified cubin of ``source`` + ``macros`` for ``arch``, compiled if
    it is absent or damaged. ``nvrtc``, ``root`` and ``directory`` default to the
    installed NVRTC, :func:`~.sources.kernel_dir` and ``config.cache_dir()``."""
    root = kernel_dir() if root is None else root
    source = resolve_source(source, root)
    macros = _as_macros(macros)
    key = cache_key(source, macros, arch, nvrtc or nvrtc_version(), root=root)
    cache_dir = ensure_cache_dir(config.cache_dir() if directory is None else directory)
    path = cache_entry(cache_dir, source, arch, key, ".cubin")
    return cached_binary(path, lambda: _build(source, macros, arch, key, root, cache_dir))


def cache_entry(cache_dir: Path, source: str, arch: str, key: str, suffix: str) -> Path:
    """Where the cache keeps ``source``'s binary for ``arch`` and ``key`` (a sha256 hex
    digest, shortened): ``<stem>-<arch>-<key>`` with ``suffix`` (the cubins' ``.cubin``,
    the CUTLASS Phase A's ``.so``)."""
    return cache_dir / f"{source_stem(source)}-{arch}-{key[:_KEY_CHARS]}{suffix}"


def _device_arch(device_id: int | None) -> str:
    """``sm_XY`` (``sm_100``, ...) of a device (default: the current one)."""
    major, minor = compute_capability(device_id)
    return f"sm_{major}{minor}"


def cubin_path(
    source: str, macros: Mapping[str, str] = NO_MACROS, device_id: int | None = None
) -> Path:
    """Path of the cached cubin of ``source`` (e.g. ``"gemm/phase_b.cu"``) + ``macros``
    for a device (default: the current one), compiled if needed."""
    return cached_cubin(source, macros, _device_arch(device_id))


@cache
def load_module(source: str, macros: Macros, device_id: int) -> Any:
    """Compiled (or cached) module of ``source`` specialized by ``macros`` (per process)."""
    import cupy

    return cupy.RawModule(path=str(cached_cubin(source, macros, _device_arch(device_id))))


def get_function(source: str, name: str, macros: Mapping[str, str] = NO_MACROS) -> Any:
    """The kernel ``name`` of ``source`` (a path relative to the kernels folder, e.g.
    ``"gemm/phase_b.cu"``) on the current device. Pass the cached :class:`Macros` of
    :mod:`.constants`: they are used as they are; another mapping is sorted first."""
    import cupy

    module = load_module(source, _as_macros(macros), cupy.cuda.Device().id)
    return module.get_function(name)
