"""The profiling hook (ozfft/profiling.py) and the NumPy engine's phase reports."""

from __future__ import annotations

import numpy as np
import pytest

import ozfft
from ozfft.profiling import HostClock, phase, profile_phases, profiling_active

PHASES = ("scaling", "residues", "phase_a", "phase_b")


def _operands(seed: int = 0, m: int = 24, k: int = 40, n: int = 16):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)), rng.standard_normal((k, n))


@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_matmul_reports_all_four_phases_on_cpu(mode):
    a, b = _operands()
    with profile_phases() as prof:
        ozfft.matmul(a, b, mode=mode)
    assert set(PHASES) <= set(prof.ms), prof.ms
    for name in PHASES:
        assert prof.ms[name] > 0.0, (name, prof.ms)
        assert prof.calls[name] >= 1, (name, prof.calls)
    assert prof.total_ms == pytest.approx(sum(prof.ms.values()))
    assert prof.total_ms > 0.0


def test_accurate_mode_reports_its_bound_as_scaling():
    a, b = _operands(seed=1)
    with profile_phases() as fast:
        ozfft.matmul(a, b, mode="fast")
    with profile_phases() as accurate:
        ozfft.matmul(a, b, mode="accurate")
    # fast: row_stats of A and Bt; accurate adds bound_operand x2 and bound_product
    assert accurate.calls["scaling"] > fast.calls["scaling"] >= 2


def test_profiled_result_is_unchanged():
    a, b = _operands(seed=2)
    plain = ozfft.matmul(a, b)
    with profile_phases():
        profiled = ozfft.matmul(a, b)
    np.testing.assert_array_equal(profiled, plain)


def test_complex_matmul_reports_phases():
    a, b = _operands(seed=3)
    with profile_phases() as prof:
        ozfft.matmul(a + 1j * a[::-1], b - 2j * b)
    assert set(PHASES) <= set(prof.ms)


def test_nested_block_restores_the_outer_profile():
    a, b = _operands(seed=4)
    with profile_phases() as outer:
        ozfft.matmul(a, b)
        outer_calls_before = len(outer._spans)
        with profile_phases() as inner:
            ozfft.matmul(a, b)
        # the inner block recorded its own call, not into the outer one
        assert set(PHASES) <= set(inner.ms)
        assert len(outer._spans) == outer_calls_before
        assert profiling_active()
        ozfft.matmul(a, b)  # back to the outer profile
    assert not profiling_active()
    assert set(PHASES) <= set(outer.ms)
    # two products in the outer block, one in the inner
    for name in PHASES:
        assert outer.calls[name] == 2 * inner.calls[name], (name, outer.calls, inner.calls)


def test_nothing_is_recorded_outside_a_block():
    a, b = _operands(seed=5)
    assert not profiling_active()
    with profile_phases() as prof:
        pass
    ozfft.matmul(a, b)  # after the block: must not reach the closed profile
    assert prof.ms == {} and prof.calls == {}
    assert not profiling_active()


def test_phase_without_block_is_a_no_op():
    clock = HostClock()
    with phase("scaling", clock):
        value = 1
    assert value == 1 and not profiling_active()


def test_phase_times_add_up_and_survive_exceptions():
    clock = HostClock()
    with profile_phases() as prof:
        for _ in range(3):
            with phase("x", clock):
                pass
        with pytest.raises(RuntimeError), phase("y", clock):
            raise RuntimeError("boom")
    assert prof.calls == {"x": 3, "y": 1}
    assert all(ms >= 0.0 for ms in prof.ms.values())
    assert not profiling_active()
