#!/usr/bin/env bash
# The fused LSTM cell on the GPU host (after scripts/gpu/build.sh built build-gpu/ with CUDA): the
# CUDA conformance of the cell kernels (LstmCellCuda) and the CPU = GPU training tests (NnCuda), the
# CPU conformance and LSTM node tests, the neural-training workloads on the GPU (hashes compared with
# the committed ones) and the MLP / CNN / LSTM step times against PyTorch on CUDA (fp32, TF32 off).
# Summary in $OUT/lstm.log (PASS / FAIL per item); exit 0 always. Fashion-MNIST:
# /usr/share/datasets/fashion-mnist, or NN_DATA, or .nndata/ in the tree.
cd "$(dirname "$0")/../.."
OUT="${OUT:-.}"
LOG="$OUT/lstm.log"
: > "$LOG"
DATA="${NN_DATA:-/usr/share/datasets/fashion-mnist}"
[ -f "$DATA/train-images-idx3-ubyte.gz" ] || DATA="$PWD/.nndata"
echo "commit $(git rev-parse --short HEAD 2>/dev/null)  $(date -u +%FT%TZ)" >> "$LOG"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$LOG" 2>&1
if [ -x build-gpu/tests/bitlearn_cuda_tests ]; then
  timeout 300 build-gpu/tests/bitlearn_cuda_tests --gtest_filter='LstmCellCuda*:Models/NnCuda*' > "$OUT/lstm_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure" "$OUT/lstm_cuda_tests.txt" | head -30 >> "$LOG"
  [ $rc -eq 0 ] && echo "PASS lstm cuda tests (LstmCellCuda, NnCuda)" >> "$LOG" || echo "FAIL lstm cuda tests (rc=$rc)" >> "$LOG"
else
  echo "FAIL build-gpu/tests/bitlearn_cuda_tests missing" >> "$LOG"
fi
if [ -x build-gpu/tests/bitlearn_tests ]; then
  timeout 300 build-gpu/tests/bitlearn_tests --gtest_filter='LstmCellConformance*:LstmSequence*' > "$OUT/lstm_cpu_tests.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && echo "PASS lstm cpu tests (LstmCellConformance, LstmSequence)" >> "$LOG" ||
    { echo "FAIL lstm cpu tests (rc=$rc)" >> "$LOG"; grep -E "FAILED|Failure" "$OUT/lstm_cpu_tests.txt" | head -10 >> "$LOG"; }
else
  echo "FAIL build-gpu/tests/bitlearn_tests missing" >> "$LOG"
fi
if [ -x build-gpu/bitlearn ] && [ -f "$DATA/train-images-idx3-ubyte.gz" ]; then
  timeout 240 build-gpu/bitlearn verify --neural-training --device cuda --data "$DATA" > "$OUT/lstm_verify_cuda.txt" 2>&1
  rc=$?
  cat "$OUT/lstm_verify_cuda.txt" >> "$LOG"
  [ $rc -eq 0 ] && echo "PASS verify --neural-training --device cuda" >> "$LOG" || echo "FAIL verify --neural-training --device cuda (rc=$rc)" >> "$LOG"
  if python3 -c "import torch" 2>/dev/null; then
    timeout 400 python3 bench/nn_vs_torch.py --bitlearn build-gpu/bitlearn --device cuda --models lstm,cnn,mlp \
      --repeat 3 --data "$DATA" >> "$LOG" 2>&1 && echo "PASS bench cuda" >> "$LOG" || echo "FAIL bench cuda rc=$?" >> "$LOG"
  else
    echo "SKIP bench: torch not installed" >> "$LOG"
  fi
else
  echo "FAIL build-gpu/bitlearn or Fashion-MNIST ($DATA) missing" >> "$LOG"
fi
exit 0
