#!/usr/bin/env bash
# Review fixes on the GPU machine, after scripts/gpu/build.sh built build-gpu/ (CUDA on):
#  1. the CUDA GEMM conformance tests, incl. the leaf-parallel path (batch 1, >= 4 leaves, few
#     tiles) and its sabotage arm (the same leaves folded right to left or pairwise must be caught);
#  2. the verify exit-code unit tests and the CPU fold-order sabotage arm;
#  3. `bitlearn verify` on cuda:0 and on all devices (quick): the CPU-only checks must be SKIPPED
#     with the CPU-only reason while the exit status stays 0.
# Summary in $OUT/review.log, one PASS/FAIL line per item; exit 0 always.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp}"
LOG="$OUT/review.log"
B="${BUILD_DIR:-build-gpu}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== review: $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

run_gtest() {  # $1 = label, $2 = binary, $3 = filter
  local label="$1" bin="$2" filter="$3"
  if [ ! -x "$bin" ]; then say "FAIL $label: $bin not found"; return; fi
  timeout 300 "$bin" --gtest_filter="$filter" > "$OUT/review-$label.txt" 2>&1
  local rc=$?
  local ran skipped
  ran=$(grep -cE "^\[       OK \]" "$OUT/review-$label.txt")
  skipped=$(grep -cE "^\[  SKIPPED \]" "$OUT/review-$label.txt")
  if [ $rc -eq 0 ] && [ "$skipped" -eq 0 ]; then
    say "PASS $label ($ran tests)"
  else
    say "FAIL $label (rc $rc, $ran ok, $skipped skipped)"
    grep -E "^\[  (FAILED|SKIPPED) |Failure|differ" "$OUT/review-$label.txt" | head -20 | sed 's/^/  /' | tee -a "$LOG"
  fi
}

run_gtest cuda-gemm "$B/tests/bitlearn_cuda_tests" 'MatmulCudaConformance.*'
run_gtest leaf-fold-sabotage "$B/tests/bitlearn_cuda_tests" \
  'MatmulCudaConformance.LeafParallelPathMatchesReference:MatmulCudaConformance.SabotageLeafParallelFoldOrderIsCaught'
run_gtest verify-exit-code "$B/tests/bitlearn_tests" 'VerifyExitCode.*:MatmulConformance.SabotageLeafFoldOrderIsCaught'

run_verify() {  # $1 = label, rest = verify arguments
  local label="$1"; shift
  local full="$OUT/review-verify-$label.txt"
  if [ ! -x "$B/bitlearn" ]; then say "FAIL verify $label: $B/bitlearn not found"; return; fi
  timeout 300 "$B/bitlearn" verify "$@" > "$full" 2>&1
  local rc=$?
  local cpu_only other
  cpu_only=$(grep -E "SKIPPED" "$full" | grep -c "CPU-only")
  other=$(grep -E "SKIPPED" "$full" | grep -vc "CPU-only")
  if [ $rc -eq 0 ] && [ "$cpu_only" -ge 2 ] && [ "$other" -eq 0 ]; then
    say "PASS verify $label: rc 0 with $cpu_only CPU-only checks SKIPPED"
  else
    say "FAIL verify $label: rc $rc, $cpu_only CPU-only SKIPPED lines (want >= 2), $other other SKIPPED"
  fi
  grep -E "SKIPPED|DIVERGENT|^digest" "$full" | head -12 | sed 's/^/  /' | tee -a "$LOG"
}

run_verify cuda0-quick --device cuda:0 --quick --threads 16
run_verify all-quick --device all --quick --threads 16
exit 0
