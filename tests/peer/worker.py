"""Preloaded into the forkserver of a peer run (``multiprocessing.set_forkserver_preload``)
so that worker processes started by the suites (scipy's ``test_multiprocess``,
``test_mixed_threads_processes``) run with the same set-up as the pytest process: ozfft
as the global ``scipy.fft`` backend, scipy registered as fallback."""

import scipy.fft

import ozfft.scipy_backend

scipy.fft.set_global_backend(ozfft.scipy_backend)
scipy.fft.register_backend("scipy")
