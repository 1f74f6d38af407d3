#!/usr/bin/env bash
# GPU checks of the math map, run from the repo root after:
#   cmake -S . -B build-gpu -G Ninja -DBITLEARN_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j16
# 1. CUDA conformance tests of math_map_cuda (every launch config vs the reference, sabotage arm).
# 2. CPU = GPU sweep: every unary function on all 2^32 inputs (and the pow pair sample) on the
#    GPU, hashed per chunk of 2^24, compared with tests/data/math/sweep_cpu.txt.
# 3. The exhaustive accuracy check on this machine's CPU cores (2^32 inputs per function).
# 4. The CUDA math benchmark (ours vs CUDA's expf/logf/... kernels).
# Writes a short summary to $OUT/mathcheck.log and the full outputs beside it. Always exits 0.
set -u
OUT="${OUT:-/tmp/mathcheck_out}"
mkdir -p "$OUT"
LOG="$OUT/mathcheck.log"
B=build-gpu
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
NPROC=$(nproc)

say "== mathcheck $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# 1. conformance
if [ -x $B/tests/bitlearn_cuda_tests ]; then
  $B/tests/bitlearn_cuda_tests --gtest_filter='MathMapCuda*' >"$OUT/mathcheck_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|first difference" "$OUT/mathcheck_cuda_tests.txt" | head -20 >>"$LOG"
  [ $rc -eq 0 ] && say "PASS cuda conformance (MathMapCuda*)" || say "FAIL cuda conformance (MathMapCuda*), rc=$rc"
else
  say "FAIL cuda conformance: $B/tests/bitlearn_cuda_tests not built"
fi

CHECK=$B/tools/math_check/bitlearn_math_check
# 2. sweep
if [ -x $CHECK ]; then
  timeout 900 $CHECK --sweep-hashes "$OUT/mathcheck_sweep_cuda.txt" --device cuda \
    --compare tests/data/math/sweep_cpu.txt --threads "$NPROC" >"$OUT/mathcheck_sweep.txt" 2>&1
  rc=$?
  grep -vE "^sweep \(cuda\):" "$OUT/mathcheck_sweep.txt" | tail -40 >>"$LOG"
  [ $rc -eq 0 ] && say "PASS sweep: every function IDENTICAL to the committed CPU hashes" \
                || say "FAIL sweep (rc=$rc): see DIFFERENT / MISSING lines above"
else
  say "FAIL sweep: $CHECK not built (needs libmpfr-dev)"
fi

# 3. exhaustive accuracy on the host CPU (pow: 2^24 sampled pairs)
if [ -x $CHECK ]; then
  timeout 1500 $CHECK --fn all --exhaustive --threads "$NPROC" \
    --json "$OUT/mathcheck_exhaustive.json" >"$OUT/mathcheck_exhaustive.txt" 2>&1
  rc=$?
  grep -E "^[a-z_0-9]+ +(OK|FAIL)|^PASS|^FAIL" "$OUT/mathcheck_exhaustive.txt" | \
    sed -E 's/  +/ /g' >>"$LOG"
  [ $rc -eq 0 ] && say "PASS exhaustive accuracy" || say "FAIL exhaustive accuracy (rc=$rc; 124 = timed out)"
fi

# 4. benchmark
if [ -x $B/bench/bench_math_cuda ]; then
  timeout 300 $B/bench/bench_math_cuda --benchmark_min_time=0.2s >"$OUT/mathcheck_bench_cuda.txt" 2>&1 \
    || say "FAIL bench_math_cuda rc=$?"
  sed -n '/^function/,$p' "$OUT/mathcheck_bench_cuda.txt" >>"$LOG"
else
  say "SKIP bench: $B/bench/bench_math_cuda not built"
fi
say "== done $(date -u +%FT%TZ)"
exit 0
