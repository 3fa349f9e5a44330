"""Tests of the peer suites that cannot apply because of the harness alone.

``EXCLUDED[suite]`` maps a regular expression (searched in the pytest node id) to the
reason; the plugin skips matching tests with that reason, and ``run.py`` lists them.
Nothing may be excluded for what ozfft computes or raises: such tests run and count.

The list is empty with numpy 2.4 and scipy 1.17. The one candidate, scipy's
``test_multiprocess`` (and ``test_mixed_threads_processes``), starts worker processes
by forkserver, which would run without the ozfft backend and compare pocketfft's bits
with ozfft's at ``atol=0``; the harness preloads its set-up into the forkserver
(``tests/peer/worker.py``), so those tests apply and pass.
"""

from __future__ import annotations

EXCLUDED: dict[str, dict[str, str]] = {
    "numpy": {},
    "scipy": {},
    "pocketfft": {},
}
