#!/usr/bin/env bash
# CPU GEMM speed on the GPU machine's host CPU (a quiet machine, unlike the 2-core dev box):
# bitlearn's contract GEMM vs OpenBLAS cblas_sgemm, 1 and 2 threads, interleaved repetitions,
# median ratio per shape (bench/gemm_ratio.py), then the CPU matmul conformance tests.
# Run from the repo root after scripts/gpu/build.sh. Summary in $OUT/cpu-gemm.log; exit 0 always.
OUT="${OUT:-.}"
LOG="$OUT/cpu-gemm.log"
B="${BUILD_DIR:-build-gpu}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== cpu-gemm: $(date -u +%FT%TZ) cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
say "load: $(cut -d' ' -f1-3 /proc/loadavg); isa: $("$B/bitlearn" doctor 2>/dev/null | grep 'kernel variant' | sed 's/^ *//')"
if [ -x "$B/tests/bitlearn_tests" ]; then
  "$B/tests/bitlearn_tests" --gtest_filter='MatmulConformance.*:SkinnyMatmul*' > "$OUT/cpu-gemm_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED) " "$OUT/cpu-gemm_tests.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS cpu matmul conformance" || say "FAIL cpu matmul conformance (rc=$rc)"
else
  say "FAIL missing $B/tests/bitlearn_tests"
fi

if [ ! -x "$B/bench/bench_gemm" ]; then
  say "FAIL missing $B/bench/bench_gemm (build with -DBITLEARN_BENCH=ON)"
  exit 0
fi
filter='M:(1024/N:1024/K:1024|2048/N:2048/K:2048|4096/N:4096/K:4096|8192/N:768/K:3072|8192/N:3072/K:768|8192/N:768/K:768)/'
if command -v python3 > /dev/null; then
  timeout 420 python3 bench/gemm_ratio.py "$B/bench/bench_gemm" --filter "$filter" --repetitions 3 \
    --min-time 0.2 > "$OUT/cpu-gemm_ratio.txt" 2>&1
  rc=$?
  tee -a "$LOG" < "$OUT/cpu-gemm_ratio.txt"
  [ $rc -eq 0 ] && say "PASS cpu gemm ratio run" || say "FAIL cpu gemm ratio run (rc=$rc)"
else
  timeout 420 "$B/bench/bench_gemm" --benchmark_filter="$filter" --benchmark_repetitions=3 \
    --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2 \
    --benchmark_report_aggregates_only=true > "$OUT/cpu-gemm_bench.txt" 2>&1
  grep -E "_median" "$OUT/cpu-gemm_bench.txt" | sed -E 's/^([^ ]+) .*GFLOP\/s=([0-9.]+[kMG]?).*/\1 \2/' | tee -a "$LOG"
  say "PASS cpu gemm bench run (no python3: medians only, no ratio column)"
fi
exit 0
