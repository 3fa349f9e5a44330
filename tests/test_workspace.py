"""The CUDA engine's workspace plan is plain arithmetic: checked on the CPU."""

from __future__ import annotations

from ozfft.engines.cuda.workspace import K_BLOCK, MAX_COL_BLOCK, pad_k, plan_workspace


def test_pad_k():
    assert [pad_k(k) for k in (1, 15, 16, 17, 1000)] == [16, 16, 16, 32, 1008]


def test_whole_product_when_it_fits():
    ws = plan_workspace(
        1,
        1024,
        1024,
        1024,
        moduli=16,
        is_complex=False,
        products=1,
        accurate=False,
        out_itemsize=8,
        block_budget=1 << 40,
    )
    assert ws.col_block == 1024
    assert ws.residue_bytes == 16 * 1 * (1024 + 1024) * 1024
    assert ws.block_bytes == 16 * 1 * 1024 * 1024 * 4
    assert ws.total_bytes == ws.residue_bytes + ws.block_bytes + ws.out_bytes


def test_column_blocks_under_budget():
    # 16384^2 DGEMM, 16 moduli: the INT32 planes of all columns are 17 GB; allow 8 GiB
    budget = 8 << 30
    ws = plan_workspace(
        1,
        16384,
        16384,
        16384,
        moduli=16,
        is_complex=False,
        products=1,
        accurate=False,
        out_itemsize=8,
        block_budget=budget,
    )
    assert ws.col_block % 256 == 0 and 0 < ws.col_block < 16384
    assert ws.block_bytes <= budget < 16 * 16384 * (ws.col_block + 256) * 4


def test_complex_and_k_blocking_counted():
    ws = plan_workspace(
        2,
        100,
        50,
        K_BLOCK + 1,
        moduli=8,
        is_complex=True,
        products=3,
        accurate=True,
        out_itemsize=16,
        block_budget=1 << 40,
    )
    kp = pad_k(K_BLOCK + 1)
    assert ws.planes == 3 and ws.kp == kp
    assert ws.residue_bytes == 8 * 3 * 2 * 150 * kp
    assert ws.block_bytes == 2 * 8 * 3 * 100 * 52 * 4  # doubled for k-blocking, ldc = 52
    assert ws.bound_bytes == 2 * 150 * kp + 2 * 100 * 50 * 8


def test_impossible_budget_gives_zero_block():
    ws = plan_workspace(
        1,
        4096,
        4096,
        4096,
        moduli=16,
        is_complex=False,
        products=1,
        accurate=False,
        out_itemsize=8,
        block_budget=1000,
    )
    assert ws.col_block == 0 and ws.block_bytes > 1000


def test_column_block_capped_for_int8_gemm_speed():
    ws = plan_workspace(
        1,
        16384,
        16384,
        16384,
        moduli=16,
        is_complex=False,
        products=1,
        accurate=False,
        out_itemsize=8,
        block_budget=1 << 40,
    )
    assert ws.col_block == MAX_COL_BLOCK == 8192
