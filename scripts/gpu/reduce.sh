#!/usr/bin/env bash
# Runs the CUDA conformance tests and bandwidth benchmarks of reduce / softmax / norm / cumsum /
# sort from build-gpu (built by the lead beforehand) and writes a short summary to $OUT/reduce.log.
cd "$(dirname "$0")/../.."
OUT="${OUT:-.}"
LOG="$OUT/reduce.log"
: > "$LOG"
if [ -x build-gpu/tests/bitlearn_cuda_tests ]; then
  build-gpu/tests/bitlearn_cuda_tests --gtest_filter='ReduceCuda*' > "$OUT/reduce_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[ +(OK|PASSED|FAILED|SKIPPED) +\]|Failure|first difference" "$OUT/reduce_cuda_tests.txt" | head -40 >> "$LOG"
  [ $rc -eq 0 ] && echo "PASS cuda tests" >> "$LOG" || echo "FAIL cuda tests (rc=$rc)" >> "$LOG"
else
  echo "FAIL build-gpu/tests/bitlearn_cuda_tests missing" >> "$LOG"
fi
if [ -x build-gpu/tests/bitlearn_tests ]; then
  build-gpu/tests/bitlearn_tests --gtest_filter='ReduceOps*:ReduceConformance*:SoftmaxConformance*:NormConformance*:CumsumConformance*:SortConformance*' > "$OUT/reduce_cpu_tests.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && echo "PASS cpu conformance tests (16 cores)" >> "$LOG" || { echo "FAIL cpu conformance tests (rc=$rc)" >> "$LOG"; grep -E "FAILED|first difference" "$OUT/reduce_cpu_tests.txt" | head -10 >> "$LOG"; }
fi
if [ -x build-gpu/bench/bench_reduce_cuda ]; then
  timeout 300 build-gpu/bench/bench_reduce_cuda >> "$LOG" 2>&1 || echo "FAIL bench_reduce_cuda rc=$?" >> "$LOG"
else
  echo "FAIL build-gpu/bench/bench_reduce_cuda missing" >> "$LOG"
fi
if [ -x build-gpu/bench/bench_reduce ]; then
  timeout 300 build-gpu/bench/bench_reduce --benchmark_min_time=0.2 2>/dev/null | tail -5 >> "$LOG" || echo "FAIL bench_reduce" >> "$LOG"
fi
exit 0
