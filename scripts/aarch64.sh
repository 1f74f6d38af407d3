#!/usr/bin/env bash
# AArch64 portability step: cross-compiles bitlearn with Debian's g++-aarch64-linux-gnu
# (cmake/toolchains/aarch64-linux-gnu.cmake, static programs), runs the quick verifier and a
# conformance subset under qemu-aarch64, and requires the AArch64 quick digest to equal the x86-64
# one. Needs the arm64 packages that scripts/install-deps.sh installs (BITLEARN_AARCH64=1).
# Usage: scripts/aarch64.sh [NATIVE_BIN]   (default build/bitlearn)
set -euo pipefail
cd "$(dirname "$0")/.."
NATIVE=${1:-build/bitlearn}
B=${BITLEARN_AARCH64_BUILD:-build-aarch64}
start=$(date +%s)
cmake -S . -B "$B" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DBITLEARN_CUDA=OFF -DBITLEARN_BENCH=OFF >/dev/null
# Only the program and the test files of the subset below (tests/CMakeLists.txt,
# bitlearn_portability_tests), not the whole test suite: the subset is all qemu runs.
cmake --build "$B" --target bitlearn_cli bitlearn_portability_tests -j"$(nproc)"
echo "aarch64 build: $(( $(date +%s) - start )) s"

# Conformance subset (every op family's identity tests, the contract's known answers) on the
# emulated CPU. The NEON variant runs by default (GEMM tile, skinny GEMM, reduction leaves; the
# rest is portable C++); MatmulConformance.EveryIsaVariantMatchesReference also forces `scalar`.
filter='*Conformance*:*Sabotage*:Philox*:Rng*:Sha256*:TensorDigest*:Contraction*:MathExpLog.*:MathTrigErfPow.*'
# The subset program must hold every test the filter selects in the whole suite (a test added to
# a file the subset does not take would otherwise be skipped here without a word): compared on
# the native build, where the subset program is one more link of objects already compiled.
native_build=$(dirname "$NATIVE")
if [ -f "$native_build/build.ninja" ]; then
  cmake --build "$native_build" --target bitlearn_tests bitlearn_portability_tests >/dev/null
  want=$("$native_build/tests/bitlearn_tests" --gtest_filter="$filter" --gtest_list_tests | sed 's/ *#.*//')
  have=$("$native_build/tests/bitlearn_portability_tests" --gtest_filter="$filter" --gtest_list_tests | sed 's/ *#.*//')
  if [ "$want" != "$have" ]; then
    echo "FAIL: bitlearn_portability_tests lacks tests of the filter (tests/CMakeLists.txt picks its files):"
    diff <(echo "$want") <(echo "$have") | head -40
    exit 1
  fi
  echo "portability subset: $(echo "$have" | grep -c '^  ') tests, the filter's whole selection in bitlearn_tests"
fi
qemu-aarch64 "$B/tests/bitlearn_portability_tests" --gtest_filter="$filter" --gtest_brief=1
echo "aarch64 conformance subset: PASS ($(( $(date +%s) - start )) s so far)"

# Captured, then printed: `tee /dev/stderr` would reopen (and truncate) a log file stderr points to.
arm_report=$(qemu-aarch64 "$B/bitlearn" verify --quick --threads 2)
echo "$arm_report"
arm=$(echo "$arm_report" | awk '/^digest:/ {print $2}')
x86=$("$NATIVE" verify --quick --threads 2 | awk '/^digest:/ {print $2}')
echo "quick digest: aarch64 (qemu) $arm"
echo "quick digest: x86-64 (native) $x86"
[ -n "$arm" ] && [ "$arm" = "$x86" ] || { echo "FAIL: the AArch64 digest differs from the x86-64 digest"; exit 1; }
echo "PASS: AArch64 gives the x86-64 quick digest ($(( $(date +%s) - start )) s)"
