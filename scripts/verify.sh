#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs the verifier on the CPU, printing its digest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
if ./build/bitlearn verify --help >/dev/null 2>&1; then
  ./build/bitlearn verify --device cpu
else
  ./build/bitlearn doctor
fi
