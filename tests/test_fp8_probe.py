"""``ozfft bench fp8``: the e4m3 encoding of FP8 digits and the GPU probe of FP8
tensor-core accumulation (the GPU part needs a GPU with FP8 tensor cores)."""

from __future__ import annotations

import importlib.util

import pytest

from ozfft.bench import fp8

# OCP 8-bit floating point specification (E4M3): sign, exponent bias 7, 3 mantissa bits
_SPEC = {1: 0x38, 2: 0x40, 3: 0x44, 5: 0x4A, 7: 0x4E, 8: 0x50, 9: 0x51, 15: 0x57, 16: 0x58}


def test_e4m3_bytes_follow_the_spec():
    for value, byte in _SPEC.items():
        assert fp8.e4m3_byte(value) == byte
        assert fp8.e4m3_byte(-value) == byte | 0x80
    assert fp8.e4m3_byte(0) == 0
    for bad in (17, -17, 100):
        with pytest.raises(ValueError, match="not an integer e4m3 holds exactly"):
            fp8.e4m3_byte(bad)


def test_exact_sum_and_table():
    steps = [("full", 16, 16), ("full", 16, -16), ("unit", 3, -5)]
    assert fp8.exact_sum(steps) == 32 * 256 - 32 * 256 - 15
    result = {
        "gpu": "Some GPU",
        "instruction": "mma",
        "every_digit_product_exact": True,
        "full_chain_exact": {32: True, 64: False},
        "alternating_chain_exact": {32: True, 64: True},
        "plus_one_after_sum_exact": {8192: True, 16384: False},
        "plus_one_after_cancellation_exact": {8192: True, 16384: True},
        "retained_bits": 14,
        "largest_exact_worst_case_k": 32,
        "k_block": 64,
    }
    text = "\n".join(fp8.markdown(result))
    assert "Bits the accumulator keeps: 14" in text
    assert "| 64 | 16384 | **no** | yes | 16384 | **no** | yes |" in text


@pytest.mark.gpu
def test_fp8_probe_on_the_gpu():
    """Every digit product is exact, and worst-case chains are exact up to the k-block the
    probe reports (the proof an FP8 Phase A blocks its sums by)."""
    cp = pytest.importorskip("cupy")
    from ozfft.engines.select import compute_capability

    try:
        capability = compute_capability()
    except cp.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA GPU")
    if capability < (8, 9):
        with pytest.raises(RuntimeError, match=r"compute capability 8\.9"):
            fp8.measure(4)
        return
    result = fp8.measure(256)
    assert result["every_digit_product_exact"]
    assert result["retained_bits"] is not None and result["retained_bits"] >= 14
    for k, ok in result["full_chain_exact"].items():
        if k * 256 < 1 << result["retained_bits"]:
            assert ok, k  # worst-case partial sums within the retained bits stay exact
    # the encoding, against torch's float8_e4m3fn where torch is installed
    if importlib.util.find_spec("torch") is not None:
        import torch

        values = list(range(-16, 17))
        bytes_ = torch.tensor(values, dtype=torch.float32).to(torch.float8_e4m3fn)
        assert bytes_.view(torch.uint8).tolist() == [fp8.e4m3_byte(v) for v in values]


def test_fp8_needs_compute_capability_8_9(monkeypatch):
    """A GPU without FP8 tensor cores gets an error that says so (no GPU needed: the
    device's capability is stubbed)."""
    monkeypatch.setattr(fp8, "compute_capability", lambda: (8, 6))
    with pytest.raises(RuntimeError, match=r"compute capability 8\.9 or later \(this GPU: 8\.6\)"):
        fp8.measure(4)
