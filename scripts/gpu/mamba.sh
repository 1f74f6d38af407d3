#!/usr/bin/env bash
# Mamba / Mamba-2 on the GPU machine (repo root, after scripts/gpu/build.sh built build-gpu/ with CUDA
# and benchmarks):
#   1. the CUDA selective scan against the reference under every conformance launch shape, and its
#      sabotage arm (SelectiveScanCuda.*)
#   2. the mamba and mamba2 fixtures give the same logits on CUDA as on the CPU: prefill, padded
#      batch, recurrent-state decode steps, sampled generation (Fixtures/HfModelCuda.*/6 and /7)
#   3. the CPU tests of the area on the host cores (scan conformance, fixture tests, Mamba tests)
#   4. the llm.mamba verify check, CPU = CUDA (--device all)
#   5. bench/mamba_vs_torch.py --big on CUDA and on the CPU (16 threads): the fixtures and random
#      mamba-130m / mamba2-130m shapes; MAMBA_BENCH=0 skips it
# Writes $OUT/mamba.log (PASS/FAIL per item) and the full outputs beside it. Always exits 0.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/gpu_mamba}"; mkdir -p "$OUT"
LOG="$OUT/mamba.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
B=build-gpu
say "== mamba $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
if [ ! -x $B/tests/bitlearn_cuda_tests ]; then
  bash scripts/gpu/build.sh -DBITLEARN_BENCH=ON >>"$OUT/mamba-build.txt" 2>&1 || say "FAIL build (see mamba-build.txt)"
fi
if [ -x $B/tests/bitlearn_cuda_tests ]; then
  timeout 300 $B/tests/bitlearn_cuda_tests --gtest_filter='SelectiveScanCuda.*' >"$OUT/mamba-scan-cuda.txt" 2>&1; rc=$?
  grep -E "OK \]|FAILED|SKIPPED|first difference" "$OUT/mamba-scan-cuda.txt" | head -20 | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS SelectiveScanCuda (CUDA scan = reference under every launch shape; sabotage caught)" || say "FAIL SelectiveScanCuda rc=$rc"
  timeout 300 $B/tests/bitlearn_cuda_tests --gtest_filter='Fixtures/HfModelCuda.*/6:Fixtures/HfModelCuda.*/7' >"$OUT/mamba-model-cuda.txt" 2>&1; rc=$?
  grep -E "OK \]|FAILED|SKIPPED|Failure|digest" "$OUT/mamba-model-cuda.txt" | head -20 | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS HfModelCuda mamba, mamba2 (CPU = CUDA logits, decode, batch, generation)" || say "FAIL HfModelCuda mamba/mamba2 rc=$rc"
else
  say "FAIL $B/tests/bitlearn_cuda_tests missing"
fi
if [ -x $B/tests/bitlearn_tests ]; then
  timeout 300 $B/tests/bitlearn_tests --gtest_filter='SelectiveScanConformance.*:Fixtures/HfModel.*/6:Fixtures/HfModel.*/7:Fixtures/MambaModel.*:MambaConfig.*:MambaWeights.*' >"$OUT/mamba-cpu.txt" 2>&1; rc=$?
  grep -E "^\[  (PASSED|FAILED)|max \|ours" "$OUT/mamba-cpu.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS mamba CPU tests on the GPU host" || say "FAIL mamba CPU tests rc=$rc"
fi
if [ -x $B/bitlearn ]; then
  timeout 200 $B/bitlearn verify --device all >"$OUT/mamba-verify.txt" 2>&1
  grep -E "llm\.mamba|digest" "$OUT/mamba-verify.txt" | tee -a "$LOG"
  if grep -E "llm\.mamba" "$OUT/mamba-verify.txt" | grep -qvE "IDENTICAL" || ! grep -q "llm\.mamba" "$OUT/mamba-verify.txt"; then
    say "FAIL verify llm.mamba"
  else
    say "PASS verify llm.mamba (CPU and CUDA)"
  fi
fi
if [ "${MAMBA_BENCH:-1}" = 0 ]; then say "bench skipped (MAMBA_BENCH=0)"; exit 0; fi
BENCH=$B/bench/bench_llm
if [ -x $BENCH ] && python3 -c "import torch, safetensors" 2>/dev/null; then
  timeout 600 python3 bench/mamba_vs_torch.py --bench $BENCH --device cuda --big >"$OUT/mamba-bench-cuda.md" 2>&1 && say "PASS bench cuda" || say "FAIL bench cuda"
  cat "$OUT/mamba-bench-cuda.md" >>"$LOG"
  timeout 600 python3 bench/mamba_vs_torch.py --bench $BENCH --device cpu --threads 16 --big >"$OUT/mamba-bench-cpu.md" 2>&1 && say "PASS bench cpu" || say "FAIL bench cpu"
  cat "$OUT/mamba-bench-cpu.md" >>"$LOG"
else
  say "FAIL bench: $BENCH missing or torch/safetensors not importable"
fi
say "== mamba done $(date -u +%FT%TZ)"
exit 0
