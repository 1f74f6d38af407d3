#!/usr/bin/env bash
# CUDA GEMM and transposing-copy speed on the GPU machine. Run from the repo root after
# `bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON` built build-gpu/. Steps:
#   1. conformance of the CUDA GEMM (MatmulCuda*, every variant) and of the transposing copy;
#   2. the GEMM conformance again for each variant alone (BITLEARN_TEST_MATMUL_VARIANT), so that
#      each variant gets its own PASS/FAIL line;
#   3. bench_gemm_cuda at 4096^3, 8192^3 and the LM shapes: cuBLAS strict fp32, then each variant in
#      its own process; a table of GFLOP/s and the ratio to cuBLAS per shape;
#   4. bench_copy_cuda: transposing copy (variants 0 = default quads, 6 = 32 x 32, 7 = 64 x 64) and add
#      against cudaMemcpy D2D.
# Writes the summary to $OUT/cuda-gemm.log (raw outputs beside it); always exits 0. About 3 minutes.
OUT="${OUT:-.}"
LOG="$OUT/cuda-gemm.log"
B="${BUILD_DIR:-build-gpu}"
unset NVIDIA_TF32_OVERRIDE
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== cuda-gemm: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) rev $(git rev-parse --short HEAD 2>/dev/null)"
T="$B/tests/bitlearn_cuda_tests"
if [ -x "$T" ]; then
  timeout 200 "$T" --gtest_filter='MatmulCuda*:TransposeCopyCuda*' > "$OUT/cuda-gemm_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \] " "$OUT/cuda-gemm_tests.txt" | head -20 | tee -a "$LOG"
  grep -E "Failure|first difference" "$OUT/cuda-gemm_tests.txt" | head -10 | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS conformance MatmulCuda* + TransposeCopyCuda*" || say "FAIL conformance MatmulCuda* + TransposeCopyCuda* (rc=$rc)"
  for v in 6 7 8 9 10; do
    BITLEARN_TEST_MATMUL_VARIANT=$v timeout 100 "$T" --gtest_filter='MatmulCudaConformance.*-*BadInput*' \
      > "$OUT/cuda-gemm_tests_v$v.txt" 2>&1
    rc=$?
    [ $rc -eq 0 ] && say "PASS gemm variant $v conformance" || {
      say "FAIL gemm variant $v conformance (rc=$rc)"
      grep -E "Failure|first difference|error" "$OUT/cuda-gemm_tests_v$v.txt" | head -4 | tee -a "$LOG"
    }
  done
else
  say "FAIL missing $T"
fi

BG="$B/bench/bench_gemm_cuda"
if [ -x "$BG" ]; then
  raw="$OUT/cuda-gemm_bench.txt"
  : > "$raw"
  timeout 60 "$BG" --benchmark_min_time=0.3 --benchmark_filter='BM_cublas_sgemm_strict/M:(4096|8192)/' >> "$raw" 2>&1 \
    || say "FAIL bench cublas rc=$?"
  for v in 0 2 4 5 6 7 8 9 10; do
    timeout 60 "$BG" --benchmark_min_time=0.3 \
      --benchmark_filter="BM_bitlearn_matmul_cuda/M:(4096|8192)/.*/variant:$v/" >> "$raw" 2>&1 \
      || say "FAIL bench variant $v rc=$?"
  done
  # Table: shape, cuBLAS GFLOP/s, then variant:GFLOP/s(ratio) for each variant, best variant last.
  grep -E "^BM_" "$raw" | sed -E 's/^([^ ]+) .*GFLOP\/s=([0-9.]+)([kMG]?).*/\1 \2 \3/' | awk '
    function val(x, u) { return u == "k" ? x * 1e3 : (u == "M" ? x * 1e6 : (u == "G" ? x * 1e9 : x)) }
    {
      name = $1; v = val($2, $3)
      match(name, /M:[0-9]+\/N:[0-9]+\/K:[0-9]+/); shape = substr(name, RSTART, RLENGTH)
      if (name ~ /cublas/) { cub[shape] = v; if (!(shape in seen)) { seen[shape] = 1; order[++ns] = shape } }
      else { match(name, /variant:[0-9]+/); var = substr(name, RSTART + 8, RLENGTH - 8); g[shape, var] = v; vars[var] = 1
             if (!(shape in seen)) { seen[shape] = 1; order[++ns] = shape } }
    }
    END {
      for (i = 1; i <= ns; ++i) {
        s = order[i]; line = sprintf("%-22s cublas %7.0f |", s, cub[s]); best = ""; bv = 0
        for (var = 0; var <= 10; ++var) if ((s, var) in g) {
          r = cub[s] > 0 ? g[s, var] / cub[s] : 0
          line = line sprintf(" v%d %6.0f (%.2f)", var, g[s, var], r)
          if (g[s, var] > bv) { bv = g[s, var]; best = var }
        }
        print "GEMM " line " | best v" best sprintf(" %.2f", cub[s] > 0 ? bv / cub[s] : 0)
      }
    }' | tee -a "$LOG"
else
  say "FAIL missing $BG (build with -DBITLEARN_BENCH=ON)"
fi

BC="$B/bench/bench_copy_cuda"
if [ -x "$BC" ]; then
  timeout 60 "$BC" > "$OUT/cuda-gemm_copy.txt" 2>&1 || say "FAIL bench_copy_cuda rc=$?"
  grep -E "GB/s|FAIL|SKIP" "$OUT/cuda-gemm_copy.txt" | sed 's/^/COPY /' | tee -a "$LOG"
else
  say "FAIL missing $BC"
fi
exit 0
