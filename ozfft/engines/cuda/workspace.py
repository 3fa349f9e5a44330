"""Workspace of a CUDA-engine product, computed before anything is allocated
(``CudaEngine.gemm_workspace`` fills in the device's memory budget).

Bytes: INT8 residue planes of both operands, the Phase-A planes of one block of output
columns (``N * products * m * ldc`` INT32 sums, doubled when k is blocked, or bytes where
Phase A stores its sums reduced mod p: ``plane_itemsize``), the accurate-mode bound
operands and product, and the output. The column block is the widest (all of ``n`` up to
``MAX_COL_BLOCK``, else a multiple of 256) whose Phase-A planes fit ``block_budget``;
if even 256 columns do not fit, ``col_block`` is 0 and the caller raises an error
stating ``total_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "K_BLOCK",
    "MAX_COL_BLOCK",
    "GemmWorkspace",
    "free_device_bytes",
    "pad_k",
    "plan_workspace",
]

#: Phase-A k-block: |sum| <= k * 128 * 128 < 2**31 needs k < 2**17; we use 2**16.
K_BLOCK = 1 << 16
#: widest column block for large m: cuBLAS INT8 GEMMs run faster at n <= 8192 than at
#: 16384 on Hopper (1.47 vs 1.28 POP/s, shared/reference), as GEMMul8's blocking found;
#: short-m products (FFT stages: m <= 64) take up to MAX_BLOCK_AREA / m columns instead
MAX_COL_BLOCK = 8192
MAX_BLOCK_AREA = 1 << 27
_COL_QUANTUM = 256


def pad_k(k: int) -> int:
    """Inner dimension padded to a multiple of 16 (INT8 tensor-core alignment)."""
    return -(-k // 16) * 16


def _pad_row(n: int, itemsize: int) -> int:
    """``n`` values padded to a whole number of 16-byte words (rows 16-byte aligned)."""
    per_word = 16 // itemsize
    return -(-n // per_word) * per_word


@dataclass(frozen=True)
class GemmWorkspace:
    """Sizes of one emulated product on the GPU."""

    batch: int
    m: int
    n: int
    kp: int
    moduli: int
    planes: int  #: residue planes per operand and modulus (1 real, 3 complex, 2 Gaussian)
    products: int  #: INT32 products per modulus (1 real; 2 Gaussian, 3 Karatsuba, 4 four-product)
    col_block: int  #: output columns per Phase-A/Phase-B block
    residue_bytes: int
    block_bytes: int  #: Phase-A planes of one column block (doubled when k-blocking)
    bound_bytes: int
    out_bytes: int
    plane_itemsize: int = 4  #: bytes a Phase-A value: 4 (INT32 sums) or 1 (residues mod p)

    @property
    def ldc(self) -> int:
        """Leading dimension of the Phase-A planes: the column block padded to whole
        16-byte words (4 INT32 sums or 16 bytes)."""
        return _pad_row(self.col_block, self.plane_itemsize)

    @property
    def total_bytes(self) -> int:
        return self.residue_bytes + self.block_bytes + self.bound_bytes + self.out_bytes


def plan_workspace(
    batch: int,
    m: int,
    n: int,
    k: int,
    *,
    moduli: int,
    is_complex: bool,
    products: int,
    accurate: bool,
    out_itemsize: int,
    block_budget: int,
    residue_planes: int | None = None,
    plane_itemsize: int = 4,
) -> GemmWorkspace:
    """Choose the column block whose Phase-A planes (``plane_itemsize`` bytes a value: 4
    for INT32 sums, 1 for residues stored as bytes) fit ``block_budget`` bytes
    (``residue_planes`` per operand and modulus: default 1 real, 3 complex)."""
    kp = pad_k(k)
    planes = residue_planes if residue_planes is not None else (3 if is_complex else 1)
    residue_bytes = moduli * planes * batch * (m + n) * kp
    bound_bytes = (batch * (m + n) * kp + batch * m * n * 8) if accurate else 0
    out_bytes = batch * m * n * out_itemsize
    kblocks = 2 if kp > K_BLOCK else 1

    def block_bytes(cols: int) -> int:
        return kblocks * moduli * products * m * _pad_row(cols, plane_itemsize) * plane_itemsize

    col_block = min(n, max(MAX_COL_BLOCK, MAX_BLOCK_AREA // max(m, 1)))
    if block_bytes(col_block) > block_budget:
        per_col = block_bytes(_COL_QUANTUM) / _COL_QUANTUM
        col_block = min(int(block_budget // per_col) // _COL_QUANTUM * _COL_QUANTUM, n)
    return GemmWorkspace(
        batch=batch,
        m=m,
        n=n,
        kp=kp,
        moduli=moduli,
        planes=planes,
        products=products,
        col_block=col_block,
        residue_bytes=residue_bytes,
        block_bytes=block_bytes(max(col_block, min(n, _COL_QUANTUM))),
        bound_bytes=bound_bytes,
        out_bytes=out_bytes,
        plane_itemsize=plane_itemsize,
    )


def free_device_bytes(cupy) -> int:
    """Bytes an allocation can get: free device memory plus cupy's pool's free blocks."""
    free, _ = cupy.cuda.runtime.memGetInfo()
    return int(free + cupy.get_default_memory_pool().free_bytes())
