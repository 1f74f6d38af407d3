#!/usr/bin/env bash
# The tokenizer on the GPU host (it has no CUDA part; this checks another CPU, Ubuntu's PCRE2 and
# that host's tokenizers package): the tokenizer tests from build-gpu, the larger comparison with
# tokenizers (scripts/golden/tokenizer.py --evidence) and the encode benchmark against tokenizers.
# Writes a summary to $OUT/tokenizer.log; always exits 0.
cd "$(dirname "$0")/../.."
OUT="${OUT:-.}"
LOG="$OUT/tokenizer.log"
: > "$LOG"
if [ -x build-gpu/tests/bitlearn_tests ]; then
  build-gpu/tests/bitlearn_tests --gtest_filter='Tokenizer*' > "$OUT/tokenizer_tests.txt" 2>&1
  rc=$?
  grep -E "^class |Failure|FAILED" "$OUT/tokenizer_tests.txt" | head -20 >> "$LOG"
  [ $rc -eq 0 ] && echo "PASS tokenizer tests ($(grep -c '^\[       OK' "$OUT/tokenizer_tests.txt") tests)" >> "$LOG" \
                || echo "FAIL tokenizer tests (rc=$rc)" >> "$LOG"
else
  echo "FAIL build-gpu/tests/bitlearn_tests missing" >> "$LOG"
fi
if python3 -c "import tokenizers" 2>/dev/null && [ -x build-gpu/bitlearn ]; then
  python3 -c "import tokenizers; print('tokenizers', tokenizers.__version__)" >> "$LOG"
  timeout 300 python3 scripts/golden/tokenizer.py --evidence build-gpu/bitlearn --count 20000 >> "$LOG" 2>&1 \
    || echo "FAIL evidence comparison (rc=$?)" >> "$LOG"
  if [ -x build-gpu/bench/bench_tokenizer ]; then
    timeout 300 python3 scripts/bench_tokenizer.py --build build-gpu >> "$LOG" 2>&1 || echo "FAIL bench_tokenizer (rc=$?)" >> "$LOG"
    timeout 300 python3 scripts/bench_tokenizer.py --build build-gpu --tokenizer tests/data/text/trained_tokenizers.json >> "$LOG" 2>&1 \
      || echo "FAIL bench_tokenizer trained (rc=$?)" >> "$LOG"
  else
    echo "FAIL build-gpu/bench/bench_tokenizer missing" >> "$LOG"
  fi
else
  echo "SKIP evidence and benchmark: python tokenizers or build-gpu/bitlearn missing" >> "$LOG"
fi
exit 0
