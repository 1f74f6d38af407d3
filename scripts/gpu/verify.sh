#!/usr/bin/env bash
# On the GPU machine, after the lead has built build-gpu (CUDA on): runs the verifier on every
# device, compares the devices with each other, writes $OUT/verify-gpu.json and a short summary
# to $OUT/verify.log. Always exits 0; failures are printed as FAIL lines.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp}"
LOG="$OUT/verify.log"
BIN="${BITLEARN_BIN:-build-gpu/bitlearn}"  # override only to try the script elsewhere
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

if [ ! -x "$BIN" ]; then
  say "FAIL verify: $BIN not found (build build-gpu first)"
  exit 0
fi

run_verify() {  # $1 = label, rest = arguments
  local label="$1"; shift
  local full="$OUT/verify-$label.out"
  "$BIN" verify "$@" > "$full" 2>&1
  local rc=$?
  case $rc in
    0) say "PASS verify $label: all IDENTICAL (rc 0)";;
    1) say "FAIL verify $label: DIVERGENT (rc 1)";;
    3) say "FAIL verify $label: incomplete, some SKIPPED (rc 3)";;
    *) say "FAIL verify $label: error (rc $rc)";;
  esac
  grep -E "DIVERGENT|SKIPPED" "$full" | head -40 | sed 's/^/  /' | tee -a "$LOG"
  grep -E "^(bitlearn |time:|digest)" "$full" | sed 's/^/  /' | tee -a "$LOG"
}

run_verify gpu --device all --threads 16 --json "$OUT/verify-gpu.json"
run_verify gpu-quick --device all --quick --threads 16
run_verify cpu-threads3 --device cpu --threads 3
# The CPU report alone, so `bitlearn compare` can be run against a report from another machine.
"$BIN" verify --device cpu --threads 16 --json "$OUT/verify-cpu.json" > /dev/null 2>&1
"$BIN" compare "$OUT/verify-gpu.json" "$OUT/verify-cpu.json" > "$OUT/verify-compare.out" 2>&1
rc=$?
say "compare gpu-report vs cpu-report: rc $rc: $(grep -E '^(IDENTICAL|first difference)' "$OUT/verify-compare.out" | head -1)"
TESTS="$(dirname "$BIN")/tests/bitlearn_tests"
if [ -x "$TESTS" ]; then
  "$TESTS" --gtest_filter='Verify*' > "$OUT/verify-tests.out" 2>&1
  rc=$?
  [ $rc -eq 0 ] || say "FAIL verify unit tests on the GPU host (rc $rc)"
  say "verify unit tests on the GPU host: rc $rc $(grep -E '^\[  (PASSED|FAILED)' "$OUT/verify-tests.out" | head -3 | tr '\n' ' ')"
fi
exit 0
