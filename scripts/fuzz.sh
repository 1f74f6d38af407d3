#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ for a bounded time (BITLEARN_FUZZ_SECONDS each, default 6:
# about 1 minute for the ten). Usage: scripts/fuzz.sh [build folder] (default build-fuzz/).
# A folder not yet configured with BITLEARN_FUZZ=ON is configured for the library and the fuzzers
# only (clang, CUDA off, ASan + UBSan); scripts/sanitize.sh's build-asan/ already is, so the two can
# share it. Seeds: fuzz/corpus/<target>/ (read only); what the fuzzer adds goes to
# <build>/fuzz-corpus/<target>/ and a crashing input to <build>/fuzz-artifacts/<target>/.
# `scripts/fuzz.sh --seeds [build folder]` rewrites the generated seeds of fuzz/corpus/ instead.
# The mutations follow a fixed seed (BITLEARN_FUZZ_SEED, default 1), so the test run tries the same
# inputs in the same order each time and a clean run stays clean; BITLEARN_FUZZ_SEED=0 draws a new
# seed per run, for longer exploratory runs (BITLEARN_FUZZ_SECONDS=600).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=0
if [ "${1:-}" = "--seeds" ]; then seeds=1; shift; fi
build=${1:-build-fuzz}
seconds=${BITLEARN_FUZZ_SECONDS:-6}
seed=${BITLEARN_FUZZ_SEED:-1}
jobs=${BITLEARN_JOBS:-$(nproc)}
if ! grep -qs '^BITLEARN_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DBITLEARN_CUDA=OFF -DBITLEARN_BENCH=OFF -DBITLEARN_TESTS=OFF -DBITLEARN_FUZZ=ON
fi
if [ "$seeds" = 1 ]; then
  cmake --build "$build" -j"$jobs" --target bitlearn_fuzz_corpus
  "$build/fuzz/bitlearn_fuzz_corpus" fuzz/corpus
  exit 0
fi
cmake --build "$build" -j"$jobs" --target bitlearn_fuzzers
# Every sanitizer report is a finding (float-cast-overflow is compiled recoverable: halt on it too).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
targets=(safetensors shard_index config tokenizer csv model_json xgboost_json idx checkpoint verify_report)
failed=()
for t in "${targets[@]}"; do
  work="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  mkdir -p "$work" "$artifacts"
  echo "== fuzz_$t (${seconds} s)"
  # -rss_limit_mb / -malloc_limit_mb: an input that makes a reader allocate more than 2 GiB is a
  # finding (a size read from the file that was not checked against the file first).
  if ! "$build/fuzz/fuzz_$t" -seed="$seed" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
       -timeout=20 -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "fuzz/corpus/$t" \
       >"$build/fuzz-artifacts/$t.log" 2>&1; then
    failed+=("$t")
    tail -n 60 "$build/fuzz-artifacts/$t.log"
  else
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$build/fuzz-artifacts/$t.log" | tr '\n' ' '
    echo
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAIL: fuzz targets with findings: ${failed[*]} (inputs in $build/fuzz-artifacts/)" >&2
  exit 1
fi
echo "PASS: ${#targets[@]} fuzz targets, ${seconds} s each (seed $seed), no finding"
