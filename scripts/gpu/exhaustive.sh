#!/usr/bin/env bash
# Exhaustive accuracy (all 2^32 inputs) of the named math functions on this host's CPU cores,
# with a CPU-only build (no CUDA needed). Usage: scripts/gpu/exhaustive.sh FN [FN ...]
# Writes $OUT/exhaustive_<fn>.txt per function and a one-line summary per function to stdout.
set -u
OUT="${OUT:-/tmp/exhaustive_out}"
mkdir -p "$OUT"
B=build-exh
extra=()
if [ -f .gpudeps/include/mpfr.h ]; then
  lib=/usr/lib/x86_64-linux-gnu
  extra+=(-DBL_MPFR_INCLUDE_DIR="$PWD/.gpudeps/include" -DBL_MPFR_LIBRARY="$(ls $lib/libmpfr.so* | head -1)"
          -DBL_GMP_LIBRARY="$(ls $lib/libgmp.so* | head -1)")
fi
if [ ! -x $B/tools/math_check/bitlearn_math_check ]; then
  cmake -S . -B $B -G Ninja -DBITLEARN_CUDA=OFF -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >"$OUT/cfg.log" 2>&1 || { tail -20 "$OUT/cfg.log"; exit 1; }
  cmake --build $B -j"$(nproc)" --target bitlearn_math_check >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head; exit 1; }
fi
for fn in "$@"; do
  start=$(date +%s)
  $B/tools/math_check/bitlearn_math_check --fn "$fn" --exhaustive --threads "$(nproc)" >"$OUT/exhaustive_$fn.txt" 2>&1
  rc=$?
  echo "$fn rc=$rc $(( $(date +%s) - start ))s: $(grep -E "^$fn +(OK|FAIL)" "$OUT/exhaustive_$fn.txt" | sed -E 's/  +/ /g')"
done
