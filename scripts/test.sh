#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs the test suite (without the long
# `exhaustive` label; run `ctest --test-dir build -L exhaustive` for those).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -LE exhaustive -j"$(nproc)"
# Python: pytest against the module in build/python, then `pip install .` reusing build/ (links the
# module at most) and the installed package's quick verify.
if [ "${BITLEARN_PYTHON:-1}" != 0 ]; then
  grep -q '^BITLEARN_PYTHON:BOOL=ON' build/CMakeCache.txt ||
    { echo "test.sh: the Python module was not configured (build/venv lacks nanobind?); BITLEARN_PYTHON=0 skips it" >&2; exit 1; }
  PYTHONPATH=build/python build/venv/bin/python -m pytest -q -p no:cacheprovider python/tests
  bash scripts/pip-install-check.sh
fi
bash scripts/portability.sh
# AMD GPUs: every CUDA source of the library must compile with Debian's hipcc (compile only).
bash scripts/hip-compile.sh --offload-arch=gfx90a
# AArch64: cross-compiled, run under qemu-aarch64; its quick digest must equal the x86-64 one.
bash scripts/aarch64.sh build/bitlearn
# AddressSanitizer + UndefinedBehaviorSanitizer: the CPU test suite in build-asan/ (clang, CUDA off),
# then every libFuzzer target for a bounded time, built in the same folder (docs/hostile-input.md).
bash scripts/sanitize.sh build-asan
bash scripts/fuzz.sh build-asan
