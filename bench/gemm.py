"""Emulated GEMM vs cuBLAS; the same as ``ozfft bench gemm`` (see ozfft/bench/gemm.py)."""

import sys

from ozfft.bench.gemm import main

if __name__ == "__main__":
    sys.exit(main())
