"""The accuracy plan's one-pass probe (``kernels/gemm/plan_probe.cu``, k <= 64): the
deficits and maxima the staged decision forms on the NumPy engine, for every shape edge
and for data that make them vary; and ``ozfft.matmul`` with it: the NumPy engine's plans
and bits (needs a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft.engines.base import PendingProbe
from ozfft.linalg import matmul_plan
from ozfft.ozaki import bounds
from ozfft.ozaki.residue_system import int8_system
from ozfft.reference import phi_matrix
from ozfft.scheme.gemm import compute_shifts
from tests.helpers import staged_tiled_probe

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

#: (batch, m, k, n): one tile, partial tiles of 4 and of 64 rows, several blocks each way
SHAPES = [(1, 1, 1, 1), (3, 5, 7, 6), (2, 64, 64, 64), (1, 130, 33, 70), (4, 65, 64, 129)]
#: k past the kernel's own statistics: all of k (<= 128), and a 128-index subset
GIVEN_SHAPES = [(2, 37, 100, 45), (1, 70, 300, 66), (3, 9, 2049, 5), (1, 150, 200, 133)]


def _engines():
    from ozfft.engines.select import cuda_engine, numpy_engine

    return numpy_engine(), cuda_engine()


def _data(rng, kind: str, shape, dtype) -> np.ndarray:
    """Operand rows whose deficits differ: phi-matrices, wide exponent ranges, zero rows
    and entries, rows with one huge entry (the others' magnitudes floor to 0), subnormals."""
    if kind == "phi":
        return phi_matrix(rng, shape, 0.5, dtype)
    x = phi_matrix(rng, shape, 16.0 if kind == "wide" else 1.0, dtype)
    if kind == "mixed":
        rows = x.reshape(-1, shape[-1])
        rows[::3] = 0.0
        rows[1::4, ::2] = 0.0
        rows[2::5, 0] *= 2.0**200
        rows[3::7] *= 2.0**-1060  # subnormal rows
    return x


@pytest.mark.parametrize("shape", SHAPES + GIVEN_SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("kind", ["phi", "wide", "mixed"])
def test_probe_is_the_staged_tiled_test(shape, dtype, kind, rng):
    """Deficits at several truncation budgets and CRT budgets, and the four maxima: the
    whole stack and each of its first items alone; for k <= 64 with the statistics formed
    in the kernel and given (``row_stats``), beyond with them given and the inner-index
    subset of the staged test."""
    numpy_engine, cuda_engine = _engines()
    batch, m, k, n = shape
    a = numpy_engine.prepare_operand(_data(rng, kind, (batch, m, k), dtype))
    bt = numpy_engine.prepare_operand(_data(rng, kind, (batch, n, k), dtype))
    # the budget of the default call (none where k u is below float64's rounding: 56)
    r0 = bounds.truncation_budget(k * (2 if a.dtype.kind == "c" else 1), "fp64", 53, 1) or 56
    for items in (slice(None), slice(0, 1), slice(1, 2)):
        xa, xb = a[items], bt[items]
        if xa.shape[0] == 0:
            continue
        da, db = cp.asarray(xa), cp.asarray(xb)
        stats = tuple(
            cuda_engine.row_stats(x, name, need_sumsq=True) for x, name in ((da, "a"), (db, "b"))
        )
        for r, count in ((r0, 16), (r0 + 40, 14), (r0 - 30, 20), (r0 + 90, 8)):
            want, rules, index = staged_tiled_probe(
                numpy_engine, xa, xb, budget_bits=int8_system(count).budget_bits, r=r
            )
            index = None if index is None else cp.asarray(index)
            given = cuda_engine.tiled_plan_probe(da, db, rules, stats=stats, index=index)
            assert given() == want, (items, r, count, "given")
            assert given.shifts is None  # (the staged statistics' product forms its own)
            small = cuda_engine.tiled_plan_probe(da, db, rules)
            assert (small is None) == (k > 64)
            if small is not None:
                # the rows' fast-mode shifts for the budget, as the staged stages form them
                sa, sb = compute_shifts(numpy_engine, xa, xb, count, "fast")
                np.testing.assert_array_equal(cp.asnumpy(small.shifts[0]), sa)
                np.testing.assert_array_equal(cp.asnumpy(small.shifts[1]), sb)
                assert small() == want, (items, r, count)
                assert small.bt is db  # (prepared already: no copy)
                # B read in place: Bt's transposed view, whose rows the kernel writes
                b_rows = cp.ascontiguousarray(db.swapaxes(-1, -2))
                in_place = cuda_engine.tiled_plan_probe(da, b_rows.swapaxes(-1, -2), rules)
                assert in_place() == want, (items, r, count, "in place")
                for got, expected in zip(in_place.shifts, small.shifts, strict=True):
                    np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(expected))
                assert in_place.bt.flags.c_contiguous and in_place.bt.shape == db.shape
                bits = cp.asnumpy(in_place.bt).view(np.uint64)
                np.testing.assert_array_equal(bits, xb.view(np.uint64))
                # B read in place without writing Bt's rows (the prepared default call's
                # probe where its product reads B in place too): the same test and shifts.
                # (A one-column, one-index B's view is C-contiguous too: Bt's rows as given.)
                view = b_rows.swapaxes(-1, -2)
                if view.flags.c_contiguous:
                    continue
                plan = cuda_engine._plan_probe(da, view, rules, size=k, given=False, keep_bt=False)
                shared = cuda_engine._run_probe(plan, da, view)
                assert plan.b_in_place and not plan.keeps_bt and shared.bt is None
                assert shared() == want, (items, r, count, "in place, no rows")
                for got, expected in zip(shared.shifts, small.shifts, strict=True):
                    np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(expected))


@pytest.mark.parametrize("shape", [(3, 5, 7, 6), (2, 64, 64, 64), (5, 33, 64, 17)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("kind", ["phi", "wide", "mixed"])
def test_probe_in_one_launch_is_the_three_launch_probe(shape, dtype, kind, rng, monkeypatch):
    """Items of at most 64 rows and columns run the whole probe in one launch
    (``oz_probe_items_*``), here on a user's non-blocking stream: for each layout of B (Bt's
    rows; B read in place with Bt's rows written, and without) and at four truncation and
    CRT budgets, the staged tiled test's deficits and maxima, the staged fast-mode shifts,
    and Bt's rows as B's bits; the three launches give the same."""
    from ozfft.engines.cuda import engine as cuda_module

    numpy_engine, cuda_engine = _engines()
    batch, m, k, n = shape
    a = numpy_engine.prepare_operand(_data(rng, kind, (batch, m, k), dtype))
    bt = numpy_engine.prepare_operand(_data(rng, kind, (batch, n, k), dtype))
    r0 = bounds.truncation_budget(k * (2 if a.dtype.kind == "c" else 1), "fp64", 53, 1) or 56
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        da, dbt = cp.asarray(a), cp.asarray(bt)
        view = cp.ascontiguousarray(dbt.swapaxes(-1, -2)).swapaxes(-1, -2)  # B, in place
        layouts = ((dbt, True), (view, True), (view, False))
        for r, count in ((r0, 16), (r0 + 40, 14), (r0 - 30, 20), (r0 + 90, 8)):
            want, rules, _ = staged_tiled_probe(
                numpy_engine, a, bt, budget_bits=int8_system(count).budget_bits, r=r
            )
            shifts = compute_shifts(numpy_engine, a, bt, count, "fast")
            for items_max in (cuda_module._PROBE_ITEMS_MAX, 0):
                monkeypatch.setattr(cuda_module, "_PROBE_ITEMS_MAX", items_max)
                for i, (operand, keep_bt) in enumerate(layouts):
                    plan = cuda_engine._plan_probe(da, operand, rules, size=k, given=False,
                                                   keep_bt=keep_bt)  # fmt: skip
                    assert (plan.items_kernel is not None) == (items_max > 0)
                    assert plan.b_in_place == (operand is view)
                    pending = cuda_engine._run_probe(plan, da, operand)
                    assert pending() == want, (r, count, items_max, i)
                    for got, expected in zip(pending.shifts, shifts, strict=True):
                        np.testing.assert_array_equal(cp.asnumpy(got), expected)
                    if pending.bt is not None:
                        bits = cp.asnumpy(pending.bt).view(np.uint64)
                        np.testing.assert_array_equal(bits, bt.view(np.uint64))


def test_probe_in_one_launch_for_one_wave_of_items():
    """The items kernels fit this GPU (at least one block an SM), and a stack takes the one
    launch up to as many items as one wave of its blocks holds, three launches past it."""
    from ozfft.engines.cuda import engine as cuda_module

    _, cuda_engine = _engines()
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rules = staged_tiled_probe(
        _engines()[0], np.ones((1, 4, 4)), np.ones((1, 4, 4)), budget_bits=125, r=50
    )[1]
    for dtype, planes in ((np.float64, 1), (np.complex128, 2)):
        per_sm = cuda_engine._probe_items_per_sm(
            f"oz_probe_items_in_place_{'complex' if planes == 2 else 'real'}", planes, 0
        )
        assert per_sm >= 1
        for layout in ("rows", "in place"):
            name = "in_place_" if layout == "in place" else ""
            kind = "complex" if planes == 2 else "real"
            stage = cuda_module._probe_stage_bytes(4, planes) if layout == "in place" else 0
            wave = sms * cuda_engine._probe_items_per_sm(
                f"oz_probe_items_{name}{kind}", planes, max(stage, cuda_module._PROBE_MINIMA_BYTES)
            )
            for batch, one in ((wave, True), (wave + 1, False)):
                a = cp.zeros((batch, 4, 4), dtype)
                bt = cp.zeros((batch, 4, 4), dtype)
                if layout == "in place":
                    bt = cp.zeros((batch, 4, 4), dtype).swapaxes(-1, -2)
                plan = cuda_engine._plan_probe(a, bt, rules, size=4, given=False, keep_bt=False)
                assert (plan.items_kernel is not None) == one, (dtype, layout, batch)


def _probes(monkeypatch):
    """The CUDA engine's probe results of the calls that follow, one per probe run (the
    general path's and the prepared default calls' queue the same ``_queue_probe``; a
    probe the decision reads twice is recorded once)."""
    from ozfft.engines.cuda.engine import CudaEngine

    seen = []
    probe = CudaEngine._queue_probe

    def spy(self, *args, **kwargs):
        pending, shifts_at = probe(self, *args, **kwargs)
        read = []

        def result():
            if not read:
                read.append(pending())
                seen.append(read[0])
            return read[0]

        return PendingProbe(result, pending.shifts, pending.bt), shifts_at

    monkeypatch.setattr(CudaEngine, "_queue_probe", spy)
    return seen


@pytest.fixture(params=["prepared", "general"])
def default_path(request, monkeypatch):
    """Default calls as a user makes them (small ones prepared per signature:
    ``linalg._guaranteed_product``) and, for comparison, all on the general path
    (``guaranteed_matmul``, whose own probe queues the speculative product)."""
    if request.param == "general":
        from ozfft import linalg

        prepared = linalg._prepared_product

        def explicit_only(a, b, precision, moduli, *rest):
            return None if moduli is None else prepared(a, b, precision, moduli, *rest)

        monkeypatch.setattr(linalg, "_prepared_product", explicit_only)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize(
    "shape",
    [(5, 64, 64, 64), (3, 37, 50, 29), (1, 130, 64, 70), (2, 70, 300, 33), (1, 96, 1000, 80)],
)
def test_default_calls_with_the_probe_are_the_numpy_engines(
    dtype, shape, rng, monkeypatch, default_path
):
    batch, m, k, n = shape
    probes = _probes(monkeypatch)
    for phi in (0.5, 8.0):  # the probe proves the default count; it does not
        a = phi_matrix(rng, (batch, m, k), phi, dtype)
        b = phi_matrix(rng, (batch, k, n), phi, dtype)
        probes.clear()
        got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b)))
        assert len(probes) == 1
        np.testing.assert_array_equal(got, ozfft.matmul(a, b))
        plan = matmul_plan(a, b)
        proved = probes[0].deficit_a <= 0 and probes[0].deficit_b <= 0
        assert (plan.reason == "default moduli proved (tiled bound)") == proved
        probes.clear()  # the plan alone on the GPU: the same probe, the same plan
        assert matmul_plan(cp.asarray(a), cp.asarray(b)) == plan
        assert len(probes) == 1
        if phi == 0.5 and np.dtype(dtype) in (np.float64, np.complex128):
            assert proved


def test_near_overflow_truncates_as_the_numpy_engine(rng, monkeypatch, default_path):
    probes = _probes(monkeypatch)
    a = phi_matrix(rng, (4, 20, 24), 0.5, np.float64) * 2.0**510
    b = phi_matrix(rng, (4, 24, 11), 0.5, np.float64) * 2.0**510
    with np.errstate(over="ignore", invalid="ignore"):
        want = ozfft.matmul(a, b)
    got = cp.asnumpy(ozfft.matmul(cp.asarray(a), cp.asarray(b)))
    (probe,) = probes
    nb_a, e_b, nb_b, e_a = probe.maxima
    assert nb_a + e_b > 1023 and nb_b + e_a > 1023 and probe.deficit_a <= 0
    np.testing.assert_array_equal(got, want)


def test_probe_counts_non_finite_entries_once(rng, monkeypatch, default_path):
    """NaN and Inf entries (counted by the blocks of the first column / row tile, over
    several tiles and items) are refused with the staged path's message: the operand (A
    first) and the count; the probe raised it."""
    from ozfft.engines.cuda.engine import CudaEngine

    raised = []
    probe = CudaEngine._queue_probe  # (the general path's probe and the prepared calls')

    def spy(self, *args, **kwargs):
        pending, shifts_at = probe(self, *args, **kwargs)

        def result():
            try:
                return pending()
            except ozfft.NonFiniteInputError:
                raised.append(True)
                raise

        return PendingProbe(result, pending.shifts, pending.bt), shifts_at

    monkeypatch.setattr(CudaEngine, "_queue_probe", spy)
    # (items wider than 64: three launches; of at most 64 rows and columns: one)
    for m, n in ((70, 130), (40, 50)):
        a = phi_matrix(rng, (3, m, 8), 0.5, np.complex128)
        b = phi_matrix(rng, (3, 8, n), 0.5, np.complex128)
        a[1, 2, 3] = np.nan
        a[2, m - 1, 0] = np.inf + 1j
        b[0, 0, n - 1] = complex(np.nan, np.inf)
        for x, y, operand, count in ((a, b, "a", 2), (np.nan_to_num(a), b, "b", 2)):
            with pytest.raises(ozfft.NonFiniteInputError) as info:
                ozfft.matmul(cp.asarray(x), cp.asarray(y))
            assert (info.value.operand, info.value.count) == (operand, count)
    assert raised == [True] * 4


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_probe_prepares_a_view_it_cannot_read_in_place(dtype, rng):
    """A transposed view of a B that is not C-contiguous (every other column of a wider
    stack; a broadcast batch) is prepared by the probe, which hands back that copy."""
    from ozfft.scheme.gemm import _TransposedB

    numpy_engine, cuda_engine = _engines()
    a = phi_matrix(rng, (3, 20, 16), 0.5, dtype)
    wide = phi_matrix(rng, (3, 16, 24), 0.5, dtype)
    da = cp.asarray(a)
    r = bounds.truncation_budget(16 * (2 if a.dtype.kind == "c" else 1), "fp64", 53, 1)
    dwide = cp.asarray(wide)
    views = (
        (wide[:, :, ::2], dwide[:, :, ::2]),
        (np.broadcast_to(wide[:1], wide.shape), cp.broadcast_to(dwide[:1], wide.shape)),
    )
    budget = int8_system(16).budget_bits
    for b, db in views:
        bt = np.ascontiguousarray(b.swapaxes(-1, -2))
        want, rules, _ = staged_tiled_probe(numpy_engine, a, bt, budget_bits=budget, r=r)
        pending = cuda_engine.tiled_plan_probe(da, db.swapaxes(-1, -2), rules)
        assert pending() == want
        assert pending.bt.flags.c_contiguous
        np.testing.assert_array_equal(cp.asnumpy(pending.bt), bt)
        b_t = _TransposedB(cuda_engine, db.swapaxes(-1, -2))
        b_t.take(pending.bt)
        assert b_t.rows() is pending.bt


def test_probe_off_with_the_fused_small_switch(rng, monkeypatch):
    probes = _probes(monkeypatch)
    a = phi_matrix(rng, (6, 33, 40), 0.5, np.complex128)
    b = phi_matrix(rng, (6, 40, 17), 0.5, np.complex128)
    da, db = cp.asarray(a), cp.asarray(b)
    with_probe = cp.asnumpy(ozfft.matmul(da, db))
    monkeypatch.setenv("OZFFT_FUSED_SMALL", "0")
    staged = cp.asnumpy(ozfft.matmul(da, db))
    assert len(probes) == 1  # the first call's probe; none with the switch off
    np.testing.assert_array_equal(with_probe, staged)


def test_the_deferred_test_waits_for_the_rows_on_a_users_stream(rng):
    """The tile-pair test is queued at the first wait, on the engine's side stream, from a
    fork point behind the rows: on a user's non-blocking stream whose rows are queued behind
    ~10 ms of other work, with a product queued in between, it still reads the rows' state
    (the staged decision's deficits); a default call there, whose product is queued before
    the wait, gives the NumPy engine's bits. (A first probe, waited for before the work is
    queued, builds the kernels and the side stream, so that the host reaches the wait while
    the rows are still queued; it runs on other magnitudes, so that the memory the second
    probe may be given back holds another probe's answer, not this one's. Items of more
    than 64 columns: items of at most 64 rows and columns run the whole probe in one
    launch, on this stream.)"""
    numpy_engine, cuda_engine = _engines()
    batch, m, k, n = 200, 64, 64, 72
    a = _data(rng, "phi", (batch, m, k), np.complex128)  # (the probe proves the default
    b = _data(rng, "phi", (batch, k, n), np.complex128)  # count: the product is queued first)
    bt = np.ascontiguousarray(b.swapaxes(-1, -2))
    r = bounds.truncation_budget(2 * k, "fp64", 53, 1)
    want, rules, _ = staged_tiled_probe(
        numpy_engine, a, bt, budget_bits=int8_system(16).budget_bits, r=r
    )
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        da, db = cp.asarray(a), cp.asarray(b)
        other = (da * 2.0**40, (db * 2.0**-30).swapaxes(-1, -2))  # (B read in place, too)
        first = cuda_engine.tiled_plan_probe(*other, rules)
        assert first().maxima != want.maxima
        busy = cp.ones((4096, 4096))
        stream.synchronize()
        for _ in range(4):  # ~10 ms of work ahead of the probe's rows on this stream
            busy = busy @ busy * (1 / 4096)
        pending = cuda_engine.tiled_plan_probe(da, db.swapaxes(-1, -2), rules)
        busy @ busy  # more work queued on this stream before the wait
        assert pending() == want
        got = ozfft.matmul(da, db)
        stream.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(got), ozfft.matmul(a, b))


def test_prepared_default_call_out_of_memory_states_its_product(rng):
    """A prepared default call whose B the probe must copy (every other column of a wider
    stack) raises DeviceMemoryError naming the stack and its products' m x k x n where that
    copy does not fit, as the general path's decision does, with a lower estimate that
    counts every item's rows of both operands."""
    a = cp.asarray(phi_matrix(rng, (20, 48, 64), 0.5, np.complex128))
    wide = cp.asarray(phi_matrix(rng, (20, 64, 60), 0.5, np.complex128))
    b = wide[..., ::2]  # (20, 64, 30), not C-contiguous: the probe prepares Bt's rows
    want = ozfft.matmul(cp.asnumpy(a), cp.asnumpy(b))
    np.testing.assert_array_equal(cp.asnumpy(ozfft.matmul(a, b)), want)  # (prepared here)
    pool = cp.cuda.MemoryPool()
    pool.set_limit(size=1024)
    with cp.cuda.using_allocator(pool.malloc):
        with pytest.raises(
            ozfft.DeviceMemoryError, match="stack of 20 48x64x30 products needs"
        ) as e:
            ozfft.matmul(a, b)
    assert e.value.needed_bytes >= a.nbytes + b.nbytes
    pool.free_all_blocks()
    np.testing.assert_array_equal(cp.asnumpy(ozfft.matmul(a, b)), want)


def test_probe_out_of_memory_states_its_bytes(rng):
    """Where the probe's one allocation (its state and, reading B in place for a product
    that does not, Bt's rows: items of 32 rows, two a product block) does not fit, the
    call raises DeviceMemoryError naming it and the bytes it needs: at least Bt's rows,
    which it writes from B."""
    a = cp.asarray(phi_matrix(rng, (400, 32, 32), 0.5, np.complex128))
    b = cp.asarray(phi_matrix(rng, (400, 32, 32), 0.5, np.complex128))
    ozfft.matmul(a, b)  # compiled outside the limit
    # a pool of its own: the default pool may hold free parts of chunks that earlier tests
    # split, which serve a request without growing the pool (and so without its limit)
    pool = cp.cuda.MemoryPool()
    pool.set_limit(size=b.nbytes // 2)  # less than Bt's rows
    with cp.cuda.using_allocator(pool.malloc):
        with pytest.raises(ozfft.DeviceMemoryError, match=r"the plan probe's state needs \d+") as e:
            ozfft.matmul(a, b)
    assert e.value.needed_bytes >= b.nbytes
    pool.free_all_blocks()
    want = ozfft.matmul(cp.asnumpy(a), cp.asnumpy(b))  # the default pool again: it runs
    np.testing.assert_array_equal(cp.asnumpy(ozfft.matmul(a, b)), want)


def test_a_probe_read_dropped_unread_parks_its_buffer(rng):
    """Where a prepared default call raises after queueing the probe's read (its product's
    output does not fit), the read's page-locked buffer is parked, not given back to cupy's
    pool, while the copy may still write it (behind ~10 ms of other work on the stream);
    a later call takes it back once the copy is done and gives the NumPy engine's bits."""
    import gc

    from ozfft.engines.cuda import engine as cuda_module

    a = cp.asarray(phi_matrix(rng, (200, 64, 64), 0.5, np.complex128))
    b = cp.asarray(phi_matrix(rng, (200, 64, 64), 0.5, np.complex128))
    want = ozfft.matmul(cp.asnumpy(a), cp.asnumpy(b))
    gc.collect()  # (reads earlier tests dropped: parked now, their copies done below)
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(ozfft.matmul(a, b)), want)  # (prepared here)
    device = cp.cuda.runtime.getDevice()
    kept = {slot[1] for slot in cuda_module._KEPT.reads[device]}  # the buffers' addresses
    parked = cuda_module._KEPT.parked_reads.setdefault(device, [])
    assert kept and not parked
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        busy, out = cp.ones((4096, 4096)), cp.empty((4096, 4096))
        stream.synchronize()
        for _ in range(4):  # ~10 ms of work ahead of the probe on this stream
            cp.matmul(busy, busy, out=out)
        pool = cp.cuda.MemoryPool()  # the probe's state fits, the product's output not
        pool.set_limit(size=a.nbytes // 2)
        with cp.cuda.using_allocator(pool.malloc):
            with pytest.raises(ozfft.DeviceMemoryError, match="needs"):
                ozfft.matmul(a, b)
        gc.collect()  # (the exception's frames held the pending probe)
        assert len(parked) == 1 and parked[0][1] in kept  # (a kept buffer, not freed)
        stream.synchronize()
        got = ozfft.matmul(a, b)  # takes the parked buffer back (its copy is done)
        stream.synchronize()
    assert not parked
    assert kept <= {slot[1] for slot in cuda_module._KEPT.reads[device]}
    np.testing.assert_array_equal(cp.asnumpy(got), want)
