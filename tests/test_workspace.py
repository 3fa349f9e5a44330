"""The CUDA engine's workspace plan is plain arithmetic: checked on the CPU."""

from __future__ import annotations

from ozfft.engines.cuda.workspace import K_BLOCK, MAX_COL_BLOCK, pad_k, plan_workspace


def _plan(batch=1, m=16384, n=16384, k=16384, **overrides):
    options = dict(
        moduli=16,
        is_complex=False,
        products=1,
        accurate=False,
        out_itemsize=8,
        block_budget=1 << 40,
    )
    return plan_workspace(batch, m, n, k, **(options | overrides))


def test_pad_k():
    assert [pad_k(k) for k in (1, 15, 16, 17, 1000)] == [16, 16, 16, 32, 1008]


def test_whole_product_when_it_fits():
    ws = _plan(m=1024, n=1024, k=1024)
    assert ws.col_block == 1024
    assert ws.residue_bytes == 16 * 1 * (1024 + 1024) * 1024
    assert ws.block_bytes == 16 * 1 * 1024 * 1024 * 4
    assert ws.total_bytes == ws.residue_bytes + ws.block_bytes + ws.out_bytes


def test_column_blocks_under_budget():
    # 16384^2 DGEMM, 16 moduli: 1 MiB of INT32 planes per column; allow 6 GiB
    budget = 6 << 30
    ws = _plan(block_budget=budget)
    assert ws.col_block % 256 == 0 and 0 < ws.col_block < MAX_COL_BLOCK
    assert ws.block_bytes <= budget < 16 * 16384 * (ws.col_block + 256) * 4


def test_complex_and_k_blocking_counted():
    ws = _plan(
        batch=2,
        m=100,
        n=50,
        k=K_BLOCK + 1,
        moduli=8,
        is_complex=True,
        products=3,
        accurate=True,
        out_itemsize=16,
    )
    kp = pad_k(K_BLOCK + 1)
    assert ws.planes == 3 and ws.kp == kp
    assert ws.residue_bytes == 8 * 3 * 2 * 150 * kp
    assert ws.block_bytes == 2 * 8 * 3 * 100 * 52 * 4  # doubled for k-blocking, ldc = 52
    assert ws.bound_bytes == 2 * 150 * kp + 2 * 100 * 50 * 8


def test_impossible_budget_gives_zero_block():
    ws = _plan(m=4096, n=4096, k=4096, block_budget=1000)
    assert ws.col_block == 0 and ws.block_bytes > 1000


def test_column_block_capped_for_int8_gemm_speed():
    assert _plan().col_block == MAX_COL_BLOCK == 8192


def test_short_m_products_take_wide_blocks():
    ws = _plan(m=64, n=1 << 22, k=64, is_complex=True, products=3)
    assert ws.col_block == (1 << 27) // 64


def test_row_stats_launch_fits_the_rows():
    """Row statistics: rows up to 16 values per thread of a 1024-thread block are held in
    registers (one block per SM); wider rows keep two such blocks per SM; short rows
    (stacks of small products) get a block no wider than the row's power of two and
    enough blocks to fill the device (their reductions are order-free, so any launch
    gives the same bits)."""
    from ozfft.engines.cuda.constants import STATS_CACHED
    from ozfft.engines.cuda.engine import _STATS_THREADS, _stats_launch

    cached = "oz_row_stats_cached"
    assert _stats_launch(16384, 16384, 132) == (cached, _STATS_THREADS, 132)
    assert _stats_launch(100, _STATS_THREADS + 1, 132) == (cached, _STATS_THREADS, 100)
    wide = _STATS_THREADS * STATS_CACHED + 1
    assert _stats_launch(16384, wide, 132) == ("oz_row_stats", _STATS_THREADS, 264)
    for rows, width in [(64000, 128), (1000, 33), (5, 1), (3, 5000), (10**6, 2), (9, 1024)]:
        name, threads, blocks = _stats_launch(rows, width, 132)
        assert 32 <= threads <= _STATS_THREADS and threads & (threads - 1) == 0
        assert threads >= min(width, _STATS_THREADS) and (threads < 64 or threads < 2 * width)
        assert 1 <= blocks <= rows and threads * blocks <= 2048 * 132
        assert (name == cached) == (width > threads)
    assert _stats_launch(64000, 128, 132) == ("oz_row_stats", 128, 2112)


def test_small_product_chunks():
    """The fused small-product kernel's shared memory: 4096 bytes of reduced sums per
    modulus and plane, 8192 of residues per modulus and plane in the chunk, as few chunks
    as fit, of even size."""
    from ozfft.engines.cuda.constants import small_product_chunk

    budget = 227 * 1024 // 2 - 1024  # a real block, two per H100/H200 SM
    assert small_product_chunk(14, 1, budget) == (7, 14 * 4096 + 7 * 8192)
    assert small_product_chunk(2, 1, budget) == (2, 2 * 4096 + 2 * 8192)
    assert small_product_chunk(20, 1, budget) == (4, 20 * 4096 + 4 * 8192)
    assert small_product_chunk(14, 2, 227 * 1024) == (7, 14 * 8192 + 7 * 16384)
    for count, planes, per_block in ((14, 1, budget), (19, 2, 227 * 1024), (9, 2, 100_000)):
        chunk, smem = small_product_chunk(count, planes, per_block)
        assert smem <= per_block and 1 <= chunk <= count
    assert small_product_chunk(20, 2, 160 * 1024) is None  # the sums alone fill it


def test_complex_tiles_per_block_keeps_two_waves():
    """The complex slices kernel takes two column tiles a block only where the launch keeps
    at least two blocks per SM."""
    from ozfft.engines.cuda.engine import _complex_tiles_per_block

    assert _complex_tiles_per_block(1000, 1, 2, 132) == 2  # 1000 blocks for 264 slots
    assert _complex_tiles_per_block(500, 1, 2, 132) == 1  # 500 blocks: fewer than two waves
    assert _complex_tiles_per_block(264, 2, 4, 132) == 2
    assert _complex_tiles_per_block(1000, 1, 3, 132) == 1  # an odd tile would wait alone
    assert _complex_tiles_per_block(5, 1, 2, 132) == 1


def test_byte_planes_take_a_quarter_of_the_bytes():
    """Phase-A planes of residues stored as bytes (``plane_itemsize=1``, the CUTLASS Phase
    A): a quarter of the INT32 planes' bytes per column, so four times the columns under one
    budget, and rows padded to whole 16-byte words (16 bytes, 4 INT32 sums)."""
    budget = 6 << 30
    ints, byte_planes = _plan(block_budget=budget), _plan(block_budget=budget, plane_itemsize=1)
    assert byte_planes.block_bytes == 16 * 16384 * byte_planes.ldc
    assert byte_planes.col_block == min(4 * ints.col_block, MAX_COL_BLOCK)
    whole = _plan(m=1024, n=1024, k=256, plane_itemsize=1)
    assert whole.block_bytes == 16 * 1024 * 1024
    assert _plan(m=8, n=33, k=16, plane_itemsize=1).ldc == 48
    assert _plan(m=8, n=33, k=16).ldc == 36
