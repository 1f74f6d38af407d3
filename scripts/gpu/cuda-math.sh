#!/usr/bin/env bash
# GPU checks of the binary64 exp in device code (src/contract/math/exp_f64.h), run from the repo
# root after scripts/gpu/build.sh -DBITLEARN_BENCH=ON (everything in build-gpu/):
# 1. CUDA tests ExpF64Cuda.* (hard inputs, fallback count, sabotage arms), MathMapCuda.*, the
#    ReduceCuda.* conformance tests (softmax calls exp), the exp
#    Tensor op bandwidth report, and the CPU tests ExpF64.*.
# 2. CPU = GPU sweep of exp over all 2^32 inputs: the host CPU (float-float path) against the GPU
#    (binary64 path with fallback), hashed per chunk, then the GPU hashes against the committed
#    tests/data/math/sweep_cpu.txt.
# 3. Benchmarks: bench_math_cuda (exp GB/s vs CUDA's expf) and bench_reduce_cuda (softmax vs D2D).
# Writes a short summary to $OUT/cuda-math.log, full outputs beside it. Always exits 0. ~2-3 min.
set -u
OUT="${OUT:-/tmp/cuda_math_out}"
mkdir -p "$OUT"
LOG="$OUT/cuda-math.log"
B=build-gpu
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
NPROC=$(nproc)
FNS="exp"  # the functions with a binary64 device path

say "== cuda-math $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# 1. tests
run_tests() {  # name binary filter
  local name="$1" bin="$2" filter="$3" out="$OUT/cuda-math_$1.txt"
  if [ ! -x "$bin" ]; then say "FAIL $name: $bin not built"; return; fi
  timeout 300 "$bin" --gtest_filter="$filter" >"$out" 2>&1
  local rc=$?
  grep -E "exp_f64|Failure|FAILED|first difference|SKIPPED \]" "$out" | head -20 >>"$LOG"
  local passed
  passed=$(grep -oE "^\[  PASSED  \] [0-9]+" "$out" | grep -oE "[0-9]+$")
  [ $rc -eq 0 ] && say "PASS $name ($filter: ${passed:-?} tests)" || say "FAIL $name ($filter), rc=$rc"
}
# BITLEARN_CUDA_EXHAUSTIVE=1: MathMapCuda's million-element sample runs too (skipped by default).
BITLEARN_CUDA_EXHAUSTIVE=1 run_tests cuda_tests $B/tests/bitlearn_cuda_tests 'ExpF64Cuda.*:MathMapCuda.*:ReduceCuda.*'
run_tests cuda_bandwidth $B/tests/bitlearn_cuda_tests 'TensorOpsCuda.BandwidthReport'
grep -E "^BANDWIDTH" "$OUT/cuda-math_cuda_bandwidth.txt" >>"$LOG" 2>/dev/null
run_tests cpu_tests $B/tests/bitlearn_tests 'ExpF64.*:MathMap*'
# Every CUDA test (attention, selective scan, losses ... call exp on the device too).
if [ -x $B/tests/bitlearn_cuda_tests ]; then
  timeout 200 $B/tests/bitlearn_cuda_tests >"$OUT/cuda-math_all_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$OUT/cuda-math_all_cuda_tests.txt" | head -20 >>"$LOG"
  [ $rc -eq 0 ] && say "PASS all CUDA tests" || say "FAIL all CUDA tests rc=$rc (124 = timed out)"
fi

# 2. sweep of the changed functions
CHECK=$B/tools/math_check/bitlearn_math_check
REF=tests/data/math/sweep_cpu.txt
if [ -x $CHECK ]; then
  for fn in $FNS; do
    timeout 600 $CHECK --fn $fn --sweep-hashes "$OUT/cuda-math_sweep_cpu_$fn.txt" --device cpu \
      --threads "$NPROC" >"$OUT/cuda-math_sweep_cpu_$fn.log" 2>&1
    rc=$?
    tail -1 "$OUT/cuda-math_sweep_cpu_$fn.log" >>"$LOG"
    if [ $rc -ne 0 ]; then say "FAIL sweep $fn: CPU sweep on this host rc=$rc"; continue; fi
    timeout 600 $CHECK --fn $fn --sweep-hashes "$OUT/cuda-math_sweep_cuda_$fn.txt" --device cuda \
      --compare "$OUT/cuda-math_sweep_cpu_$fn.txt" --threads "$NPROC" >"$OUT/cuda-math_sweep_cuda_$fn.log" 2>&1
    rc=$?
    grep -vE "^sweep \(cuda\):" "$OUT/cuda-math_sweep_cuda_$fn.log" | tail -6 >>"$LOG"
    [ $rc -eq 0 ] && say "PASS sweep $fn: CUDA IDENTICAL to this host's CPU on all 2^32 inputs" \
                  || say "FAIL sweep $fn: CUDA differs from this host's CPU (rc=$rc)"
    $CHECK --fn $fn --sweep-hashes "$OUT/cuda-math_sweep_cuda_$fn.txt" --device file --compare "$REF" \
      >"$OUT/cuda-math_sweep_committed_$fn.log" 2>&1
    rc=$?
    sed 's/^/  committed: /' "$OUT/cuda-math_sweep_committed_$fn.log" | tail -3 >>"$LOG"
    [ $rc -eq 0 ] && say "PASS sweep $fn: CUDA IDENTICAL to the committed CPU hashes ($REF)" \
                  || say "FAIL sweep $fn vs committed $REF (rc=$rc)"
  done
else
  say "FAIL sweep: $CHECK not built (needs MPFR headers: .gpudeps/include, see scripts/gpu/build.sh)"
fi

# 3. benchmarks
if [ -x $B/bench/bench_math_cuda ]; then
  timeout 300 $B/bench/bench_math_cuda --benchmark_min_time=0.2s >"$OUT/cuda-math_bench_math.txt" 2>&1 \
    || say "FAIL bench_math_cuda rc=$?"
  sed -n '/^function/,$p' "$OUT/cuda-math_bench_math.txt" >>"$LOG"
else
  say "SKIP bench: $B/bench/bench_math_cuda not built (-DBITLEARN_BENCH=ON)"
fi
if [ -x $B/bench/bench_reduce_cuda ]; then
  timeout 300 $B/bench/bench_reduce_cuda >"$OUT/cuda-math_bench_reduce.txt" 2>&1 \
    || say "FAIL bench_reduce_cuda rc=$?"
  grep -E "D2D|softmax|sum  " "$OUT/cuda-math_bench_reduce.txt" >>"$LOG"
else
  say "SKIP bench: $B/bench/bench_reduce_cuda not built (-DBITLEARN_BENCH=ON)"
fi
say "== done $(date -u +%FT%TZ)"
exit 0
