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
cmake --build "$B" --target bitlearn_cli bitlearn_tests -j"$(nproc)"
echo "aarch64 build: $(( $(date +%s) - start )) s"

# Conformance subset (every op family's identity tests, the contract's known answers) on the
# emulated CPU. The NEON variant runs by default (GEMM tile, skinny GEMM, reduction leaves; the
# rest is portable C++); MatmulConformance.EveryIsaVariantMatchesReference also forces `scalar`.
filter='*Conformance*:*Sabotage*:Philox*:Rng*:Sha256*:TensorDigest*:Contraction*:MathExpLog.*:MathTrigErfPow.*'
qemu-aarch64 "$B/tests/bitlearn_tests" --gtest_filter="$filter" --gtest_brief=1
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
