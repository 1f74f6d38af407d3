#!/usr/bin/env bash
# GPU-machine checks of the exp/log family (src/contract/math/exp_log.h), run from the repo root after:
#   cmake -S . -B build-gpu -G Ninja -DBITLEARN_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j16
# 1. The unit tests MathExpLog* (MPFR digests, special values, sabotage arms) on the host CPU.
# 2. The exhaustive accuracy check (all 2^32 inputs) of each exp/log function on the host's cores,
#    with bitlearn_math_check: max ulp error and the count of results that are not correctly rounded.
# Writes a short summary to $OUT/mathexp.log (full outputs beside it). Always exits 0.
set -u
OUT="${OUT:-/tmp/mathexp_out}"
mkdir -p "$OUT"
LOG="$OUT/mathexp.log"
B=build-gpu
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
NPROC=$(nproc)
say "== mathexp $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

if [ -x $B/tests/bitlearn_tests ]; then
  $B/tests/bitlearn_tests --gtest_filter='MathExpLog*' >"$OUT/mathexp_tests.txt" 2>&1
  rc=$?
  grep -E "Failure|FAILED" "$OUT/mathexp_tests.txt" | head -10 >>"$LOG"
  [ $rc -eq 0 ] && say "PASS unit tests MathExpLog*" || say "FAIL unit tests MathExpLog* rc=$rc"
else
  say "FAIL unit tests: $B/tests/bitlearn_tests not built"
fi

CHECK=$B/tools/math_check/bitlearn_math_check
if [ -x $CHECK ]; then
  for fn in exp expm1 log log1p log2 tanh sigmoid silu softplus gelu_tanh; do
    timeout 600 $CHECK --fn $fn --exhaustive --threads "$NPROC" >"$OUT/mathexp_exhaustive_$fn.txt" 2>&1
    rc=$?
    line=$(grep -E "^$fn +(OK|FAIL)" "$OUT/mathexp_exhaustive_$fn.txt" | sed -E 's/  +/ /g' | head -1)
    if [ $rc -eq 0 ]; then say "PASS exhaustive $fn: ${line:-see $OUT/mathexp_exhaustive_$fn.txt}"
    else say "FAIL exhaustive $fn (rc=$rc; 124 = timed out): ${line:-no summary line}"; fi
  done
else
  say "FAIL exhaustive: $CHECK not built (needs libmpfr-dev)"
fi
say "== done $(date -u +%FT%TZ)"
exit 0
