#!/usr/bin/env bash
# The language-model training checks on a GPU machine, after `scripts/gpu-check.sh --only build`:
#   cuda     the CUDA identity tests of the trainer (bitlearn_cuda_tests *LmCuda*)
#   evidence bitlearn verify --lm-training (all four routes, 200 steps)
#   torch    scripts/lm_torch_check.py: gradients against PyTorch fp32 and float64, a 300-step loss
#            curve against PyTorch's
#   bench    bench/lm_train_bench.py: tokens/s and peak memory side by side with PyTorch
#   seed     the seed-shaped model (llama-162m, vocab 50257, B=4, T=2048) for 300 steps on CUDA,
#            parameters hashed every 5 steps, then its first 5 steps replayed on the CPU (all cores):
#            loss, grad-norm and lr bits and the hashes must be equal (scripts/lm_seed_compare.py)
#   profile  four steps of the 162m shape with BITLEARN_OP_PROFILE=1: time per op (profile.log)
# Usage: OUT=DIR bash scripts/gpu-lm-check.sh [STEP...] (default: cuda evidence torch). Logs go
# to $OUT; the fortunes corpus is read from .gpudeps/fortunes when present (no package manager there).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-lm-check}
B=${B:-build-gpu}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(cuda evidence torch)
corpus=()
[ -d .gpudeps/fortunes ] && corpus=(--lm-corpus .gpudeps/fortunes)
status=0
for s in "${steps[@]}"; do
  t0=$(date +%s)
  case "$s" in
    cuda) "$B/tests/bitlearn_cuda_tests" --gtest_filter='*LmCuda*' >"$OUT/cuda.log" 2>&1 ;;
    evidence) "$B/bitlearn" verify --lm-training "${corpus[@]}" --lm-dir /tmp/lm-evidence \
                --json "$OUT/lm-evidence.json" >"$OUT/evidence.log" 2>&1 ;;
    torch) python3 scripts/lm_torch_check.py --driver "$B/bench/lm_train_driver" --work /tmp/lm-torch \
             >"$OUT/torch.log" 2>&1; rc=$?; cp /tmp/lm-torch/torch_check.json "$OUT/" 2>/dev/null; (exit $rc) ;;
    bench) python3 bench/lm_train_bench.py --driver "$B/bench/lm_train_driver" --work /tmp/lm-bench \
             --out "$OUT/lm_train_bench.json" >"$OUT/bench.log" 2>&1 ;;
    seed) seed_args=(model=llama-162m vocab=50257 synthetic_vocab=50257 batch=4 seq_len=2048 steps=300 lr=3e-4
                     warmup=20 weight_decay=0.1 clip=1.0 hash_every=5 val_fraction=0 work=/tmp/lm-seed)
          timeout 300 "$B/bench/lm_train_driver" "${seed_args[@]}" device=cuda report="$OUT/seed_cuda.json" \
            >"$OUT/seed.log" 2>&1 &&
          timeout 240 "$B/bench/lm_train_driver" "${seed_args[@]}" device=cpu stop_at=5 checkpoint=/tmp/lm-seed/cpu.ckpt \
            report="$OUT/seed_cpu.json" \
            >>"$OUT/seed.log" 2>&1 &&
          python3 scripts/lm_seed_compare.py "$OUT/seed_cuda.json" "$OUT/seed_cpu.json" >>"$OUT/seed.log" 2>&1 ;;
    profile) BITLEARN_OP_PROFILE=1 "$B/bench/lm_train_driver" model=llama-162m vocab=50257 work=/tmp/lm-profile \
               synthetic_vocab=50257 batch=4 seq_len=2048 steps=4 device=cuda lr=3e-4 warmup=0 hash_every=0 \
               val_fraction=0 >"$OUT/profile.log" 2>&1 ;;
    *) echo "unknown step $s"; exit 2 ;;
  esac
  rc=$?
  [ $rc -ne 0 ] && status=1
  echo "$s: rc $rc, $(( $(date +%s) - t0 )) s"
done
exit $status
