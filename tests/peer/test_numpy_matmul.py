"""numpy's own ``matmul`` tests (``numpy/_core/tests/test_multiarray.py``: the class
``MatmulCommon`` and ``TestMatmul``'s tests of ``out``) run against ``ozfft.matmul`` on the
NumPy engine, in this process.

They run on the dtypes whose result dtype ozfft shares with numpy: bool and the floating
dtypes ozfft computes in (``types = "?efdFD"``; the tests' boolean cases run whatever the
list). Not run, with the reason: integer operands (ozfft returns float64 where numpy
returns an integer array: docs/api-matmul.md, "Returns"); long double, complex long double
and object operands (``UnsupportedDTypeError``: docs/api-matmul.md, "Raises"), hence
``TestMatmul.test_matmul_object*``. ``TestMatmul``'s other tests call ``numpy.matmul`` or
``numpy.dot`` themselves and test nothing of ozfft.
"""

from __future__ import annotations

import pytest

import ozfft

pytestmark = pytest.mark.peer

_suite = pytest.importorskip(
    "numpy._core.tests.test_multiarray", reason="numpy's own tests are not installed"
)


class TestOzfftMatmul(_suite.MatmulCommon):
    """numpy's ``MatmulCommon`` (shapes, errors, result types, values) with ozfft."""

    matmul = staticmethod(ozfft.matmul)
    types = "?efdFD"

    # TestMatmul's tests of `out` (positional and keyword, same_kind casting, views)
    test_out_arg = _suite.TestMatmul.test_out_arg
    test_empty_out = _suite.TestMatmul.test_empty_out
    test_out_contiguous = _suite.TestMatmul.test_out_contiguous
