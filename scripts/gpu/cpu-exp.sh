#!/usr/bin/env bash
# CPU binary64 exp (kernels/cpu/exp_f64_cpu.h) on the GPU machine's host CPU (16 cores, AVX-512).
# Run from the repo root after scripts/gpu/build.sh -DBITLEARN_BENCH=ON (build-gpu/):
#   1. ExpF64Simd* conformance (degree-12 and table-driven kernels, AVX2 and AVX-512, vs the scalar
#      bl::exp by memcmp, sabotage arms) + MathMap / softmax conformance (SoftmaxConformance,
#      SoftmaxRows: one-pass rows, fused leaf kernel, streamed outputs), with the defaults (the
#      table-driven kernels), with BITLEARN_EXP_F64_SOFTMAX_FUSED=1 (the opt-in fused softmax loop)
#      and with BITLEARN_EXP_F64_TABLE=0 (the degree-12 kernels);
#   2. the CPU 2^32 exp sweep with the defaults (table-driven AVX-512 kernel) against the committed
#      hashes (tests/data/math/sweep_cpu.txt);
#   3. bench_reduce: exp / softmax / log_softmax against memcpy at 16 and 1 threads for
#      (table, fused, stream) = (1,1,1) (1,1,0) (1,0,0: the defaults) (1,0,1) (0,0,0: degree 12),
#      then in cache (2^18 floats, 1 thread) for the compute cost alone.
# Summary in $OUT/cpu-exp.log (PASS/FAIL per item, the figures); full outputs beside it. Exits 0.
cd "$(dirname "$0")/../.." || exit 0
OUT="${OUT:-.}"
mkdir -p "$OUT"
LOG="$OUT/cpu-exp.log"
B="${BUILD_DIR:-build-gpu}"
START=$(date +%s)
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo "$(( $(date +%s) - START )) s"; }

say "== cpu-exp: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cores"
say "load: $(cut -d' ' -f1-3 /proc/loadavg); avx512f: $(grep -c -m1 avx512f /proc/cpuinfo)"

# 1. conformance
FILTER='*ExpF64Simd*:ExpF64*:MathMap*:SoftmaxConformance*:SoftmaxRows*'
if [ -x "$B/tests/bitlearn_tests" ]; then
  for mode in default fused degree12; do
    base=(env -u BITLEARN_ISA -u BITLEARN_EXP_F64_AVX512 -u BITLEARN_EXP_F64_STREAM)
    case $mode in
      default) env_run=("${base[@]}" -u BITLEARN_EXP_F64_TABLE -u BITLEARN_EXP_F64_SOFTMAX_FUSED) ;;
      fused) env_run=("${base[@]}" -u BITLEARN_EXP_F64_TABLE BITLEARN_EXP_F64_SOFTMAX_FUSED=1) ;;
      degree12) env_run=("${base[@]}" -u BITLEARN_EXP_F64_SOFTMAX_FUSED BITLEARN_EXP_F64_TABLE=0) ;;
    esac
    "${env_run[@]}" timeout 40 "$B/tests/bitlearn_tests" --gtest_filter="$FILTER" \
      > "$OUT/cpu-exp_tests_$mode.txt" 2>&1
    rc=$?
    summary=$(grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/cpu-exp_tests_$mode.txt" | tr '\n' ' ')
    [ $rc -eq 0 ] && say "PASS conformance $mode: $summary ($(elapsed))" ||
      { say "FAIL conformance $mode (rc $rc): $summary"; grep -E "^\[  FAILED|first diff|Failure" "$OUT/cpu-exp_tests_$mode.txt" | head -10 | tee -a "$LOG"; }
  done
else
  say "FAIL missing $B/tests/bitlearn_tests"
fi

# 2. the 2^32 exp sweep through the default (table-driven AVX-512) kernel vs the committed hashes
CHECK="$B/tools/math_check/bitlearn_math_check"
if [ -x "$CHECK" ]; then
  env -u BITLEARN_ISA -u BITLEARN_EXP_F64_TABLE -u BITLEARN_EXP_F64_AVX512 timeout 70 "$CHECK" --sweep-hashes "$OUT/cpu-exp_sweep.txt" \
    --device cpu --fn exp --threads "$(nproc)" --compare tests/data/math/sweep_cpu.txt \
    > "$OUT/cpu-exp_sweep.log" 2>&1
  rc=$?
  tail -3 "$OUT/cpu-exp_sweep.log" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS exp sweep 2^32 (defaults: table-driven AVX-512 kernel) IDENTICAL to committed ($(elapsed))" ||
    say "FAIL exp sweep 2^32 avx512 rc=$rc (124 = timed out) ($(elapsed))"
else
  say "FAIL missing $CHECK"
fi

# 3. bandwidth against memcpy
if [ -x "$B/bench/bench_reduce" ]; then
  for cfg in "1 1 1 16,1" "1 1 0 16,1" "1 0 0 16,1" "1 0 1 16,1" "0 0 0 16,1"; do
    set -- $cfg
    env_k=(env BITLEARN_EXP_F64_TABLE=$1 BITLEARN_EXP_F64_SOFTMAX_FUSED=$2 BITLEARN_EXP_F64_STREAM=$3
           BITLEARN_BENCH_THREADS=$4 BITLEARN_BENCH_REPS=3)
    name="table$1_fused$2_stream$3"
    "${env_k[@]}" BITLEARN_BENCH_OPS=exp,softmax,log_softmax BITLEARN_BENCH_FLOATS=268435456 \
      timeout 50 "$B/bench/bench_reduce" > "$OUT/cpu-exp_bench_$name.txt" 2>&1
    rc=$?
    say "-- bench_reduce, BITLEARN_EXP_F64_TABLE=$1 BITLEARN_EXP_F64_SOFTMAX_FUSED=$2 BITLEARN_EXP_F64_STREAM=$3 threads $4 (1 0 0: the defaults)"
    tee -a "$LOG" < "$OUT/cpu-exp_bench_$name.txt"
    [ $rc -eq 0 ] && say "PASS bench_reduce $name ($(elapsed))" || say "FAIL bench_reduce $name rc=$rc ($(elapsed))"
  done
  for f in 1 0; do
    BITLEARN_EXP_F64_SOFTMAX_FUSED=$f BITLEARN_BENCH_THREADS=1 BITLEARN_BENCH_REPS=21 BITLEARN_BENCH_FLOATS=262144 \
      BITLEARN_BENCH_OPS=exp,softmax,log_softmax timeout 20 "$B/bench/bench_reduce" > "$OUT/cpu-exp_bench_cache_fused$f.txt" 2>&1
    say "-- bench_reduce in cache (2^18 floats, 1 thread, 21 reps), defaults with BITLEARN_EXP_F64_SOFTMAX_FUSED=$f"
    tail -5 "$OUT/cpu-exp_bench_cache_fused$f.txt" | tee -a "$LOG"
  done
else
  say "FAIL missing $B/bench/bench_reduce"
fi
say "done in $(elapsed); load $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
