#!/usr/bin/env bash
# Portability check on this CPU: `bitlearn verify` must give the committed digest with every ISA
# variant this CPU can run (BITLEARN_ISA=scalar|avx2|avx512) and with 1, 2 and 7 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BITLEARN_BIN:-build/bitlearn}
variants=(scalar)
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then variants+=(avx2); fi
if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then variants+=(avx512); fi
if [ "$(uname -m)" = aarch64 ]; then variants=(scalar neon); fi
digests=()
for isa in "${variants[@]}"; do
  for t in 1 2 7; do
    out=$(BITLEARN_ISA=$isa "$BIN" verify --threads "$t")
    d=$(printf '%s\n' "$out" | awk '/^digest:/ {print $2}')
    echo "isa=$isa threads=$t digest=$d"
    digests+=("$d")
  done
done
first=${digests[0]}
for d in "${digests[@]}"; do
  [ "$d" = "$first" ] || { echo "FAIL: digests differ across ISA variants / thread counts"; exit 1; }
done
echo "PASS: ${#digests[@]} runs, one digest: $first"
