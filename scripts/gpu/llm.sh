#!/usr/bin/env bash
# Transformer inference on the GPU machine (repo root, after scripts/gpu/build.sh built build-gpu/
# with CUDA and benchmarks): the CUDA attention conformance and CPU = CUDA fixture-model tests, the
# llm.forward verify check on CPU and CUDA, and bench/llm_vs_torch.py on CUDA (fp32, TF32 off) and
# on the CPU. Writes $OUT/llm.log with PASS/FAIL per item; always exits 0.
set -u
OUT="${OUT:-/tmp/gpu_llm}"; mkdir -p "$OUT"
LOG="$OUT/llm.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
say "== llm $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
if [ ! -x build-gpu/tests/bitlearn_cuda_tests ]; then
  bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON >>"$LOG" 2>&1 || say "FAIL build"
fi
timeout 300 build-gpu/tests/bitlearn_cuda_tests --gtest_filter='AttentionCuda.*:SkinnyMatmulCuda.*:Fixtures/HfModelCuda.*' >"$OUT/llm_cuda_tests.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$OUT/llm_cuda_tests.txt" | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS llm cuda tests (attention conformance, fixture models CPU = CUDA)" || say "FAIL llm cuda tests rc=$rc"
timeout 300 build-gpu/tests/bitlearn_tests --gtest_filter='AttentionConformance.*:SkinnyMatmulConformance.*:Fixtures/HfModel.*:HfModelErrors.*:Safetensors.*:Sampling.*' >"$OUT/llm_cpu_tests.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED|max \|ours" "$OUT/llm_cpu_tests.txt" | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS llm cpu tests on the GPU host" || say "FAIL llm cpu tests rc=$rc"
timeout 120 build-gpu/bitlearn verify --device all >"$OUT/llm_verify.txt" 2>&1
grep -E "llm\.|digest" "$OUT/llm_verify.txt" | tee -a "$LOG"
grep -E "llm\.forward.*IDENTICAL" "$OUT/llm_verify.txt" >/dev/null && say "PASS verify llm.forward CPU = CUDA" || say "FAIL verify llm.forward"
B=build-gpu/bench/bench_llm
if [ -x $B ] && python3 -c "import torch, safetensors" 2>/dev/null; then
  timeout 400 python3 bench/llm_vs_torch.py --bench $B --device cuda >"$OUT/llm_bench_cuda.md" 2>&1 && say "PASS bench cuda" || say "FAIL bench cuda"
  cat "$OUT/llm_bench_cuda.md" >>"$LOG"
  timeout 400 python3 bench/llm_vs_torch.py --bench $B --device cpu --threads 16 >"$OUT/llm_bench_cpu.md" 2>&1 && say "PASS bench cpu" || say "FAIL bench cpu"
  cat "$OUT/llm_bench_cpu.md" >>"$LOG"
else
  say "FAIL bench: $B missing or torch/safetensors not importable"
fi
say "== llm done $(date -u +%FT%TZ)"
exit 0
