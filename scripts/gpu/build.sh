#!/usr/bin/env bash
# Builds bitlearn with CUDA on the GPU machine into build-gpu/ (16 cores). MPFR headers are not
# installed there; when a folder .gpudeps/include holding mpfr.h and gmp.h travels with the tree,
# the accuracy checker is built against the machine's runtime MPFR/GMP libraries.
set -u
extra=()
if [ -f .gpudeps/include/mpfr.h ]; then
  lib=/usr/lib/x86_64-linux-gnu
  extra+=(-DBL_MPFR_INCLUDE_DIR="$PWD/.gpudeps/include" -DBL_MPFR_LIBRARY="$(ls $lib/libmpfr.so* | head -1)"
          -DBL_GMP_LIBRARY="$(ls $lib/libgmp.so* | head -1)")
fi
cmake -S . -B build-gpu -G Ninja -DBITLEARN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release "${extra[@]}" "$@" >"${OUT:-/tmp}/cfg.log" 2>&1 || { echo "FAIL configure"; tail -20 "${OUT:-/tmp}/cfg.log"; exit 1; }
cmake --build build-gpu -j16 -- -k 0 >"${OUT:-/tmp}/build.log" 2>&1
rc=$?
grep -E "error|FAILED:" "${OUT:-/tmp}/build.log" | head -30
echo "build rc=$rc"
exit $rc
