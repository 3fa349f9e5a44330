"""numpy's and scipy's own FFT test suites pass against ozfft (tests/peer/run.py).

Each suite of the installed numpy / scipy runs in its own pytest process, set up by
``tests/peer/plugin.py`` (numpy.fft patched to ozfft's functions; ozfft as the global
scipy.fft backend with scipy registered as fallback); two run at a time. Skip them with
``-m "not peer"``; ``python tests/peer/run.py`` runs them on their own with a table.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from . import run

pytestmark = pytest.mark.peer

SUITES = list(run.SUITES)


@pytest.fixture(scope="module")
def peer_runs(request):
    """The selected suites, started together (two at a time) on first use."""
    wanted = [
        s
        for s in SUITES
        if run.suite_available(s) and any(f"[{s}]" in i.nodeid for i in request.session.items)
    ]
    pool = ThreadPoolExecutor(2)
    futures = {suite: pool.submit(run.run_suite, suite) for suite in wanted}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("suite", SUITES)
def test_suite_passes_against_ozfft(suite, peer_runs):
    if not run.suite_available(suite):
        package, tests, _ = run.SUITES[suite]
        pytest.skip(f"the installed {package} has no {package}/{tests}")
    data = peer_runs[suite].result()
    counts = run.summarize(data)
    failed = run.failures(data)
    assert not failed, (
        f"{suite}: {len(failed)} of {counts['collected']} failed:\n  "
        + "\n  ".join(failed)
        + "\n\n"
        + data["output"][-12000:]
    )
    assert data["returncode"] == 0, data["output"][-12000:]
    # the harness really ran the suite against ozfft
    assert counts["collected"] > 100 and counts["passed"] > 0.9 * counts["collected"]
    assert counts["reached ozfft"] > 100, counts
    # every harness exclusion carries its reason
    assert all(data["excluded"].values()), data["excluded"]
