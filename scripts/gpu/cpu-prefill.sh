#!/usr/bin/env bash
# CPU transformer prefill on the GPU host's CPU (repo root, after scripts/gpu/build.sh built
# build-gpu/ with benchmarks): the weight-stationary GEMM and attention conformance tests and the
# fixture-model tests (automatic ISA and BITLEARN_ISA=avx2), the CPU verify digest at 1 and 16
# threads, then bench/llm_vs_torch.py on the CPU at 16, 4 and 1 threads (GPT-2 124M shape only for
# 4 and 1). Writes $OUT/cpu-prefill.log with PASS/FAIL per item; always exits 0.
set -u
OUT="${OUT:-/tmp/gpu_cpu_prefill}"; mkdir -p "$OUT"
LOG="$OUT/cpu-prefill.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
say "== cpu-prefill $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(lscpu | grep 'Model name' | head -1 | sed 's/  */ /g')"
if [ ! -x build-gpu/tests/bitlearn_tests ] || [ ! -x build-gpu/bench/bench_llm ]; then
  bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON >>"$LOG" 2>&1 || say "FAIL build"
fi
FILTER='MatmulPackedConformance.*:AttentionConformance.*:MatmulConformance.*:SkinnyMatmulConformance.*:Fixtures/HfModel.*:Fixtures/MambaModel.*'
for isa in auto avx2; do
  if [ $isa = auto ]; then env_isa=""; else env_isa="BITLEARN_ISA=$isa"; fi
  env $env_isa timeout 300 build-gpu/tests/bitlearn_tests --gtest_filter="$FILTER" >"$OUT/cpu_prefill_tests_$isa.txt" 2>&1; rc=$?
  grep -E "^\[  FAILED|^\[  PASSED" "$OUT/cpu_prefill_tests_$isa.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS cpu tests (isa $isa)" || say "FAIL cpu tests (isa $isa) rc=$rc"
done
for t in 1 16; do
  timeout 200 build-gpu/bitlearn verify --device cpu --threads $t >"$OUT/cpu_prefill_verify_$t.txt" 2>&1; rc=$?
  grep -E "digest" "$OUT/cpu_prefill_verify_$t.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS verify cpu threads $t" || say "FAIL verify cpu threads $t rc=$rc"
done
B=build-gpu/bench/bench_llm
if [ -x $B ] && python3 -c "import torch, safetensors" 2>/dev/null; then
  timeout 400 python3 bench/llm_vs_torch.py --bench $B --device cpu --threads 16 >"$OUT/cpu_prefill_bench16.md" 2>&1 && say "PASS bench cpu 16 threads" || say "FAIL bench cpu 16 threads"
  cat "$OUT/cpu_prefill_bench16.md" >>"$LOG"
  for t in 4 1; do
    timeout 200 python3 bench/llm_vs_torch.py --bench $B --device cpu --threads $t --only gpt2-124m >"$OUT/cpu_prefill_bench$t.md" 2>&1 && say "PASS bench cpu $t threads" || say "FAIL bench cpu $t threads"
    cat "$OUT/cpu_prefill_bench$t.md" >>"$LOG"
  done
else
  say "FAIL bench: $B missing or torch/safetensors not importable"
fi
say "== cpu-prefill done $(date -u +%FT%TZ)"
exit 0
