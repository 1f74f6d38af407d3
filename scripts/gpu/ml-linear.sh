#!/usr/bin/env bash
# ml-linear on the GPU machine (repo root, after scripts/gpu/build.sh built build-gpu with CUDA):
#   1. CUDA = CPU for every linear (both waves) / cluster / neighbors / decomposition estimator (MlLinearCuda.*)
#   2. the CPU tests of the area on the host cores (identity at 1/2/3 threads, parity, CSV, bad input)
#   3. the ml.* verify checks on CPU and CUDA (--device all)
#   4. fit time against scikit-learn (bench/ml_vs_sklearn.py) at ML_BENCH_ROWS rows (default 100000
#      1000000) with ML_BENCH_THREADS threads (default 16); ML_BENCH=0 skips it
# Writes $OUT/ml-linear.log (PASS/FAIL per item) and the full outputs beside it. Always exits 0.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp}"; mkdir -p "$OUT"
LOG="$OUT/ml-linear.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
B=build-gpu
say "== ml-linear $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
if [ ! -x $B/tests/bitlearn_cuda_tests ]; then
  say "FAIL build-gpu/tests/bitlearn_cuda_tests missing (run scripts/gpu/build.sh first)"
else
  timeout 300 $B/tests/bitlearn_cuda_tests --gtest_filter='MlLinearCuda.*' >"$OUT/ml-linear-cuda.txt" 2>&1; rc=$?
  grep -E "IDENTICAL|DIVERGENT|OK \]|FAILED|SKIPPED" "$OUT/ml-linear-cuda.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS MlLinearCuda (CPU = CUDA model files and predictions)" || say "FAIL MlLinearCuda rc=$rc"
fi
if [ -x $B/tests/bitlearn_tests ]; then
  timeout 300 $B/tests/bitlearn_tests --gtest_filter='MlIdentity.*:MlParity.*:MlCsv.*:MlBadInput.*:LinearModels*' >"$OUT/ml-linear-cpu.txt" 2>&1; rc=$?
  grep -E "^\[  (PASSED|FAILED)" "$OUT/ml-linear-cpu.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS ml-linear CPU tests" || say "FAIL ml-linear CPU tests rc=$rc"
fi
if [ -x $B/bitlearn ]; then
  timeout 200 $B/bitlearn verify --device all >"$OUT/ml-linear-verify.txt" 2>&1
  grep -E "ml\.|digest" "$OUT/ml-linear-verify.txt" | tee -a "$LOG"
  if grep -E "^ *ml\." "$OUT/ml-linear-verify.txt" | grep -qvE "IDENTICAL"; then say "FAIL verify ml.* checks"; else say "PASS verify ml.* checks (CPU and CUDA)"; fi
  [ "${ML_BENCH:-1}" = 0 ] && { say "bench skipped (ML_BENCH=0)"; exit 0; }
  python3 -c "import sklearn, threadpoolctl" 2>/dev/null || { say "FAIL bench: no scikit-learn"; exit 0; }
  FIRST="linear_regression ridge lasso elastic_net logistic_binary logistic_multinomial kmeans minibatch_kmeans pca kneighbors_classifier"
  SECOND="sgd_classifier sgd_classifier_log sgd_regressor huber_regressor quantile_regressor poisson_regressor gamma_regressor tweedie_regressor ard_regression lars lasso_lars"
  timeout "${ML_BENCH_TIMEOUT:-900}" python3 bench/ml_vs_sklearn.py --bin $B/bitlearn --only $FIRST \
    --rows ${ML_BENCH_ROWS:-100000 1000000} --threads "${ML_BENCH_THREADS:-16}" --repeat 2 >"$OUT/ml-linear-bench.txt" 2>&1
  rc=$?
  # the second wave of linear models at 10^5 rows (scikit-learn's quantile LP is skipped beyond 5000 rows)
  timeout "${ML_BENCH_TIMEOUT:-900}" python3 bench/ml_vs_sklearn.py --bin $B/bitlearn --only $SECOND \
    --rows ${ML_BENCH_ROWS2:-5000 100000} --threads "${ML_BENCH_THREADS:-16}" --repeat 2 >>"$OUT/ml-linear-bench.txt" 2>&1
  rc=$((rc + $?))
  tee -a "$LOG" <"$OUT/ml-linear-bench.txt"
  [ $rc -eq 0 ] && say "PASS bench (figures above)" || say "FAIL bench rc=$rc (partial figures above)"
fi
exit 0
