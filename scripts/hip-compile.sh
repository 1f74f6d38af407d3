#!/usr/bin/env bash
# Compiles every CUDA source of the library for an AMD GPU with Debian's hipcc (compile only: no
# AMD GPU is available). The CUDA runtime names reach HIP through src/hip/cuda_runtime.h.
# Usage: scripts/hip-compile.sh [--offload-arch=gfx90a]   (exit non-zero if any file fails)
set -u
cd "$(dirname "$0")/.."
ARCH="${1:---offload-arch=gfx90a}"
if ! command -v hipcc >/dev/null; then echo "hip-compile: hipcc not found (apt install hipcc)"; exit 1; fi
OUTDIR="${HIP_OUT:-/tmp/bitlearn-hip}"
mkdir -p "$OUTDIR"
# The contract flags for HIP: no contraction, no fast math, IEEE denormals, correctly rounded div/sqrt.
FLAGS=(-x hip "$ARCH" -std=c++17 -O2 -ffp-contract=off -fno-fast-math -fno-gpu-flush-denormals-to-zero
       -fhip-fp32-correctly-rounded-divide-sqrt -DBITLEARN_HAS_CUDA=1 -Isrc/hip -Iinclude -Isrc)
compile_one() {
  local f="$1" obj
  obj="$OUTDIR/$(echo "$f" | tr '/' '_').o"
  if hipcc "${FLAGS[@]}" -c "$f" -o "$obj" >"$obj.log" 2>&1; then
    echo "ok    $f"
  else
    echo "FAIL  $f"; grep -m8 -E "error" "$obj.log" | sed 's/^/      /'
    return 1
  fi
}
export -f compile_one; export OUTDIR; export FLAGS_STR="${FLAGS[*]}"
files=$(find src -name '*.cu' | sort)
n=$(echo "$files" | wc -l)
# Each file in its own hipcc, as many at once as there are cores.
results=$(echo "$files" | xargs -P "$(nproc)" -I{} bash -c 'FLAGS=($FLAGS_STR); compile_one "$@"' _ {})
echo "$results" | sort -k2
fail=$(echo "$results" | grep -c '^FAIL' || true)
echo "hip-compile: $((n - fail)) of $n CUDA sources compiled for AMD ($ARCH)"
[ "$fail" -eq 0 ]
