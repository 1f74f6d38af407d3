#!/usr/bin/env bash
# GPU checks of the math map, run from the repo root after:
#   cmake -S . -B build-gpu -G Ninja -DBITLEARN_CUDA=ON -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j16
# 1. CUDA conformance tests of math_map_cuda (every launch config vs the reference, sabotage arm).
# 2. CPU = GPU sweep: every unary function on all 2^32 inputs (and the pow pair sample), hashed
#    per chunk of 2^24: first on this host's CPU cores, then on the GPU compared with it, then the
#    GPU hashes against the committed tests/data/math/sweep_cpu.txt (every 16th chunk).
# 3. Accuracy check on this host's CPU cores: 2^24 samples per function, or all 2^32 inputs with
#    MATHCHECK_EXHAUSTIVE=1.
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
  BITLEARN_CUDA_EXHAUSTIVE=1 $B/tests/bitlearn_cuda_tests --gtest_filter='MathMapCuda*' >"$OUT/mathcheck_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|first difference" "$OUT/mathcheck_cuda_tests.txt" | head -20 >>"$LOG"
  [ $rc -eq 0 ] && say "PASS cuda conformance (MathMapCuda*)" || say "FAIL cuda conformance (MathMapCuda*), rc=$rc"
else
  say "FAIL cuda conformance: $B/tests/bitlearn_cuda_tests not built"
fi

CHECK=$B/tools/math_check/bitlearn_math_check
REF=tests/data/math/sweep_cpu.txt
if [ -x $CHECK ]; then
  # 2a. Full CPU sweep on this host (math_map_cpu, all cores): the same-commit CPU reference.
  timeout 1200 $CHECK --sweep-hashes "$OUT/mathcheck_sweep_cpu_host.txt" --device cpu \
    --threads "$NPROC" >"$OUT/mathcheck_sweep_cpu_host.log" 2>&1
  rc=$?
  tail -1 "$OUT/mathcheck_sweep_cpu_host.log" | tee -a "$LOG"
  [ $rc -eq 0 ] || say "FAIL cpu sweep on this host (rc=$rc; 124 = timed out)"
  # 2b. Full CUDA sweep, compared with 2a (first differing input printed on a difference).
  if [ -s "$OUT/mathcheck_sweep_cpu_host.txt" ] && [ $rc -eq 0 ]; then
    timeout 900 $CHECK --sweep-hashes "$OUT/mathcheck_sweep_cuda.txt" --device cuda \
      --compare "$OUT/mathcheck_sweep_cpu_host.txt" --threads "$NPROC" >"$OUT/mathcheck_sweep_cuda.log" 2>&1
    rc=$?
    grep -vE "^sweep \(cuda\):" "$OUT/mathcheck_sweep_cuda.log" | tail -40 >>"$LOG"
    [ $rc -eq 0 ] && say "PASS sweep: CUDA IDENTICAL to this host's CPU for every function (all 2^32 inputs)" \
                  || say "FAIL sweep CUDA vs CPU (rc=$rc): see DIFFERENT lines above"
  fi
  # 2c. The CUDA hashes against the CPU hash file committed from the development machine
  #     (a subset of chunks; STALE when the math functions changed after it was made).
  if [ -s "$OUT/mathcheck_sweep_cuda.txt" ] && [ -f "$REF" ]; then
    $CHECK --sweep-hashes "$OUT/mathcheck_sweep_cuda.txt" --device file --compare "$REF" \
      >"$OUT/mathcheck_sweep_vs_committed.log" 2>&1
    rc=$?
    sed 's/^/  committed: /' "$OUT/mathcheck_sweep_vs_committed.log" | tail -20 >>"$LOG"
    [ $rc -eq 0 ] && say "PASS sweep: CUDA IDENTICAL to the committed CPU hashes ($REF)" \
                  || say "FAIL/STALE sweep vs committed $REF (rc=$rc)"
  fi
  # 3. Accuracy on 2^24 sampled inputs per function (MATHCHECK_EXHAUSTIVE=1: all 2^32, ~15+ min).
  if [ "${MATHCHECK_EXHAUSTIVE:-0}" = 1 ]; then MODE=--exhaustive; T=3000; else MODE="--sample 16777216"; T=600; fi
  timeout $T $CHECK --fn all $MODE --threads "$NPROC" \
    --json "$OUT/mathcheck_accuracy.json" >"$OUT/mathcheck_accuracy.txt" 2>&1
  rc=$?
  grep -E "^[a-z_0-9]+ +(OK|FAIL)" "$OUT/mathcheck_accuracy.txt" | sed -E 's/  +/ /g' >>"$LOG"
  [ $rc -eq 0 ] && say "PASS accuracy ($MODE)" || say "FAIL accuracy ($MODE, rc=$rc; 124 = timed out)"
else
  say "FAIL sweep/accuracy: $CHECK not built (needs libmpfr-dev)"
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
