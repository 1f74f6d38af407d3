#!/usr/bin/env bash
# CUDA caching allocator on the GPU machine (repo root, after scripts/gpu/build.sh -DBITLEARN_BENCH=ON
# built build-gpu/): the CudaAllocator tests with the cache on and with BITLEARN_CUDA_CACHE=0,
# `bitlearn verify --device all` with the cache on, bench_llm gpt2-124m and bench/nn_vs_torch.py on
# CUDA with the cache off ("before") and on ("after") in the same run, interleaved, and last the
# whole CUDA suite with the cache on (as far as the time allows). Summary with PASS/FAIL per item
# in $OUT/cuda-alloc.log, full outputs beside it. Keeps under ~170 s; always exits 0.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/gpu_cuda_alloc}"; mkdir -p "$OUT"
LOG="$OUT/cuda-alloc.log"; : >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
left() { local l=$((170 - SECONDS)); [ $l -lt 5 ] && l=5; [ $l -gt "$1" ] && l=$1; echo $l; }
T=build-gpu/tests/bitlearn_cuda_tests
CLI=build-gpu/bitlearn
B=build-gpu/bench/bench_llm
say "== cuda-alloc $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
[ -x $T ] || say "FAIL $T missing (build failed?)"

# 1. Allocator tests, cache on and off.
timeout 60 $T --gtest_filter='CudaAllocator.*' >"$OUT/alloc_tests_cache_on.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED|Failure" "$OUT/alloc_tests_cache_on.txt" | head -8 | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS CudaAllocator tests (cache on)" || say "FAIL CudaAllocator tests (cache on) rc=$rc"
BITLEARN_CUDA_CACHE=0 timeout 60 $T --gtest_filter='CudaAllocator.*' >"$OUT/alloc_tests_cache_off.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED|Failure" "$OUT/alloc_tests_cache_off.txt" | head -8 | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS CudaAllocator tests (BITLEARN_CUDA_CACHE=0)" || say "FAIL CudaAllocator tests (BITLEARN_CUDA_CACHE=0) rc=$rc"

# 2. verify on every device with the cache on.
timeout "$(left 50)" $CLI verify --device all >"$OUT/verify_all.txt" 2>&1; rc=$?
grep -E "digest|MISMATCH|DIFFER|FAIL" "$OUT/verify_all.txt" | head -8 | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS verify --device all (cache on)" || say "FAIL verify --device all rc=$rc"

# 3. gpt2-124m prefill / decode on CUDA: cache off (before) and on (after), interleaved.
if [ -x $B ]; then
  for r in 1 2; do
    for c in 0 1; do
      BITLEARN_CUDA_CACHE=$c BL_LLM_DEVICE=cuda BL_LLM_ONLY=gpt2-124m timeout "$(left 25)" $B \
        --benchmark_min_time=0.3s >"$OUT/llm_cache$c.r$r.txt" 2>&1 || say "FAIL bench_llm cache=$c r$r rc=$?"
      grep -E "gpt2" "$OUT/llm_cache$c.r$r.txt" | sed "s/^/cache=$c r$r  /" | tee -a "$LOG"
    done
  done
else
  say "FAIL $B missing (build with -DBITLEARN_BENCH=ON)"
fi

# 4. Training steps against PyTorch: the same binary with the cache off and on.
DATA="${NN_DATA:-/usr/share/datasets/fashion-mnist}"
[ -f "$DATA/train-images-idx3-ubyte.gz" ] || DATA="$PWD/.nndata"
if [ "$(left 60)" -gt 30 ] && [ -f "$DATA/train-images-idx3-ubyte.gz" ] && python3 -c "import torch" 2>/dev/null; then
  NOCACHE="$OUT/bitlearn_cache0.sh"
  printf '#!/bin/sh\nBITLEARN_CUDA_CACHE=0 exec %s "$@"\n' "$PWD/$CLI" >"$NOCACHE"; chmod +x "$NOCACHE"
  timeout "$(left 60)" python3 bench/nn_vs_torch.py --bitlearn "$NOCACHE,$CLI" --device cuda --steps 20 \
    --data "$DATA" >"$OUT/nn_bench_cuda.txt" 2>&1; rc=$?
  cat "$OUT/nn_bench_cuda.txt" >>"$LOG"
  [ $rc -eq 0 ] && say "PASS nn_vs_torch cuda (first binary: BITLEARN_CUDA_CACHE=0, second: cache on)" || say "FAIL nn_vs_torch cuda rc=$rc"
else
  say "SKIP nn_vs_torch: no time left, no Fashion-MNIST or no torch"
fi
# 5. The whole CUDA suite with the cache on (conformance: CPU = CUDA bit for bit).
timeout "$(left 170)" $T >"$OUT/cuda_tests_all.txt" 2>&1; rc=$?
grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$OUT/cuda_tests_all.txt" | head -12 | tee -a "$LOG"
[ $rc -eq 0 ] && say "PASS whole bitlearn_cuda_tests (cache on)" || say "FAIL whole bitlearn_cuda_tests rc=$rc (124 = cut by the time limit)"

say "== cuda-alloc done $(date -u +%FT%TZ) (${SECONDS}s)"
exit 0
