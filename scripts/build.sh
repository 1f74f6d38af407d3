#!/usr/bin/env bash
# Configures and builds bitlearn into build/ (CUDA code too when nvcc is found: compile only here),
# with the Python extension module when the build/venv of scripts/install-deps.sh is there.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
# The Python module joins the build when build/venv (scripts/install-deps.sh) can import nanobind;
# "$@" comes last, so -DBITLEARN_PYTHON=OFF still turns it off.
py=()
if [ -x build/venv/bin/python ] && build/venv/bin/python -c 'import nanobind' 2>/dev/null; then
  py=(-DBITLEARN_PYTHON=ON "-DPython_EXECUTABLE=$PWD/build/venv/bin/python")
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${py[@]}" "$@"
cmake --build build -j"$(nproc)"
