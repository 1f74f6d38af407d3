#!/usr/bin/env bash
# Runs the CUDA conformance tests of the Tensor core and the elementwise / cast / shape / index
# ops (tests/cuda/test_tensor_ops_cuda.cu) from build-gpu (built by the lead beforehand), plus the
# CPU Tensor and conformance tests at 16 cores, and writes a short summary to $OUT/tensor.log.
cd "$(dirname "$0")/../.."
OUT="${OUT:-.}"
LOG="$OUT/tensor.log"
: > "$LOG"
if [ -x build-gpu/tests/bitlearn_cuda_tests ]; then
  timeout 550 build-gpu/tests/bitlearn_cuda_tests --gtest_filter='TensorOpsCuda*' > "$OUT/tensor_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure|first difference|BANDWIDTH|sabotage" "$OUT/tensor_cuda_tests.txt" | head -40 >> "$LOG"
  [ $rc -eq 0 ] && echo "PASS tensor cuda tests" >> "$LOG" || { echo "FAIL tensor cuda tests (rc=$rc)" >> "$LOG"; tail -5 "$OUT/tensor_cuda_tests.txt" >> "$LOG"; }
else
  echo "FAIL build-gpu/tests/bitlearn_cuda_tests missing" >> "$LOG"
fi
if [ -x build-gpu/tests/bitlearn_tests ]; then
  timeout 300 build-gpu/tests/bitlearn_tests --gtest_filter='Tensor.*:Elementwise*:Shape*:Index*' > "$OUT/tensor_cpu_tests.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && echo "PASS tensor cpu tests (16 cores, CUDA build)" >> "$LOG" || { echo "FAIL tensor cpu tests (rc=$rc)" >> "$LOG"; grep -E "FAILED|first difference|Failure" "$OUT/tensor_cpu_tests.txt" | head -10 >> "$LOG"; }
else
  echo "FAIL build-gpu/tests/bitlearn_tests missing" >> "$LOG"
fi
exit 0
