#!/usr/bin/env bash
# The per-ISA objects (src/**/cpu/*_avx2.cpp, compiled with -mavx2 -mfma, and *_avx512.cpp, compiled
# with AVX-512 flags) must not define weak code symbols: an inline function or template instantiated
# there gets a weak out-of-line copy that the linker may pick for the baseline callers too, which
# then run AVX2 or AVX-512 instructions on a CPU without them. Such helpers belong in an unnamed namespace (or have BL_HD redefined as `static inline`).
# Usage: scripts/check_isa_objects.sh OBJECT...   (ctest passes every object of libbitlearn)
set -u
status=0
checked=0
for obj in "$@"; do
  case "$obj" in *_avx2.cpp.o|*_avx2.cpp.obj|*_avx512.cpp.o|*_avx512.cpp.obj) ;; *) continue ;; esac
  checked=$((checked + 1))
  weak=$(nm -C --defined-only "$obj" | awk '$2 == "W" || $2 == "V" {$1 = ""; print}')
  if [ -n "$weak" ]; then
    echo "FAIL $(basename "$obj") defines shared (weak) symbols:"
    echo "$weak" | head -20
    status=1
  fi
done
echo "checked $checked per-ISA objects"
[ "$checked" -gt 0 ] || { echo "FAIL no *_avx2 object given"; exit 1; }
[ $status -eq 0 ] && echo "PASS no per-ISA object shares code with the baseline build"
exit $status
