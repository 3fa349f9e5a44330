"""Run-time compilation of the kernels with NVRTC (``cuda.core``) and an on-disk cache.

The cache key covers the kernel sources and headers, the macro prologue, the compile
options, the GPU architecture, the NVRTC version and the ozfft version; cubins are
written atomically (temporary file + ``os.replace``) so concurrent processes never
see a partial file. ``OZFFT_CACHE_DIR`` moves the cache. Modules are loaded with cupy
(``RawModule``) and launched on cupy's current stream.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from typing import Any

from ... import config
from ..._logging import logger
from ..._version import __version__
from ...errors import DeviceUnavailableError
from .sources import kernel_dir, kernel_files

__all__ = [
    "cache_key",
    "compile_options",
    "cubin_path",
    "get_function",
    "load_module",
    "nvrtc_version",
]

_STD = "c++17"


def _require_cuda_core():
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


def prologue(macros: dict[str, str]) -> str:
    """``#define`` lines specializing a kernel source."""
    return "".join(f"#define {name} {value}\n" for name, value in sorted(macros.items()))


def cache_key(source: str, macros: dict[str, str], arch: str, nvrtc: str) -> str:
    """sha256 over everything that changes the cubin."""
    h = hashlib.sha256()
    for part in (source, prologue(macros), *compile_options(arch), nvrtc, __version__):
        h.update(part.encode())
        h.update(b"\0")
    for path in kernel_files():
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _atomic_write(path: os.PathLike, data: bytes) -> None:
    directory = os.path.dirname(os.fspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".cubin")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _compile(source: str, macros: dict[str, str], arch: str) -> bytes:
    program_cls, options_cls = _require_cuda_core()
    text = prologue(macros) + (kernel_dir() / source).read_text()
    options = options_cls(name=source, arch=arch, std=_STD, include_path=[str(kernel_dir())])
    logger.info("compiling %s for %s with NVRTC %s", source, arch, nvrtc_version())
    program = program_cls(text, "c++", options=options)
    return bytes(program.compile("cubin").code)


def cubin_path(source: str, macros: dict[str, str], device_id: int | None = None):
    """Path of the cached cubin of ``source`` + ``macros`` for a device, compiled if needed."""
    import cupy

    device = cupy.cuda.Device(device_id) if device_id is not None else cupy.cuda.Device()
    major, minor = device.compute_capability
    arch = f"sm_{major}{minor}"
    key = cache_key(source, macros, arch, nvrtc_version())
    path = config.cache_dir() / f"{source.removesuffix('.cu')}-{arch}-{key[:32]}.cubin"
    if not path.is_file():
        _atomic_write(path, _compile(source, macros, arch))
    else:
        logger.debug("kernel cache hit: %s", path)
    return path


@cache
def load_module(source: str, macro_items: tuple[tuple[str, str], ...], device_id: int) -> Any:
    """Compiled (or cached) module of ``source`` specialized by ``macro_items``."""
    import cupy

    return cupy.RawModule(path=str(cubin_path(source, dict(macro_items), device_id)))


def get_function(source: str, name: str, macros: dict[str, str]) -> Any:
    """The kernel ``name`` of ``source`` on the current device."""
    import cupy

    module = load_module(source, tuple(sorted(macros.items())), cupy.cuda.Device().id)
    return module.get_function(name)
