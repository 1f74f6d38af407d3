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

# The same x86-64 binary on a CPU without AVX (emulated Nehalem: SSE4.2 only, no FMA): no illegal
# instruction, and the scalar path with the C library's exact fmaf gives the committed quick digest.
if [ "$(uname -m)" = x86_64 ] && command -v qemu-x86_64 >/dev/null 2>&1; then
  out=$(qemu-x86_64 -cpu Nehalem "$BIN" verify --quick --threads 2)
  d=$(printf '%s\n' "$out" | awk '/^digest:/ {print $2}')
  expected=$("$BIN" verify --quick | awk '/^digest:/ {print $2}')
  echo "qemu-x86_64 -cpu Nehalem (no AVX): quick digest=$d"
  [ "$d" = "$expected" ] || { echo "FAIL: emulated CPU without AVX gives another quick digest than native ($expected)"; exit 1; }
  echo "PASS: no-AVX CPU gives the native quick digest"
fi
