#!/usr/bin/env bash
# GPU-host checks of the tree/boosting area (after scripts/gpu/build.sh built build-gpu/):
#   1. bitlearn_cuda_tests HistogramCuda.*: the CUDA histogram kernel equals the reference under
#      every launch shape (+ sabotage arm), and a boosting fit with X on CUDA writes the same model
#      file as the CPU fit;
#   2. verify --device all: ml.random_forest / ml.hist_boosting (forest: CPU only, skipped on CUDA);
#   3. boosting fit time and model SHA-256 on the host CPU (1, 16 threads) and with CUDA histograms
#      at 10^6 rows: the three SHA-256 must be equal;
#   4. the ensemble tests on the GPU host's CPU (another CPU model than the development host) at
#      threads 1/2/3, and the DART / symmetric boosting model SHA-256 with CUDA histograms = CPU.
# Writes $OUT/ml-trees.log; exits 0 always and says PASS/FAIL per item.
set -u
OUT=${OUT:-/tmp}
log=$OUT/ml-trees.log
: >"$log"
B=build-gpu
say() { echo "$*" | tee -a "$log"; }

if $B/tests/bitlearn_cuda_tests --gtest_filter='HistogramCuda.*' >"$OUT/ml-trees-cuda-tests.txt" 2>&1; then
  say "PASS cuda tests HistogramCuda.* ($(grep -c '\[       OK' "$OUT/ml-trees-cuda-tests.txt") ok)"
else
  say "FAIL cuda tests HistogramCuda.*"; tail -30 "$OUT/ml-trees-cuda-tests.txt" >>"$log"
fi

$B/bitlearn verify --device all >"$OUT/ml-trees-verify.txt" 2>&1
grep -E "^ml\." "$OUT/ml-trees-verify.txt" | tee -a "$log"
if grep -E "^ml\.hist_boosting" "$OUT/ml-trees-verify.txt" | grep -q DIVERGENT; then say "FAIL verify ml.hist_boosting"
else say "PASS verify ml.hist_boosting (no DIVERGENT line)"; fi

bench=$B/tools/ml_trees_bench/bitlearn_ml_trees_bench
p="grow_policy=depthwise max_depth=6 max_leaf_nodes=none min_samples_leaf=1 min_child_weight=1 l2_regularization=1"
shas=()
for run in "--threads 1" "--threads 16" "--threads 16 --device cuda"; do
  line=$($bench hist_gradient_boosting_regressor --synthetic 1000000 20 regression $p $run 2>&1 | tail -1)
  say "boosting 10^6 x 20, 100 iters depth 6 [$run]: $line"
  shas+=("$(echo "$line" | sed -n 's/.*"model_sha256": "\([0-9a-f]*\)".*/\1/p')")
done
if [ -n "${shas[0]}" ] && [ "${shas[0]}" = "${shas[1]}" ] && [ "${shas[0]}" = "${shas[2]}" ]; then
  say "PASS boosting model SHA-256 equal on CPU 1 thread, CPU 16 threads, CUDA histograms: ${shas[0]}"
else
  say "FAIL boosting model SHA-256 differ: ${shas[*]}"
fi
if $B/tests/bitlearn_tests --gtest_filter='Ensembles/*:IsolationForest.*:EnsembleParity.*:Dart.*:SymmetricTrees.*:EnsembleBadInput.*:Stacking.*' \
    >"$OUT/ml-trees-ensembles.txt" 2>&1; then
  say "PASS ensemble tests on the host CPU ($(grep -c '\[       OK' "$OUT/ml-trees-ensembles.txt") ok)"
else
  say "FAIL ensemble tests"; grep -E "FAILED|Failure" "$OUT/ml-trees-ensembles.txt" | head -20 >>"$log"
fi
for variant in "booster=dart rate_drop=0.2" "grow_policy=symmetric max_depth=6"; do
  a=$($bench hist_gradient_boosting_classifier --synthetic 200000 20 classification $variant --threads 16 2>&1 | tail -1)
  b=$($bench hist_gradient_boosting_classifier --synthetic 200000 20 classification $variant --threads 16 --device cuda 2>&1 | tail -1)
  sa=$(echo "$a" | sed -n 's/.*"model_sha256": "\([0-9a-f]*\)".*/\1/p'); sb=$(echo "$b" | sed -n 's/.*"model_sha256": "\([0-9a-f]*\)".*/\1/p')
  say "[$variant] cpu: $a"; say "[$variant] cuda: $b"
  if [ -n "$sa" ] && [ "$sa" = "$sb" ]; then say "PASS $variant: CPU and CUDA-histogram model SHA-256 equal ($sa)"
  else say "FAIL $variant: model SHA-256 differ ($sa vs $sb)"; fi
done
exit 0
