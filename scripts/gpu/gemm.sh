#!/usr/bin/env bash
# GEMM on the GPU machine: CUDA conformance tests of the contract GEMM, then the GEMM benchmarks
# (bitlearn CUDA vs cuBLAS strict fp32; bitlearn CPU vs OpenBLAS at 1 and 2 threads).
# Run from the repo root after build-gpu is built. Writes a short summary to $OUT/gemm.log.
OUT="${OUT:-.}"
LOG="$OUT/gemm.log"
B="${BUILD_DIR:-build-gpu}"
unset NVIDIA_TF32_OVERRIDE
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== gemm: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
if [ -x "$B/tests/bitlearn_cuda_tests" ]; then
  "$B/tests/bitlearn_cuda_tests" --gtest_filter='MatmulCuda*' > "$OUT/gemm_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/gemm_tests.txt" | tee -a "$LOG"
  grep -E "Failure|first difference" "$OUT/gemm_tests.txt" | head -20 | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS cuda matmul conformance" || say "FAIL cuda matmul conformance (rc=$rc)"
else
  say "FAIL missing $B/tests/bitlearn_cuda_tests"
fi

if [ -x "$B/bench/bench_gemm_cuda" ]; then
  "$B/bench/bench_gemm_cuda" --benchmark_min_time=0.3 > "$OUT/gemm_bench_cuda.txt" 2>&1 || say "FAIL bench_gemm_cuda rc=$?"
  # name and GFLOP/s only
  grep -E "^BM_" "$OUT/gemm_bench_cuda.txt" | sed -E 's/^([^ ]+) .*GFLOP\/s=([0-9.]+[kMG]?).*/\1 \2/' | tee -a "$LOG"
else
  say "FAIL missing $B/bench/bench_gemm_cuda"
fi

if [ -x "$B/bench/bench_gemm" ]; then
  say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  "$B/bench/bench_gemm" --benchmark_min_time=0.2 \
    --benchmark_filter='M:(1024|2048)/|M:8192/N:768/K:3072' > "$OUT/gemm_bench_cpu.txt" 2>&1 || say "FAIL bench_gemm rc=$?"
  grep -E "^BM_" "$OUT/gemm_bench_cpu.txt" | sed -E 's/^([^ ]+) .*GFLOP\/s=([0-9.]+[kMG]?).*/\1 \2/' | tee -a "$LOG"
fi
exit 0
