"""pytest plugin: numpy's and scipy's own FFT test suites, run against ozfft.

Loaded by :mod:`tests.peer.run` into a pytest process that collects one suite of the
*installed* numpy or scipy (``OZFFT_PEER_SUITE``):

``numpy``      ``numpy/fft/tests`` with every ``numpy.fft`` function that ozfft has
               replaced by ozfft's (patched before the test modules are imported, so
               ``parametrize`` lists made at import time hold ozfft's functions too).
               The replacement answers through :func:`ozfft.scipy_backend.dispatch`,
               the scipy backend's own decision, and hands the same calls (long double,
               non-finite input, foreign plans) to numpy's original function, as scipy
               is the fallback of the backend.
``scipy``      ``scipy/fft/tests`` with ozfft as the global ``scipy.fft`` backend and
               scipy registered as the fallback backend.
``pocketfft``  ``scipy/fft/_pocketfft/tests``, which import pocketfft's functions
               directly (``from scipy.fft._pocketfft import fft, ...``): while those
               modules are imported, the names are bound to the ``scipy.fft``
               multimethods of the same name, so every call goes through the backend
               set-up above (ozfft first, scipy's pocketfft as fallback). The originals
               are restored right after the import, so scipy's fallback still runs
               pocketfft itself.

Worker processes (scipy starts them by forkserver) preload :mod:`tests.peer.worker`,
which makes the same ``scipy.fft`` set-up there.

Tests that cannot apply because of the harness alone are skipped with their reason
(:data:`tests.peer.exclusions.EXCLUDED`). Each test's outcome and how many of its
calls ozfft answered or handed off are written as JSON to ``OZFFT_PEER_REPORT``.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import threading
from collections import defaultdict
from pathlib import Path

import numpy as np
import numpy.fft
import pytest
import scipy.fft

try:  # scipy's pocketfft package (its own test suite imports from it); absent in some builds
    import scipy.fft._pocketfft
    import scipy.fft._pocketfft.realtransforms

    _POCKETFFT_MODULES = (scipy.fft._pocketfft, scipy.fft._pocketfft.realtransforms)
except ImportError:
    _POCKETFFT_MODULES = ()

import ozfft
import ozfft.fourier
import ozfft.scipy_backend

from .exclusions import EXCLUDED

SUITE = os.environ.get("OZFFT_PEER_SUITE", "")
REPORT = os.environ.get("OZFFT_PEER_REPORT")
BASELINE = os.environ.get("OZFFT_PEER_BASELINE") == "1"  # the suite as shipped, no ozfft

_current = {"nodeid": None}
_calls: dict[str, dict[str, int]] = defaultdict(lambda: {"ozfft": 0, "fallback": 0})
_outcomes: dict[str, str] = {}


def _count(answered: bool) -> None:
    nodeid = _current["nodeid"] or "<collection>"
    _calls[nodeid]["ozfft" if answered else "fallback"] += 1


def _counting_dispatch(original):
    def dispatch(name, args, kwargs, **options):
        result = original(name, args, kwargs, **options)
        if ozfft.scipy_backend.handles(name):
            _count(result is not NotImplemented)
        return result

    return dispatch


_active = threading.local()


def _numpy_replacement(name: str, numpy_function):
    def function(*args, **kwargs):
        # ozfft's helpers may call numpy.fft themselves (fftfreq does): such an inner
        # call is numpy's own
        active = _active.__dict__.setdefault("names", set())
        if name in active:
            return numpy_function(*args, **kwargs)
        active.add(name)
        try:
            result = ozfft.scipy_backend.dispatch(name, args, kwargs, semantics="numpy")
        finally:
            active.discard(name)
        if result is NotImplemented:
            return numpy_function(*args, **kwargs)
        return result

    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = f"ozfft.{name}, numpy.fft.{name} where ozfft hands the call off"
    function.__wrapped__ = numpy_function
    return function


def _patch_numpy_fft() -> list[str]:
    patched = []
    for name in sorted(dir(numpy.fft)):
        if name.startswith("_") or not ozfft.scipy_backend.handles(name):
            continue
        setattr(numpy.fft, name, _numpy_replacement(name, getattr(numpy.fft, name)))
        patched.append(name)
    return patched


@contextlib.contextmanager
def _pocketfft_names_dispatched():
    """Bind ``scipy.fft._pocketfft``'s transform names to the ``scipy.fft`` multimethods
    while the suite's modules are imported; restore the originals afterwards (scipy's
    fallback backend calls them)."""
    saved = []
    for module in _POCKETFFT_MODULES:
        for name in scipy.fft.__all__:
            multimethod = getattr(scipy.fft, name)
            if hasattr(module, name) and type(multimethod).__name__ == "_Function":
                saved.append((module, name, getattr(module, name)))
                setattr(module, name, multimethod)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def pytest_configure(config):
    config.addinivalue_line("markers", "peer_excluded: skipped by the ozfft peer harness")
    if BASELINE:
        return
    ozfft.scipy_backend.dispatch = _counting_dispatch(ozfft.scipy_backend.dispatch)
    scipy.fft.set_global_backend(ozfft.scipy_backend)
    scipy.fft.register_backend("scipy")
    # scipy's conftest starts worker processes by forkserver: preload the same set-up
    multiprocessing.set_forkserver_preload([f"{__package__}.worker"])
    if SUITE == "numpy":
        config._ozfft_patched = _patch_numpy_fft()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if SUITE == "pocketfft" and not BASELINE and isinstance(collector, pytest.Module):
        with _pocketfft_names_dispatched():
            yield
    else:
        yield


def pytest_report_header(config):
    if BASELINE:
        return f"ozfft peer harness: suite {SUITE!r}, BASELINE (ozfft not installed)"
    lines = [f"ozfft peer harness: suite {SUITE!r}, ozfft {ozfft.__version__}"]
    if SUITE == "numpy":
        lines.append("numpy.fft patched: " + ", ".join(config._ozfft_patched))
    else:
        lines.append("scipy.fft global backend: ozfft.scipy_backend; registered: scipy")
    return lines


def _excluded_reason(nodeid: str) -> str | None:
    for pattern, reason in EXCLUDED.get(SUITE, {}).items():
        if re.search(pattern, nodeid):
            return reason
    return None


def pytest_collection_modifyitems(config, items):
    if BASELINE:
        return
    for item in items:
        reason = _excluded_reason(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.peer_excluded)
            item.add_marker(pytest.mark.skip(reason=f"ozfft peer harness: {reason}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current["nodeid"] = item.nodeid
    yield
    _current["nodeid"] = None


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        previous = _outcomes.get(report.nodeid)
        if previous in (None, "passed"):  # a failed teardown still marks a failure
            outcome = report.outcome
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            if report.when != "call" and report.failed:
                outcome = "error"
            _outcomes[report.nodeid] = outcome


def pytest_sessionfinish(session, exitstatus):
    if REPORT is None:
        return
    excluded = {
        item.nodeid: _excluded_reason(item.nodeid)
        for item in session.items
        if item.get_closest_marker("peer_excluded")
    }
    data = {
        "suite": SUITE,
        "baseline": BASELINE,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "collected": len(session.items),
        "outcomes": _outcomes,
        "excluded": excluded,
        "calls": {k: v for k, v in _calls.items()},
        "exitstatus": int(exitstatus),
    }
    Path(REPORT).write_text(json.dumps(data, indent=1, sort_keys=True))
