"""Phase A on CUTLASS (Hopper): INT8 products whose epilogue reduces each INT32 sum mod p
and stores a byte (``kernels/gemm/modp_igemm.cu``).

CUTLASS builds the kernel's TMA descriptors on the host, so this source is compiled by
nvcc into a shared library (not by NVRTC into a cubin) and called through ``ctypes``; the
launch goes on cupy's current stream.

Cache: ``gemm-modp_igemm-sm_90a-<key>.so`` in the kernel cache folder (``OZFFT_CACHE_DIR``)
with a ``.sha256`` beside it, written atomically like the cubins (:mod:`.compiler`). The
key hashes the source, CUTLASS's version header and folder, nvcc's version, the flags and
the ozfft version.

Available (:func:`unavailable_reason` is ``None``) when the device has compute capability
9.0 (the kernel is ``sm_90a`` code), CUTLASS's headers are found (``OZFFT_CUTLASS_DIR``,
else the ``nvidia-cutlass`` package: ``pip install 'ozfft[cutlass]'``), nvcc is found
(cupy's ``get_nvcc_path``: ``NVCC``, ``CUDA_PATH``, ``PATH``) and ``OZFFT_CUTLASS`` is not
``0``. A library that nvcc cannot build is logged once as a warning and the engine keeps
cuBLAS with INT32 planes (the same bits).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ... import config
from ..._logging import logger
from ..._version import __version__
from ...errors import KernelCompileError
from .compiler import cache_entry, cached_binary, ensure_cache_dir
from .sources import kernel_dir

__all__ = [
    "MODP_IGEMM_ALIGN",
    "MODP_IGEMM_ARCH",
    "MODP_IGEMM_MAX_K",
    "MODP_IGEMM_MODULI",
    "MODP_IGEMM_SHORT_K",
    "MODP_IGEMM_SHORT_SUM",
    "MODP_IGEMM_SOURCE",
    "ModpIgemm",
    "cutlass_include_dir",
    "epilogue_table",
    "library_path",
    "modp_igemm",
    "modulus_magics",
    "nvcc_flags",
    "remainder_constants",
    "unavailable_reason",
]

MODP_IGEMM_SOURCE = "gemm/modp_igemm.cu"
MODP_IGEMM_ARCH = "sm_90a"
#: n, k, row strides and pointers in bytes: TMA needs 16-byte aligned strides and addresses
#: (and CUTLASS whole 16-byte rows of D and of both operands)
MODP_IGEMM_ALIGN = 16
#: sums of k products of residues in [-128, 127] stay within 2**30, the epilogue's range
MODP_IGEMM_MAX_K = 1 << 16
#: the longest k whose sums take the two-instruction remainder (``OZ_MODP_SHORT_K`` in the
#: source; a test reads it there): their sums stay within ``MODP_IGEMM_SHORT_SUM``
MODP_IGEMM_SHORT_K = 512
#: the largest |sum| of MODP_IGEMM_SHORT_K products of residues in [-128, 128]: 2**23
MODP_IGEMM_SHORT_SUM = 128 * 128 * MODP_IGEMM_SHORT_K
#: the moduli the epilogue reduces by (residues in a byte)
MODP_IGEMM_MODULI = range(2, 257)
_NVCC_TIMEOUT_S = 900


def cutlass_include_dir() -> Path | None:
    """CUTLASS's include folder (``OZFFT_CUTLASS_DIR`` or the ``nvidia-cutlass``
    package's ``cutlass_library/source/include``), or None when neither holds
    ``cutlass/cutlass.h``."""
    explicit = config.cutlass_include()
    if explicit is not None:
        candidates = [explicit]
    else:
        spec = importlib.util.find_spec("cutlass_library")
        origin = spec.origin if spec is not None else None
        candidates = [Path(origin).parent / "source" / "include"] if origin else []
    for path in candidates:
        if (path / "cutlass" / "cutlass.h").is_file():
            return path
    return None


def _nvcc() -> str | None:
    """nvcc's path as cupy finds it (``NVCC``, ``CUDA_PATH``, ``PATH``), or None (none, or
    no cupy)."""
    try:
        import cupy
    except ImportError:
        return None
    return cupy.cuda.get_nvcc_path()


def nvcc_flags(include: Path) -> tuple[str, ...]:
    """nvcc's options for the library (part of the cache key). ``-DNDEBUG``: CUTLASS's
    device asserts are calls, and a call inside the mainloop serializes wgmma."""
    return (
        "-std=c++17",
        "-O3",
        "-DNDEBUG",
        f"-gencode=arch=compute_{MODP_IGEMM_ARCH[3:]},code={MODP_IGEMM_ARCH}",
        "-shared",
        "-Xcompiler",
        "-fPIC",
        "--expt-relaxed-constexpr",
        f"-I{include}",
    )


@cache
def _nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def unavailable_reason(device_id: int) -> str | None:
    """Why the CUTLASS Phase A cannot run on a device (None: it can)."""
    from ..base import compute_capability

    if not config.cutlass_phase_a():
        return "OZFFT_CUTLASS=0"
    if compute_capability(device_id) != (9, 0):
        return "its kernel is sm_90a code (compute capability 9.0 only)"
    if cutlass_include_dir() is None:
        return (
            "CUTLASS's headers were not found: `pip install 'ozfft[cutlass]'` (the "
            "nvidia-cutlass package) or set OZFFT_CUTLASS_DIR to CUTLASS's include folder"
        )
    if _nvcc() is None:
        return "nvcc was not found (set CUDA_PATH or NVCC, or put nvcc on PATH)"
    return None


def _cache_key(source_bytes: bytes, include: Path, flags: tuple[str, ...], nvcc: str) -> str:
    h = hashlib.sha256()
    version_header = (include / "cutlass" / "version.h").read_bytes()
    for part in (MODP_IGEMM_SOURCE, str(include.resolve()), *flags, nvcc, __version__):
        h.update(part.encode())
        h.update(b"\0")
    h.update(source_bytes)
    h.update(b"\0")
    h.update(version_header)
    return h.hexdigest()


def library_path(directory: Path | None = None) -> Path:
    """Path of the verified library, compiled with nvcc if it is absent or damaged (about a
    minute, once per CUTLASS, nvcc and ozfft version). A build nvcc rejects raises
    :class:`~ozfft.errors.KernelCompileError` with its log."""
    include = cutlass_include_dir()
    nvcc = _nvcc() if include is not None else None
    if include is None or nvcc is None:
        raise RuntimeError("library_path needs CUTLASS's headers and nvcc (unavailable_reason)")
    source = kernel_dir() / MODP_IGEMM_SOURCE
    data = source.read_bytes()
    flags = nvcc_flags(include)
    key = _cache_key(data, include, flags, _nvcc_version(nvcc))
    cache_dir = ensure_cache_dir(config.cache_dir() if directory is None else directory)
    path = cache_entry(cache_dir, MODP_IGEMM_SOURCE, MODP_IGEMM_ARCH, key, ".so")

    def build() -> bytes:
        logger.info("compiling %s with nvcc for %s (about a minute, once)", source, MODP_IGEMM_ARCH)
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".build-") as tmp:
            built = Path(tmp) / "lib.so"
            cmd = [nvcc, *flags, "-o", str(built), str(source)]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=_NVCC_TIMEOUT_S)
            if run.returncode != 0:
                log = f"$ {shlex.join(cmd)}\n{run.stdout}{run.stderr}"
                raise KernelCompileError(MODP_IGEMM_SOURCE, MODP_IGEMM_ARCH, log, source, "nvcc")
            return built.read_bytes()

    return cached_binary(path, build)


@dataclass(frozen=True)
class ModpIgemm:
    """The loaded library: :meth:`__call__` launches one batch of products."""

    lib: Any

    def __call__(
        self,
        a: int,
        lda: int,
        a_batch: int,
        bt: int,
        ldb: int,
        b_batch: int,
        d: int,
        ldd: int,
        d_batch: int,
        table: int,
        m: int,
        n: int,
        k: int,
        batches: int,
        *,
        stream: int,
        device: int,
        workspace: int = 0,
        workspace_bytes: int = 0,
    ) -> None:
        """``D_l = (A_l Bt_l^T) mod moduli[l]`` for ``l < batches`` (device pointers;
        strides in bytes = elements: A_l at ``a + l a_batch``, ``m`` rows of ``k`` bytes
        ``lda`` apart; Bt_l likewise, ``n`` rows; D_l ``m`` rows of ``n`` bytes, ``ldd``
        apart; ``table``: :func:`epilogue_table` of exactly the ``batches`` moduli, on the
        device: its rows are ``batches`` apart).
        A failed check or launch raises RuntimeError with CUTLASS's or CUDA's status."""
        code = self.lib.oz_modp_igemm(
            a, lda, a_batch, bt, ldb, b_batch, d, ldd, d_batch, table, m, n, k,
            batches, workspace, workspace_bytes, stream, device,
        )  # fmt: skip
        if code != 0:
            status = self.lib.oz_modp_igemm_status(code).decode()
            raise RuntimeError(
                f"the CUTLASS Phase A ({m}x{k}x{n}, {batches} products) failed: {status} "
                f"(code {code})"
            )

    def workspace_bytes(self, m: int, n: int, k: int, batches: int, device: int) -> int:
        """Device workspace one launch needs."""
        return int(self.lib.oz_modp_igemm_workspace(m, n, k, batches, device))


def modulus_magics(moduli: tuple[int, ...]) -> list[int]:
    """``ceil(2**(31 + s) / p)`` with ``s = ceil(log2 p)`` for each modulus (below 2**32):
    the long-k epilogue's ``floor(u / p) = umulhi(u, magic) >> (s - 1)``, exact for every
    ``u < 2**31 + p`` (``kernels/gemm/modp_igemm.cu``, ``OzReduction``)."""
    _check_moduli(moduli)
    return [-(-(1 << (31 + (p - 1).bit_length())) // p) for p in moduli]


def remainder_constants(moduli: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """The short-k epilogue's ``c = ceil(2**32 / p)`` and ``(c lift) mod 2**32`` with ``lift
    = p ceil(B / p)``, ``B = MODP_IGEMM_SHORT_SUM = 2**23``, per modulus: ``u mod p =
    umulhi((c u) mod 2**32, p)`` for ``u = v + lift``, ``|v| <= B`` (``OzFastModP``; Lemire,
    Kaser and Kurz, "Faster remainder by direct computation")."""
    _check_moduli(moduli)
    cs = [-(-(1 << 32) // p) for p in moduli]
    lifts = [p * -(-MODP_IGEMM_SHORT_SUM // p) for p in moduli]
    return cs, [(c * lift) % (1 << 32) for c, lift in zip(cs, lifts, strict=True)]


def epilogue_table(moduli: tuple[int, ...]) -> np.ndarray:
    """The kernel's ``(4, N)`` int32 table (as bits): the moduli, their magics
    (:func:`modulus_magics`, k past :data:`MODP_IGEMM_SHORT_K`), then the remainder's ``c``
    and ``(c lift) mod 2**32`` (:func:`remainder_constants`, k up to it)."""
    cs, lift_cs = remainder_constants(moduli)
    rows = [list(moduli), modulus_magics(moduli), cs, lift_cs]
    return np.array(rows, dtype=np.uint32).view(np.int32)


def _check_moduli(moduli: tuple[int, ...]) -> None:
    if any(p not in MODP_IGEMM_MODULI for p in moduli):
        raise ValueError(f"the CUTLASS Phase A reduces by moduli in [2, 256], not {moduli}")


@cache
def _load(path: str) -> ModpIgemm:
    lib = ctypes.CDLL(path)
    i64, i32, ptr = ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p
    lib.oz_modp_igemm.restype = i32
    lib.oz_modp_igemm.argtypes = [
        ptr, i64, i64, ptr, i64, i64, ptr, i64, i64, ptr, i32, i32, i32, i32,
        ptr, ctypes.c_size_t, ptr, i32,
    ]  # fmt: skip
    lib.oz_modp_igemm_workspace.restype = ctypes.c_size_t
    lib.oz_modp_igemm_workspace.argtypes = [i32, i32, i32, i32, i32]
    lib.oz_modp_igemm_status.restype = ctypes.c_char_p
    lib.oz_modp_igemm_status.argtypes = [i32]
    return ModpIgemm(lib)


def modp_igemm(device_id: int) -> ModpIgemm | None:
    """The CUTLASS Phase A for a device, built and loaded once per process; None where
    ``OZFFT_CUTLASS=0``, where it is unavailable (logged once at debug level) or where it
    could not be built (logged once as a warning: the engine then keeps cuBLAS with INT32
    planes, the same bits)."""
    return _device_igemm(device_id) if config.cutlass_phase_a() else None


@cache
def _device_igemm(device_id: int) -> ModpIgemm | None:
    reason = unavailable_reason(device_id)
    if reason is not None:
        logger.debug("CUTLASS Phase A unavailable on device %d: %s", device_id, reason)
        return None
    try:
        return _load(str(library_path()))
    except (KernelCompileError, OSError, subprocess.SubprocessError) as exc:
        logger.warning("the CUTLASS Phase A could not be built; using cuBLAS: %s", exc)
        return None
