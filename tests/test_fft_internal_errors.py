"""Internal FFT error paths: each raises with a message that says what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

from ozfft.engines.select import numpy_engine
from ozfft.fourier import cache
from ozfft.fourier.bluestein import BluesteinExecutor, build_bluestein_plan
from ozfft.fourier.cache import get_executor, get_plan
from ozfft.fourier.execute import StageExecutor
from ozfft.fourier.fixed import FixedPointExecutor, FourStepExecutor
from ozfft.fourier.plan import build_fixed_plan, build_stage_plan
from ozfft.options import FFTOptions


def test_plan_builders_name_the_length():
    with pytest.raises(ValueError, match="length 2062 has a prime factor above 64: use Bluestein"):
        build_stage_plan(2062, 16)
    with pytest.raises(
        ValueError, match="length 131 has no one-pass or four-step fixed-point plan"
    ):
        build_fixed_plan(131, "fp64")


def test_executors_refuse_plans_of_another_kind():
    one_pass = get_plan(64, FFTOptions())
    four_step = get_plan(2048, FFTOptions())
    ozaki = get_plan(64, FFTOptions(moduli=16))
    bluestein = get_plan(131, FFTOptions())
    assert four_step.four_step is not None and bluestein.bluestein is not None
    with pytest.raises(ValueError, match="the stage executor runs Ozaki-II stage plans"):
        StageExecutor(numpy_engine(), one_pass).transform(np.ones((64, 1)))
    with pytest.raises(ValueError, match="not a one-pass fixed-point plan"):
        FixedPointExecutor(ozaki)
    with pytest.raises(ValueError, match="not a four-step fixed-point plan"):
        FourStepExecutor(one_pass)
    with pytest.raises(ValueError, match="the row pass must be a one-pass executor"):
        FourStepExecutor(four_step, sub_executor=lambda sub: FourStepExecutor(four_step))
    inner_ex = get_executor(numpy_engine(), bluestein.bluestein.inner)
    with pytest.raises(ValueError, match="not a Bluestein plan"):
        BluesteinExecutor(numpy_engine(), one_pass, inner_ex)
    with pytest.raises(ValueError, match="inner must run the plan's inner plan"):
        BluesteinExecutor(numpy_engine(), bluestein, FixedPointExecutor(one_pass))
    with pytest.raises(ValueError, match="inner_executor must run the inner plan"):
        build_bluestein_plan(131, bluestein.bluestein.inner, FixedPointExecutor(one_pass))


def test_engine_without_a_fixed_point_executor_is_refused(monkeypatch):
    class OtherEngine(type(numpy_engine())):
        name = "other"

    cache.clear_plan_cache()
    with pytest.raises(NotImplementedError, match="the other engine has no fixed-point FFT"):
        get_executor(OtherEngine(), get_plan(64, FFTOptions()), "int8")
    cache.clear_plan_cache()


def test_executors_without_an_input_test_refuse_a_flag():
    """Only executors with ``checks_input`` take a non-finite flag (the CUDA fused
    passes); the others say so instead of ignoring it."""
    x = np.ones((8, 3), complex)
    flag = np.zeros(1, np.int32)
    one_pass = get_executor(numpy_engine(), get_plan(8, FFTOptions()))
    stage = get_executor(numpy_engine(), get_plan(8, FFTOptions(moduli=8)))
    for executor, call in [
        (one_pass, lambda: one_pass.forward_carried(x, 0, nonfinite=flag)),
        (one_pass, lambda: one_pass.forward_real(x.real, 0, nonfinite=flag)),
        (stage, lambda: stage.forward(x, 0, nonfinite=flag)),
    ]:
        assert not executor.checks_input
        name = type(executor).__name__
        with pytest.raises(ValueError, match=f"{name} does not test its input for NaN/Inf"):
            call()


def test_an_inverse_run_does_not_start_from_carried_fixed_point():
    """run_passes conjugates the first pass's input of an inverse run; a carried block
    has no complex values to conjugate."""
    from ozfft.fourier.runs import run_passes

    options = FFTOptions()
    x = np.random.default_rng(2).standard_normal((8, 16)) + 1j
    carry = get_executor(numpy_engine(), get_plan(16, options)).forward_carried(x, 1, keep=True)
    with pytest.raises(ValueError, match="an inverse run starts from complex values"):
        run_passes(numpy_engine(), None, [0], options, True, carry, conj=True)
