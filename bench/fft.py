"""3-D FFT vs cuFFT; the same as ``ozfft bench fft`` (see ozfft/bench/fft.py)."""

import sys

from ozfft.bench.fft import main

if __name__ == "__main__":
    sys.exit(main())
