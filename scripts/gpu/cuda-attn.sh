#!/usr/bin/env bash
# CUDA attention on the GPU machine (repo root, after scripts/gpu/build.sh -DBITLEARN_BENCH=ON built
# build-gpu/): the attention conformance tests (warp rows and block rows against the reference), the
# CPU = CUDA fixture models, verify --device all, bench_llm gpt2-124m on CUDA with the warp-rows
# kernel and with BITLEARN_ATTENTION=block_rows (interleaved), PyTorch side by side, the ncu kernel
# time of both attention kernels in one 128-token prefill (warp rows also with 4 rows per block) and
# one detailed ncu profile of the warp-rows kernel. Writes $OUT/cuda-attn.log with PASS/FAIL per
# item; always exits 0.
set -u
OUT="${OUT:-/tmp/gpu_cuda_attn}"; mkdir -p "$OUT"
LOG="$OUT/cuda-attn.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
say "== cuda-attn $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
T=build-gpu/tests/bitlearn_cuda_tests
B=build-gpu/bench/bench_llm
if [ ! -x $T ]; then
  bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON >>"$LOG" 2>&1 || say "FAIL build"
fi

timeout 60 $T --gtest_filter='AttentionCuda.*' >"$OUT/attention_tests.txt" 2>&1; rc=$?
grep -E "^\[       OK|^\[  FAILED|^\[  PASSED|Failure|differ" "$OUT/attention_tests.txt" | head -20 | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS attention conformance (AttentionCuda.*)" || say "FAIL attention conformance rc=$rc"

timeout 45 $T --gtest_filter='Fixtures/HfModelCuda.*' >"$OUT/fixture_tests.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED" "$OUT/fixture_tests.txt" | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS fixture models CPU = CUDA (Fixtures/HfModelCuda.*)" || say "FAIL fixture models rc=$rc"

timeout 45 build-gpu/bitlearn verify --device all >"$OUT/verify.txt" 2>&1; rc=$?
grep -E "llm\." "$OUT/verify.txt" | tee -a "$LOG"
if grep -qE "DIVERGENT" "$OUT/verify.txt"; then say "FAIL verify --device all (rc=$rc): see verify.txt"
elif grep -qE "llm\.forward.*IDENTICAL" "$OUT/verify.txt"; then say "PASS verify --device all (rc=$rc)"
else say "FAIL verify --device all: no llm.forward IDENTICAL line (rc=$rc)"; fi

if [ -x $B ]; then
  # Interleaved: warp rows (default, 8 rows per block), block rows, twice each; then warp rows with
  # 4 and 2 rows per block once.
  for run in warp_rows:1 block_rows:1 warp_rows:2 block_rows:2 rows4:1 rows2:1; do
    kind=${run%:*}; rep=${run#*:}
    case $kind in
      block_rows) envs="BITLEARN_ATTENTION=block_rows" ;;
      rows4) envs="BITLEARN_ATTENTION_ROWS=4" ;;
      rows2) envs="BITLEARN_ATTENTION_ROWS=2" ;;
      *) envs="BITLEARN_ATTENTION=warp_rows" ;;
    esac
    env BL_LLM_DEVICE=cuda BL_LLM_ONLY=gpt2-124m $envs timeout 25 $B --benchmark_min_time=0.3s \
      >"$OUT/bench_${kind}_$rep.txt" 2>&1
    say "bench $kind rep $rep: $(grep -E '^(prefill|decode)/' "$OUT/bench_${kind}_$rep.txt" | awk '{printf "%s %s ms; ", $1, $2}')"
  done
  if python3 -c "import torch, safetensors" 2>/dev/null; then
    timeout 90 python3 bench/llm_vs_torch.py --bench $B --device cuda --only gpt2-124m >"$OUT/llm_vs_torch.md" 2>&1 \
      && say "PASS llm_vs_torch cuda gpt2-124m" || say "FAIL llm_vs_torch rc=$?"
    cat "$OUT/llm_vs_torch.md" >>"$LOG"
  else
    say "FAIL torch/safetensors not importable"
  fi
  if command -v ncu >/dev/null; then
    for kind in warp_rows block_rows rows4; do
      env BL_LLM_DEVICE=cuda BL_LLM_ONLY=gpt2-124m BL_LLM_DECODE=1 BITLEARN_ATTENTION=$kind BITLEARN_ATTENTION_ROWS=$([ $kind = rows4 ] && echo 4 || echo 0) timeout 30 \
        ncu --kernel-name regex:attention --launch-count 12 --metrics gpu__time_duration.sum --csv \
        $B --benchmark_filter=prefill --benchmark_min_time=1x >"$OUT/ncu_$kind.csv" 2>"$OUT/ncu_$kind.err"
      say "ncu $kind: $(python3 - "$OUT/ncu_$kind.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print("no rows"); sys.exit()
h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value"); ui = h.index("Metric Unit")
vals = [(r[ki][:40], float(r[vi].replace(",", "")), r[ui]) for r in rows[1:]]
tot = sum(v for _, v, _ in vals); unit = vals[0][2]
print(f"{len(vals)} launches, total {tot:.1f} {unit}, mean {tot/len(vals):.1f} {unit} ({vals[0][0]})")
EOF
)"
    done
    env BL_LLM_DEVICE=cuda BL_LLM_ONLY=gpt2-124m BL_LLM_DECODE=1 timeout 40 \
      ncu --kernel-name regex:warp_rows --launch-skip 11 --launch-count 1 --section SpeedOfLight \
      --section Occupancy --section WarpStateStats --section LaunchStats \
      $B --benchmark_filter=prefill --benchmark_min_time=1x >"$OUT/ncu_warp_rows_detail.txt" 2>&1
    grep -E "Duration|Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Stall|Theoretical Occ" \
      "$OUT/ncu_warp_rows_detail.txt" | head -16 | tee -a "$LOG"
  else
    say "ncu not found"
  fi
else
  say "FAIL $B missing"
fi
say "== cuda-attn done $(date -u +%FT%TZ)"
exit 0
