#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang, CUDA off) in its
# own build folder (build-asan/ by default, or $1). The folder is configured with BITLEARN_FUZZ=ON,
# so scripts/fuzz.sh can build its targets there without compiling the library a second time, and
# with BITLEARN_SANITIZE_SUBSET=ON: the estimator families' own test files (tests/ml_*/) are left
# out but for the registry's checks of every estimator and the files with conformance or sabotage
# tests (tests/CMakeLists.txt); the normal build runs them all.
# Not run: the labels `exhaustive` (hours), the sampled MPFR accuracy check (minutes of oracle
# arithmetic per function, slowed ~3x by the sanitizers) and the ISA-object check, which inspects
# the symbols of the optimised objects and cannot hold for instrumented ones (sanitizer and coverage
# code is shared by every object), the hostile-input sweep (3,638 runs of the program, each
# paying the sanitizers' start-up; it runs in the test command's normal build) and, for the same
# reason, the registry's cross-ISA check (about 1,900 runs of the program), and the two k-NN
# prefilter sweeps (memcmp over many shapes: 220 s under the sanitizers, the same code as the
# shorter DBSCAN neighbor tests that do run here).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
jobs=${BITLEARN_JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
  -DBITLEARN_CUDA=OFF -DBITLEARN_BENCH=OFF -DBITLEARN_FUZZ=ON -DBITLEARN_SANITIZE_SUBSET=ON "${@:2}"
cmake --build "$build" -j"$jobs" --target bitlearn_tests bitlearn_cli bitlearn_math_check
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/scripts/sanitize-ubsan.supp}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/sanitize-lsan.supp:print_suppressions=0}
ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE exhaustive \
  -E '^(isa_objects_keep_code_private|math_accuracy_sampled|hostile_sweep|registry_isa_threads|registry_isa_threads_sabotage|DbscanNeighbors\.PrefilterEqualsAllPairs(OverShapes|AcrossTiles))$'
