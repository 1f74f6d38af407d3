#!/usr/bin/env bash
# The whole GPU check in one go (H200 machine, repo root): builds build-gpu, runs every CUDA test,
# the verifier on CPU and GPU, the CPU = GPU math sweep (all 2^32 inputs on the GPU against a CPU
# sweep of every SWEEP_STEP-th chunk on the host cores) and the CUDA math benchmark.
# Writes $OUT/summary.log plus the reports it names. Always exits 0; failures are FAIL lines.
set -u
OUT="${OUT:-/tmp/gpu_all}"; mkdir -p "$OUT"
LOG="$OUT/summary.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
STEP="${SWEEP_STEP:-4}"
say "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
t0=$(date +%s)
bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON >>"$LOG" 2>&1 || say "FAIL build (see above)"
say "build: $(( $(date +%s) - t0 )) s"
timeout 180 build-gpu/tests/bitlearn_cuda_tests >"$OUT/cuda_tests.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$OUT/cuda_tests.txt" | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS cuda tests" || say "FAIL cuda tests rc=$rc"
B=build-gpu/bitlearn
timeout 120 $B verify --device all --json "$OUT/verify-gpu.json" >"$OUT/verify.txt" 2>&1; rc=$?
grep -vE "IDENTICAL" "$OUT/verify.txt" | tee -a "$LOG"; say "verify --device all rc=$rc"
timeout 60 $B verify --device all --quick | tail -1 | tee -a "$LOG"
C=build-gpu/tools/math_check/bitlearn_math_check
if [ -x $C ]; then
  t0=$(date +%s)
  timeout 150 $C --sweep-hashes "$OUT/sweep_cuda.txt" --device cuda --threads 16 >"$OUT/sweep_cuda.log" 2>&1
  say "cuda sweep (all 2^32 inputs per function): rc=$? $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
  timeout 240 $C --sweep-hashes "$OUT/sweep_cpu.txt" --device cpu --threads "$(nproc)" --sweep-chunk-step "$STEP" >"$OUT/sweep_cpu.log" 2>&1
  say "cpu sweep (every ${STEP}th chunk): rc=$? $(( $(date +%s) - t0 )) s"
  timeout 60 $C --sweep-hashes "$OUT/sweep_cuda.txt" --device file --compare "$OUT/sweep_cpu.txt" >"$OUT/sweep_compare.txt" 2>&1
  rc=$?; tail -25 "$OUT/sweep_compare.txt" | tee -a "$LOG"; say "sweep compare rc=$rc"
else
  say "FAIL $C not built"
fi
[ -x build-gpu/bench/bench_math_cuda ] && timeout 60 build-gpu/bench/bench_math_cuda --benchmark_min_time=0.1s 2>/dev/null | sed -n '/^function/,$p' | tee -a "$LOG"
say "== done $(date -u +%FT%TZ)"
exit 0
