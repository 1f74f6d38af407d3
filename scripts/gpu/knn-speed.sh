#!/usr/bin/env bash
# knn-speed on the GPU machine (repo root, after scripts/gpu/build.sh built build-gpu with CUDA):
#   1. the fused CPU neighbors = the GEMM path, by memcmp, at every ISA the host CPU has (AVX-512
#      included there) and threads 1/2/3; the model-file reader (NearestRowsConformance.*, ModelJson.*)
#   2. CUDA = CPU model files and predictions for the estimators incl. k-NN (MlLinearCuda.*)
#   3. k-NN predict time against scikit-learn at 10^5 and 10^6 rows, 16 threads, one run each
# Writes $OUT/knn-speed.log (PASS/FAIL per item, figures) and the full outputs beside it. Exits 0.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp}"; mkdir -p "$OUT"
LOG="$OUT/knn-speed.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
B=build-gpu
say "== knn-speed $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
if [ -x $B/tests/bitlearn_tests ]; then
  timeout 60 $B/tests/bitlearn_tests --gtest_filter='NearestRowsConformance.*:ModelJson.*' >"$OUT/knn-cpu-tests.txt" 2>&1; rc=$?
  grep -E "^\[ +(OK|FAILED) +\]" "$OUT/knn-cpu-tests.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS k-NN CPU conformance (fused = GEMM path, every ISA here)" || say "FAIL k-NN CPU conformance rc=$rc"
else
  say "FAIL build-gpu/tests/bitlearn_tests missing"
fi
if [ -x $B/tests/bitlearn_cuda_tests ]; then
  timeout 60 $B/tests/bitlearn_cuda_tests --gtest_filter='MlLinearCuda.*' >"$OUT/knn-cuda-tests.txt" 2>&1; rc=$?
  grep -E "^\[ +(OK|FAILED) +\]" "$OUT/knn-cuda-tests.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS MlLinearCuda (CPU = CUDA, k-NN included)" || say "FAIL MlLinearCuda rc=$rc"
else
  say "FAIL build-gpu/tests/bitlearn_cuda_tests missing"
fi
if [ -x $B/bitlearn ] && python3 -c "import sklearn, threadpoolctl" 2>/dev/null; then
  timeout 100 python3 bench/ml_vs_sklearn.py --bin $B/bitlearn --only kneighbors_classifier \
    --rows 100000 1000000 --threads 16 --repeat 1 >"$OUT/knn-bench.txt" 2>&1; rc=$?
  tee -a "$LOG" <"$OUT/knn-bench.txt"
  [ $rc -eq 0 ] && say "PASS bench (figures above)" || say "FAIL bench rc=$rc (partial figures above)"
else
  say "FAIL bench: no build-gpu/bitlearn or no scikit-learn"
fi
exit 0
