"""The markers of numpy's own test modules that ``test_numpy_matmul.py`` imports (this
suite runs with ``--strict-markers``)."""

from __future__ import annotations

#: markers numpy's ``numpy/_core/tests/test_multiarray.py`` applies at import
NUMPY_MARKERS = {
    "leaks_references": "numpy's: the test leaks references",
    "thread_unsafe": "numpy's: the test is not thread safe",
    "valgrind_error": "numpy's: the test errors under valgrind",
}


def pytest_configure(config):
    for name, text in NUMPY_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
