"""numpy's and scipy's own FFT test suites, run against ozfft (see README.md here)."""
