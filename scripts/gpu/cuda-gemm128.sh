#!/usr/bin/env bash
# CUDA GEMM for products with few rows (the 128-token prefill of GPT-2 124M) on the GPU machine. Run
# from the repo root after `bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON` built build-gpu/. Steps:
#   1. conformance of the CUDA GEMM (MatmulCuda*, every variant and launch config, one run) with a
#      PASS/FAIL line per small-tile variant (0, 11..16) read from the failure messages, and of the
#      product with the bias added as it stores (MatmulBiasCuda*);
#   2. CPU = CUDA on the fixture language models (Fixtures/HfModelCuda.*, SkinnyMatmulCuda.*) and
#      `bitlearn verify --device all` (every digest IDENTICAL across devices);
#   3. bench_gemm_cuda at the four prefill shapes and the LM head: cuBLAS strict fp32 and each
#      variant, GFLOP/s, microseconds and the ratio to cuBLAS;
#   4. bench/llm_vs_torch.py for gpt2-124m on CUDA (prefill ms and ratio to PyTorch fp32);
#   5. with BL_GEMM128_NCU=1 (default on) a per-kernel time summary of the prefill under ncu.
# Writes the summary to $OUT/cuda-gemm128.log (raw outputs beside it); always exits 0. ~2.5 minutes.
set -u
OUT="${OUT:-/tmp/gpu_gemm128}"; mkdir -p "$OUT"
LOG="$OUT/cuda-gemm128.log"; : >"$LOG"
B="${BUILD_DIR:-build-gpu}"
unset NVIDIA_TF32_OVERRIDE
say() { echo "$*" | tee -a "$LOG"; }
say "== cuda-gemm128: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) rev $(git rev-parse --short HEAD 2>/dev/null)"

T="$B/tests/bitlearn_cuda_tests"
if [ -x "$T" ]; then
  timeout 60 "$T" --gtest_filter='MatmulCuda*:MatmulBiasCuda*' >"$OUT/gemm128_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \] |^\[       OK \]" "$OUT/gemm128_tests.txt" | head -30 | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS conformance MatmulCuda* + MatmulBiasCuda* (all variants)" || say "FAIL conformance MatmulCuda* + MatmulBiasCuda* (rc=$rc)"
  for v in 0 11 12 13 14 15 16; do
    n=$(grep -cE "variant=$v( |\$)" "$OUT/gemm128_tests.txt")
    if [ $rc -eq 0 ]; then say "PASS gemm variant $v conformance"
    elif [ "$n" -eq 0 ]; then say "PASS? gemm variant $v: no failure names it (run failed elsewhere)"
    else say "FAIL gemm variant $v conformance ($n failure lines)"; grep -E "variant=$v( |\$)" "$OUT/gemm128_tests.txt" | head -3 | tee -a "$LOG"
    fi
  done
  timeout 60 "$T" --gtest_filter='Fixtures/HfModelCuda.*:SkinnyMatmulCuda.*' >"$OUT/gemm128_models.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \] " "$OUT/gemm128_models.txt" | head -10 | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS fixture models CPU = CUDA" || say "FAIL fixture models CPU = CUDA (rc=$rc)"
  if [ -x "$B/bitlearn" ]; then
    timeout 60 "$B/bitlearn" verify --device all >"$OUT/gemm128_verify.txt" 2>&1
    rc=$?
    grep -E "gemm|llm|DIVERGENT" "$OUT/gemm128_verify.txt" | head -12 | tee -a "$LOG"
    bad=$(grep -c "DIVERGENT" "$OUT/gemm128_verify.txt")
    [ $rc -eq 0 ] && [ "$bad" -eq 0 ] && say "PASS verify --device all" || say "FAIL verify --device all (rc=$rc, $bad bad lines)"
  fi
else
  say "FAIL missing $T"
fi

BG="$B/bench/bench_gemm_cuda"
if [ -x "$BG" ]; then
  raw="$OUT/gemm128_bench.txt"
  timeout 70 "$BG" --benchmark_min_time=0.2 \
    --benchmark_filter='(BM_cublas_sgemm_strict|BM_bitlearn_matmul_cuda)/M:128/|lm_head' >"$raw" 2>&1 \
    || say "FAIL bench_gemm_cuda rc=$?"
  # Table per shape: cuBLAS, then variant: us (ratio to cuBLAS).
  grep -E "^BM_" "$raw" | awk '
    {
      name = $1; t = $2; unit = $3
      us = unit == "ms" ? t * 1000 : (unit == "us" ? t : (unit == "ns" ? t / 1000 : t * 1e6))
      match(name, /M:[0-9]+\/N:[0-9]+\/K:[0-9]+(\/trans_b:[01])?/); shape = substr(name, RSTART, RLENGTH)
      if (!(shape in seen)) { seen[shape] = 1; order[++ns] = shape }
      if (name ~ /cublas/) cub[shape] = us
      else { match(name, /variant:[0-9]+/); var = substr(name, RSTART + 8, RLENGTH - 8); g[shape, var] = us }
    }
    END {
      for (i = 1; i <= ns; ++i) {
        s = order[i]; line = sprintf("%-34s cublas %7.1f us |", s, cub[s]); best = ""; bt = 1e30
        for (var = 0; var <= 16; ++var) if ((s, var) in g) {
          line = line sprintf(" v%d %.1f (%.2f)", var, g[s, var], g[s, var] > 0 ? cub[s] / g[s, var] : 0)
          if (g[s, var] < bt) { bt = g[s, var]; best = var }
        }
        print "GEMM " line " | best v" best sprintf(" %.2f", bt > 0 ? cub[s] / bt : 0)
      }
    }' | tee -a "$LOG"
else
  say "FAIL missing $BG (build with -DBITLEARN_BENCH=ON)"
fi

BL="$B/bench/bench_llm"
if [ -x "$BL" ] && python3 -c "import torch" 2>/dev/null; then
  timeout 90 python3 bench/llm_vs_torch.py --bench "$BL" --device cuda --only gpt2-124m --decode 8 \
    >"$OUT/gemm128_llm.md" 2>&1 && say "PASS bench llm gpt2-124m cuda" || say "FAIL bench llm (rc=$?)"
  grep -E "^\|" "$OUT/gemm128_llm.md" | tee -a "$LOG"
  awk -F'|' '/prefill/ { gsub(/,/, "", $4); gsub(/,/, "", $5); if ($4 + 0 > 0 && $5 + 0 > 0)
    printf "PREFILL gpt2-124m 128 tok: bitlearn %.2f ms, torch %.2f ms, ratio %.2f\n", 128000 / $4, 128000 / $5, $4 / $5 }' \
    "$OUT/gemm128_llm.md" | tee -a "$LOG"
else
  say "FAIL bench llm: $BL missing or torch not importable"
fi

if [ "${BL_GEMM128_NCU:-1}" = 1 ] && command -v ncu >/dev/null && [ -x "$BL" ]; then
  # One prefill after the model is built: kernels by name, count and total time (the first
  # kernels are the model's load; the transposing copy of the tied embedding is made there once).
  BL_LLM_DEVICE=cuda BL_LLM_ONLY=gpt2-124m timeout 100 ncu --metrics gpu__time_duration.sum --csv \
    --print-units base -c 420 "$BL" --benchmark_filter='prefill' --benchmark_min_time=0.001 \
    >"$OUT/gemm128_ncu.csv" 2>"$OUT/gemm128_ncu.err"
  python3 - "$OUT/gemm128_ncu.csv" <<'EOF' 2>&1 | tee -a "$LOG"
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    print("NCU no rows"); sys.exit(0)
head = rows[0]; ki = head.index("Kernel Name"); vi = head.index("Metric Value"); ii = head.index("ID")
seq = [(int(r[ii]), r[ki].split("(")[0].split("<")[0].replace("void ", ""), r[ki], float(r[vi].replace(",", "")) / 1e3)
       for r in rows[1:]]
print(f"NCU {len(seq)} kernels profiled, total {sum(s[3] for s in seq):.1f} us")
agg = collections.OrderedDict()
for _, short, full, us in seq:
    key = full[:140]
    n, t = agg.get(key, (0, 0.0)); agg[key] = (n + 1, t + us)
for key, (n, t) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:16]:
    print(f"NCU {n:4d} x {t / n:8.1f} us = {t:8.1f} us  {key}")
tr = [(i, us) for i, _, full, us in seq if "transpose" in full]
print("NCU transpose kernels (launch index, us):", tr)
EOF
else
  say "SKIP ncu"
fi
say "== cuda-gemm128 done $(date -u +%FT%TZ)"
exit 0
