#!/usr/bin/env bash
# Neural training on the GPU host (after scripts/gpu/build.sh built build-gpu/ with CUDA): the CUDA
# nn tests (CPU = GPU training bits), the neural-training verify workloads on the CPU and every GPU
# (hashes compared with the committed ones and with each other), and the MLP / CNN / LSTM step
# times against PyTorch (fp32, TF32 off). Summary in $OUT/nn.log; exit 0 always.
# Fashion-MNIST: /usr/share/datasets/fashion-mnist, or NN_DATA, or .nndata/ in the tree.
cd "$(dirname "$0")/../.."
OUT="${OUT:-.}"
LOG="$OUT/nn.log"
: > "$LOG"
DATA="${NN_DATA:-/usr/share/datasets/fashion-mnist}"
[ -f "$DATA/train-images-idx3-ubyte.gz" ] || DATA="$PWD/.nndata"
if [ -x build-gpu/tests/bitlearn_cuda_tests ]; then
  build-gpu/tests/bitlearn_cuda_tests --gtest_filter='Models/NnCuda*:TileMaxCuda*:Im2colCuda*' > "$OUT/nn_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure" "$OUT/nn_cuda_tests.txt" | head -20 >> "$LOG"
  [ $rc -eq 0 ] && echo "PASS nn cuda tests" >> "$LOG" || echo "FAIL nn cuda tests (rc=$rc)" >> "$LOG"
else
  echo "FAIL build-gpu/tests/bitlearn_cuda_tests missing" >> "$LOG"
fi
if [ -x build-gpu/tests/bitlearn_tests ]; then
  build-gpu/tests/bitlearn_tests --gtest_filter='AutogradGradcheck*:NnLayers*:NnGradcheck*:Models/TrainingIdentity*:TrainingLoop*:NnOptim*:NnSchedule*:NnInit*:NnData*:NnCheckpoint*:Models/CheckpointResume*:LstmSequence*:TileMaxConformance*:Im2colConformance*' > "$OUT/nn_cpu_tests.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && echo "PASS nn cpu tests (16 cores)" >> "$LOG" || { echo "FAIL nn cpu tests (rc=$rc)" >> "$LOG"; grep -E "FAILED|Failure" "$OUT/nn_cpu_tests.txt" | head -10 >> "$LOG"; }
fi
if [ -x build-gpu/bitlearn ] && [ -f "$DATA/train-images-idx3-ubyte.gz" ]; then
  for t in 1 16; do
    timeout 900 build-gpu/bitlearn verify --neural-training --device all --threads $t --data "$DATA" > "$OUT/nn_verify_t$t.txt" 2>&1
    rc=$?
    cat "$OUT/nn_verify_t$t.txt" >> "$LOG"
    [ $rc -eq 0 ] && echo "PASS verify --neural-training --device all --threads $t" >> "$LOG" || echo "FAIL verify --neural-training --threads $t (rc=$rc)" >> "$LOG"
  done
  if python3 -c "import torch" 2>/dev/null; then
    timeout 900 python3 bench/nn_vs_torch.py --bitlearn build-gpu/bitlearn --device cuda --data "$DATA" >> "$LOG" 2>&1 || echo "FAIL bench cuda rc=$?" >> "$LOG"
    timeout 900 python3 bench/nn_vs_torch.py --bitlearn build-gpu/bitlearn --device cpu --threads 16 --data "$DATA" >> "$LOG" 2>&1 || echo "FAIL bench cpu rc=$?" >> "$LOG"
  else
    echo "SKIP bench: torch not installed" >> "$LOG"
  fi
else
  echo "FAIL build-gpu/bitlearn or Fashion-MNIST ($DATA) missing" >> "$LOG"
fi
exit 0
