"""Shared fixtures: an RNG seeded from the test id, and GPU skipping."""

from __future__ import annotations

import sys
import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's node id (stable across runs and machines)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(autouse=True)
def _default_phase_a(monkeypatch):
    """Every test starts from the documented defaults of ``OZFFT_PHASE_A`` ("auto") and
    ``OZFFT_FUSED_SMALL`` (on), whatever the shell running the suite has; tests of the
    variables set them."""
    monkeypatch.delenv("OZFFT_PHASE_A", raising=False)
    monkeypatch.delenv("OZFFT_FUSED_SMALL", raising=False)


@pytest.fixture(autouse=True)
def _fresh_prepared_products():
    """Products prepared per call signature (``ozfft.matmul``'s and the CUDA engine's
    plans) are built afresh in every test: tests patch the module constants and choices
    they are built from."""
    linalg = sys.modules.get("ozfft.linalg")
    if linalg is not None:
        linalg._forget_prepared()


def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with cupy present")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
