#!/usr/bin/env bash
# One device session: GPU tests, ozfft check, then the GEMM benchmark.
#   bench/device_run.sh [quick|fft|full]      (results and logs under $OUT)
set -uo pipefail
mode=${1:-quick}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 OZFFT_CACHE_DIR=${OUT:-/tmp}/kcache
out=${OUT:-/tmp/ozfft-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, cuda.core; print('cupy', cupy.__version__, 'cuda.core', cuda.core.__version__)"
python3 -m pytest -q -p no:cacheprovider tests 2>&1 | tee "$out/pytest.log" | tail -25
python3 -m ozfft.cli check 2>&1 | tee "$out/check.log"
if [ "$mode" = quick ]; then
  python3 -m ozfft.cli bench gemm --ops dgemm zgemm --shapes 4096 8192 --moduli 16 \
    --modes fast --reps 3 --out "$out/bench" 2>&1 | tee "$out/bench.log"
elif [ "$mode" = fft ]; then
  python3 -m ozfft.cli bench fft --out "$out/bench" 2>&1 | tee "$out/bench-fft.log"
else
  python3 -m ozfft.cli bench gemm --reps 3 --out "$out/bench" 2>&1 | tee "$out/bench.log"
  python3 -m ozfft.cli bench fft --out "$out/bench" 2>&1 | tee "$out/bench-fft.log"
fi
rm -rf "$OZFFT_CACHE_DIR"
