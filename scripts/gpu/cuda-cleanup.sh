#!/usr/bin/env bash
# CUDA housekeeping checks on the GPU machine, from the repo root after
# `bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON` built build-gpu/. Steps (about 3 minutes at most):
#   1. the CUDA GEMM conformance and the allocator (MatmulCuda*:MatmulBiasCuda*:CudaAllocator*, which
#      includes MatmulCudaScratch.*: the leaf-parallel scratch through the caching allocator and
#      cuda_empty_cache, many host threads), with the cache on, then the scratch and allocator tests
#      again with BITLEARN_CUDA_CACHE=0;
#   2. MathMapCuda.* in its quick default form, timed, then the million-element sample
#      (MathMapCuda.ExhaustiveMillionElementSample, BITLEARN_CUDA_EXHAUSTIVE=1) with its per-function
#      split between reference and device time;
#   3. the whole CUDA test binary as a default run sees it (wall time, the tests of 1 s or more),
#      within the time left (at most 150 s);
#   4. bench_gemm_cuda at the GPT-2 124M prefill shapes (cuBLAS, variants 0, 11, 14);
#   5. if time is left, the GPT-2 124M prefill against PyTorch (bench/llm_vs_torch.py).
# Writes the summary to $OUT/cuda-cleanup.log, raw outputs beside it. Always exits 0.
set -u
OUT="${OUT:-/tmp/cuda_cleanup_out}"; mkdir -p "$OUT"
LOG="$OUT/cuda-cleanup.log"; : >"$LOG"
B="${BUILD_DIR:-build-gpu}"
T="$B/tests/bitlearn_cuda_tests"
START=$(date +%s)
unset NVIDIA_TF32_OVERRIDE BITLEARN_CUDA_CACHE BITLEARN_CUDA_EXHAUSTIVE
say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo $(( $(date +%s) - START )); }
say "== cuda-cleanup $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) rev $(git rev-parse --short HEAD 2>/dev/null)"

# run_tests NAME LIMIT FILTER: one gtest run, PASS/FAIL with the wall time, per-test times kept.
run_tests() {
  local name="$1" limit="$2" filter="$3" out="$OUT/cuda-cleanup_$1.txt" t0 rc passed
  if [ ! -x "$T" ]; then say "FAIL $name: $T not built"; return; fi
  t0=$(date +%s.%N)
  timeout "$limit" "$T" --gtest_filter="$filter" >"$out" 2>&1
  rc=$?
  local secs; secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  passed=$(grep -oE "^\[  PASSED  \] [0-9]+" "$out" | grep -oE "[0-9]+$")
  grep -E "^\[  FAILED  \] |Failure|first difference" "$out" | head -12 >>"$LOG"
  if [ $rc -eq 0 ]; then say "PASS $name ($filter: ${passed:-?} tests, ${secs} s)"
  else say "FAIL $name ($filter), rc=$rc (124 = timed out), ${secs} s"; fi
}

# 1. GEMM conformance, scratch, allocator.
run_tests gemm 100 'MatmulCuda*:MatmulBiasCuda*:CudaAllocator*'
grep -E "^\[       OK \] (MatmulCudaScratch|MatmulCudaConformance|MatmulBiasCuda)" "$OUT/cuda-cleanup_gemm.txt" \
  | sed 's/^\[       OK \] /  time /' >>"$LOG"
BITLEARN_CUDA_CACHE=0 run_tests scratch_cache_off 40 'MatmulCudaScratch.*:CudaAllocator*'

# 2. Math map: quick default form, then the million-element sample.
run_tests mathmap_quick 60 'MathMapCuda.*'
grep -E "MathMapCuda quick sample|^\[       OK \] MathMapCuda" "$OUT/cuda-cleanup_mathmap_quick.txt" >>"$LOG"
BITLEARN_CUDA_EXHAUSTIVE=1 run_tests mathmap_exhaustive 90 'MathMapCuda.ExhaustiveMillionElementSample'
grep -E "million-element sample|^\[       OK \]" "$OUT/cuda-cleanup_mathmap_exhaustive.txt" >>"$LOG"

# 3. The whole CUDA test binary in its default form (no variables set): wall time, count, and the
#    tests that take a second or more.
left=$(( 225 - 60 - $(elapsed) )); [ "$left" -gt 150 ] && left=150
if [ -x "$T" ] && [ "$left" -gt 30 ]; then
  all="$OUT/cuda-cleanup_all_cuda_tests.txt"
  t0=$(date +%s)
  timeout "$left" "$T" >"$all" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  ran=$(grep -cE "^\[       OK \]|^\[  FAILED  \] [A-Za-z]" "$all")
  grep -E "^\[  FAILED  \] |^\[  PASSED  \]|tests ran" "$all" | head -8 >>"$LOG"
  if [ $rc -eq 0 ]; then say "PASS whole CUDA test binary: $ran tests in $secs s"
  else say "FAIL whole CUDA test binary rc=$rc (124 = stopped at $left s) after $ran tests, $secs s"
       say "  last started: $(grep -E '^\[ RUN' "$all" | tail -1)"; fi
  grep -E "^\[       OK \] .* \(([0-9]{4,}) ms\)" "$all" | sed 's/^\[       OK \] /  slow test /' >>"$LOG"
else
  say "SKIP whole CUDA test binary ($left s left)"
fi

# 4. GEMM at the prefill shapes (microseconds per product, ratio to cuBLAS).
BG="$B/bench/bench_gemm_cuda"
if [ -x "$BG" ]; then
  raw="$OUT/cuda-cleanup_bench_gemm.txt"
  timeout 40 "$BG" --benchmark_min_time=0.1 \
    --benchmark_filter='BM_cublas_sgemm_strict/M:128/|BM_bitlearn_matmul_cuda/M:128/.*/variant:(0|11|14)/' \
    >"$raw" 2>&1 || say "FAIL bench_gemm_cuda rc=$?"
  grep -E "^BM_" "$raw" | awk '
    { name = $1; t = $2; unit = $3
      us = unit == "ms" ? t * 1000 : (unit == "us" ? t : (unit == "ns" ? t / 1000 : t * 1e6))
      match(name, /M:[0-9]+\/N:[0-9]+\/K:[0-9]+/); shape = substr(name, RSTART, RLENGTH)
      if (!(shape in seen)) { seen[shape] = 1; order[++ns] = shape }
      if (name ~ /cublas/) cub[shape] = us
      else { match(name, /variant:[0-9]+/); v = substr(name, RSTART + 8, RLENGTH - 8); g[shape, v] = us; vs[v] = 1 } }
    END { for (i = 1; i <= ns; ++i) { s = order[i]; line = sprintf("GEMM %-22s cublas %6.1f us |", s, cub[s])
            for (v in vs) if ((s, v) in g) line = line sprintf(" v%s %.1f us (%.2f)", v, g[s, v], cub[s] / g[s, v])
            print line } }' | tee -a "$LOG"
else
  say "SKIP bench_gemm_cuda not built (-DBITLEARN_BENCH=ON)"
fi

# 5. GPT-2 124M prefill against PyTorch, only if the run has the time for it.
BL="$B/bench/bench_llm"
left=$(( 225 - $(elapsed) ))
if [ -x "$BL" ] && [ "$left" -gt 45 ] && python3 -c "import torch" 2>/dev/null; then
  timeout "$left" python3 bench/llm_vs_torch.py --bench "$BL" --device cuda --only gpt2-124m --decode 8 \
    >"$OUT/cuda-cleanup_llm.md" 2>&1 && say "PASS bench llm gpt2-124m cuda" || say "FAIL bench llm (rc=$?)"
  grep -E "^\|" "$OUT/cuda-cleanup_llm.md" | tee -a "$LOG"
else
  say "SKIP bench llm ($left s left, or bench_llm / torch missing)"
fi
say "== cuda-cleanup done $(date -u +%FT%TZ), $(elapsed) s"
exit 0
