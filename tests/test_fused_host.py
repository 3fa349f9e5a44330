"""The fused FFT pass's host-side tables and checks (ozfft/engines/cuda/fft.py), on the CPU:
e4m3 codes of small integers, the FP8 A fragments against the INT8 ones, and the shared
memory a block needs."""

from __future__ import annotations

import numpy as np
import pytest

from ozfft.engines.cuda.fft import (
    check_shared_memory,
    e4m3_codes,
    fp8_fragment_layout,
    fragment_layout,
)
from ozfft.errors import DeviceUnavailableError
from ozfft.fourier.cache import get_plan
from ozfft.options import FFTOptions


def _decode(codes: np.ndarray) -> np.ndarray:
    """e4m3 (OCP FP8, bias 7) bit patterns to float64, normal and subnormal."""
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exp, mant = (c >> 3) & 15, c & 7
    value = np.where(exp == 0, mant / 8 * 2.0**-6, (1 + mant / 8) * 2.0 ** (exp - 7))
    return sign * value


def test_e4m3_codes_of_every_exact_integer():
    exact = [
        v
        for v in range(-448, 449)
        if v == 0
        or (abs(v) >> max(abs(v).bit_length() - 4, 0)) << max(abs(v).bit_length() - 4, 0) == abs(v)
    ]
    v = np.array(exact)
    codes = e4m3_codes(v)
    np.testing.assert_array_equal(_decode(codes), v)
    assert codes[v == 0][0] == 0 and e4m3_codes(np.array([16, -128, 240])).tolist() == [
        0x58,
        0xF0,
        0x77,
    ]
    for bad in (17, 449, -33):
        with pytest.raises(ValueError, match="not exactly an e4m3 number"):
            e4m3_codes(np.array([bad]))


@pytest.mark.parametrize("n", [64, 512, 1024])
def test_fp8_fragments_hold_the_int8_digits(n):
    """Each FP8 fragment byte pair (16 c_h, c_l) recombines to the INT8 fragment's digit c:
    the planes of a k32 stage side by side, and a k <= 16 stage's [16 c_h | c_l] tile, whose
    two k halves are the INT8 fragment's a0/a1 registers."""
    plan = get_plan(n, FFTOptions())
    digits = plan.digit_format.matrix_digits
    for stage in plan.stages:
        emb = stage.real_embedding()
        int8 = fragment_layout(emb, digits).astype(np.int64)
        fp8 = _decode(fp8_fragment_layout(emb, digits)).astype(np.int64)
        if 2 * stage.radix <= 16:
            # k 0..15 of the tile are registers a0, a1 (16 c_h), k 16..31 a2, a3 (c_l)
            high, low = fp8[:, :, :, 0, :, :, :2], fp8[:, :, :, 0, :, :, 2:]
            assert (high % 16 == 0).all() and ((0 <= low) & (low <= 15)).all()
            np.testing.assert_array_equal(high + low, int8)
        else:
            high, low = fp8[:, :, :, 0], fp8[:, :, :, 1]
            assert (high % 16 == 0).all() and ((0 <= low) & (low <= 15)).all()
            np.testing.assert_array_equal(high + low, int8)


def test_a_block_that_does_not_fit_is_a_clear_error():
    check_shared_memory(1024, 66 * 1024, 227 * 1024)  # a cluster half: fits
    with pytest.raises(
        DeviceUnavailableError, match=r"length 1024 needs 136224 bytes .* grants 101376"
    ):
        check_shared_memory(1024, 135200, 99 * 1024)
