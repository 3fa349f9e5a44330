#!/usr/bin/env bash
# One device session: GPU tests, ozfft check, then benchmark campaigns (docs/benchmarks.md).
#   bench/device_run.sh [quick|fft|full|all]      (results and logs under $OUT)
#     quick  DGEMM/ZGEMM at 4096 and 8192, 16 moduli, fast mode
#     fft    every FFT case (fftn, rfftn, fft2, 1-D fft) vs cuFFT
#     full   the whole GEMM campaign, then every FFT case
#     all    ozfft bench all: ceilings, floors, FFT, GEMM and the report
# Runs from a source checkout (PYTHONPATH=$PWD); `python3 -m ozfft.cli` is the `ozfft`
# command without installing it.
set -uo pipefail
mode=${1:-quick}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 OZFFT_CACHE_DIR=${OUT:-/tmp}/kcache
out=${OUT:-/tmp/ozfft-out}
mkdir -p "$out"
ozfft() { python3 -m ozfft.cli "$@"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import cupy, cuda.core; print('cupy', cupy.__version__, 'cuda.core', cuda.core.__version__)"
python3 -m pytest -q -p no:cacheprovider tests 2>&1 | tee "$out/pytest.log" | tail -25
ozfft check 2>&1 | tee "$out/check.log"
fft_cases=(--cases fftn rfftn fft2 fft)
case "$mode" in
  quick)
    ozfft bench gemm --ops dgemm zgemm --shapes 4096 8192 --moduli 16 \
      --modes fast --reps 3 --out "$out/bench" 2>&1 | tee "$out/bench.log" ;;
  fft)
    ozfft bench fft "${fft_cases[@]}" --out "$out/bench" 2>&1 | tee "$out/bench-fft.log" ;;
  full)
    ozfft bench gemm --reps 3 --out "$out/bench" 2>&1 | tee "$out/bench.log"
    ozfft bench fft "${fft_cases[@]}" --out "$out/bench" 2>&1 | tee "$out/bench-fft.log" ;;
  all)
    ozfft bench all --out "$out/campaign" 2>&1 | tee "$out/campaign.log" ;;
  *)
    echo "usage: bench/device_run.sh [quick|fft|full|all]" >&2; exit 2 ;;
esac
rm -rf "$OZFFT_CACHE_DIR"
