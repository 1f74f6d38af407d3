#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs the test suite (without the long
# `exhaustive` label; run `ctest --test-dir build -L exhaustive` for those).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -LE exhaustive -j"$(nproc)"
bash scripts/portability.sh
# AMD GPUs: every CUDA source of the library must compile with Debian's hipcc (compile only).
bash scripts/hip-compile.sh --offload-arch=gfx90a
# AArch64: cross-compiled, run under qemu-aarch64; its quick digest must equal the x86-64 one.
bash scripts/aarch64.sh build/bitlearn
# AddressSanitizer + UndefinedBehaviorSanitizer: the CPU test suite in build-asan/ (clang, CUDA off),
# then every libFuzzer target for a bounded time, built in the same folder (docs/hostile-input.md).
bash scripts/sanitize.sh build-asan
bash scripts/fuzz.sh build-asan
