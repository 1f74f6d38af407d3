#!/usr/bin/env bash
# GPU checks of CUDA softmax / log-softmax bandwidth (issue 3), run from the repo root after
# scripts/gpu/build.sh -DBITLEARN_BENCH=ON (everything in build-gpu/). Keep it under ~200 s:
# 1. CUDA tests SoftmaxOnChipCuda.* (both kernel forms, every launch shape, lean-form rows,
#    sabotage arms), ReduceCuda.*, ExpF64Cuda.* except the 2^32 sweeps; CPU tests
#    DivByReciprocal.* (the division lemma) and SoftmaxConformance.*.
# 2. bench_reduce_cuda: softmax / log-softmax (rows of 4096, 2^28 floats, normal and (-90, 90)
#    input, kernel forms and block sizes) and the exp math map against cudaMemcpy D2D.
# 3. ncu on single softmax launches (2^24 floats; default and lean forms): time, instructions per
#    element, issue-slot and DRAM use, pipe use and stall reasons.
# Writes a short summary to $OUT/cuda-softmax.log (PASS/FAIL per item), full outputs beside it.
# Always exits 0.
set -u
OUT="${OUT:-/tmp/cuda_softmax_out}"
mkdir -p "$OUT"
LOG="$OUT/cuda-softmax.log"
B=build-gpu
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
START=$(date +%s)

say "== cuda-softmax $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

run_tests() {  # name binary filter timeout
  local name="$1" bin="$2" filter="$3" limit="$4" out="$OUT/cuda-softmax_$1.txt"
  if [ ! -x "$bin" ]; then say "FAIL $name: $bin not built"; return; fi
  timeout "$limit" "$bin" --gtest_filter="$filter" >"$out" 2>&1
  local rc=$?
  grep -E "Failure|FAILED|first difference|differ" "$out" | head -40 >>"$LOG"
  local passed
  passed=$(grep -oE "^\[  PASSED  \] [0-9]+" "$out" | grep -oE "[0-9]+$")
  [ $rc -eq 0 ] && say "PASS $name ($filter: ${passed:-?} tests)" || say "FAIL $name ($filter), rc=$rc (124 = timed out)"
}

# 1. tests
run_tests cuda_tests $B/tests/bitlearn_cuda_tests \
  'SoftmaxOnChipCuda.*:ReduceCuda.*:ExpF64Cuda.*-ExpF64Cuda.AllInputs*' 100
run_tests cpu_tests $B/tests/bitlearn_tests 'DivByReciprocal.*:SoftmaxConformance.*' 90

# 2. bandwidth
BENCH=$B/bench/bench_reduce_cuda
if [ -x $BENCH ]; then
  timeout 40 $BENCH >"$OUT/cuda-softmax_bench_reduce.txt" 2>&1 || say "FAIL bench_reduce_cuda rc=$?"
  grep -E "D2D|softmax|exp math" "$OUT/cuda-softmax_bench_reduce.txt" >>"$LOG"
else
  say "SKIP bench: $BENCH not built (-DBITLEARN_BENCH=ON)"
fi

# 3. ncu: one launch of the original form (variant 2) and of lean forms, block 256.
if command -v ncu >/dev/null && [ -x $BENCH ] && [ $(( $(date +%s) - START )) -lt 170 ]; then
  M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
  for vb in "2 256" "12 256" "12 64" "29 256" "29 64" "108 256" "108 64" "364 64" "364 32" "365 64" "492 64" "236 64"; do
    set -- $vb
    v=$1; blk=$2
    timeout 25 ncu --metrics $M --csv -k regex:softmax_row_on_chip $BENCH --softmax-once $v $blk \
      >"$OUT/cuda-softmax_ncu_v${v}_b$blk.txt" 2>&1
    grep -E '^"[0-9]' "$OUT/cuda-softmax_ncu_v${v}_b$blk.txt" | awk -F'","' -v v="$v block $blk" '{print "NCU variant " v ": " $(NF-2) " = " $NF}' >>"$LOG"
    inst=$(grep -E 'smsp__inst_executed.sum"' "$OUT/cuda-softmax_ncu_v${v}_b$blk.txt" | awk -F'","' '{gsub(/[",]/,"",$NF); print $NF}' | head -1)
    [ -n "$inst" ] && say "NCU variant $v block $blk: instructions per element = $(awk -v i="$inst" 'BEGIN{printf "%.1f", i*32/16777216}')"
    [ $(( $(date +%s) - START )) -gt 200 ] && break
  done
  # Pipe use and stall reasons of the lean form (full sections, text): which pipe limits it.
  for v in 12 364; do
    [ $(( $(date +%s) - START )) -gt 190 ] && break
    timeout 30 ncu --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats \
      --section WarpStateStats --section MemoryWorkloadAnalysis -k regex:softmax_row_on_chip \
      $BENCH --softmax-once $v 64 >"$OUT/cuda-softmax_ncu_sections_v$v.txt" 2>&1
    grep -iE "pipe|issue slot|issued ipc|eligible|no eligible|Mem Busy|Max Bandwidth|DRAM Throughput|stall" \
      "$OUT/cuda-softmax_ncu_sections_v$v.txt" | head -24 | sed "s/^/NCU-S v$v: /" >>"$LOG"
  done
fi
say "== done $(date -u +%FT%TZ) ($(( $(date +%s) - START )) s)"
exit 0
