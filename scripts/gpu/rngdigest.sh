#!/usr/bin/env bash
# Philox RNG on the GPU (bitwise equal to the CPU under every launch shape), `bitlearn doctor` with
# a CUDA device, and the CPU RNG/digest/FP-state tests. Run from the repo root after build-gpu is
# built. Writes a short summary to $OUT/rngdigest.log; exits 0 even on failure (FAIL lines say so).
OUT="${OUT:-.}"
LOG="$OUT/rngdigest.log"
B="${BUILD_DIR:-build-gpu}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "== rngdigest: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

if [ -x "$B/tests/bitlearn_cuda_tests" ]; then
  "$B/tests/bitlearn_cuda_tests" --gtest_filter='RngCuda.*' > "$OUT/rngdigest_cuda_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$OUT/rngdigest_cuda_tests.txt" | tee -a "$LOG"
  grep -E "Failure|first difference|no CUDA device" "$OUT/rngdigest_cuda_tests.txt" | head -20 | tee -a "$LOG"
  if grep -q "SKIPPED" "$OUT/rngdigest_cuda_tests.txt"; then say "FAIL cuda rng tests skipped (no device seen)";
  elif [ $rc -eq 0 ]; then say "PASS cuda rng bitwise equal to cpu (1M words/uniforms/normals, 4 launch shapes)";
  else say "FAIL cuda rng (rc=$rc)"; fi
else
  say "FAIL missing $B/tests/bitlearn_cuda_tests"
fi

if [ -x "$B/tests/bitlearn_tests" ]; then
  "$B/tests/bitlearn_tests" --gtest_filter='Philox*:Rng*:Sha256*:TensorDigest*:CpuFeatures*:FpState*:DeviceInfo*' \
    > "$OUT/rngdigest_cpu_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED) " "$OUT/rngdigest_cpu_tests.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS cpu rng/digest/fp-state tests" || say "FAIL cpu rng/digest/fp-state tests (rc=$rc)"
else
  say "FAIL missing $B/tests/bitlearn_tests"
fi

if [ -x "$B/bitlearn" ]; then
  "$B/bitlearn" doctor > "$OUT/rngdigest_doctor.txt" 2>&1
  rc=$?
  grep -E "^  (device|status|runtime|driver)|WARNING|^  (OK|FAIL|SKIP) |^result" "$OUT/rngdigest_doctor.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS doctor (exit 0)" || say "FAIL doctor (exit $rc)"
  "$B/bitlearn" doctor --json > "$OUT/rngdigest_doctor.json" 2>&1
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$OUT/rngdigest_doctor.json" 2>/dev/null \
    && say "PASS doctor --json parses" || say "FAIL doctor --json does not parse"
else
  say "FAIL missing $B/bitlearn"
fi
exit 0
