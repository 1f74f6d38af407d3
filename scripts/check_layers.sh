#!/usr/bin/env bash
# The layer rules of docs/architecture.md, checked on the source tree (a ctest test, label unit):
#  1. above the ops layer (autograd, nn, models, ml, verify, text, io, ops outside dispatch.cpp, and
#     the CLI) no file holds `#if BITLEARN_HAS_CUDA` or calls a kernel's CUDA entry point;
#  2. every CUDA entry point declared in src/kernels/*.h has a stub in src/kernels/no_cuda/, so a
#     build without CUDA links and names the missing backend;
#  3. every CUDA entry point is reached from the one dispatch point, src/ops/dispatch.cpp (test
#     hooks listed below excepted);
#  4. every kernel with a CUDA body (a src/kernels/<op>.h declaring one) has a case list of the
#     conformance driver (tests/conformance/case_lists.h names its row), so it runs on every backend
#     against its reference; the kernels below with their own CUDA conformance tests excepted.
# Exits 1 and names each file and symbol that breaks a rule.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "${1:-}" = --self-test ]; then
  # Sabotage arm: a tree that breaks each rule once must fail with each rule named.
  t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
  mkdir -p "$t/src/kernels" "$t/src/ops" "$t/src/nn"
  cp "$here"/../src/kernels/*.h "$t/src/kernels/"; cp -r "$here"/../src/kernels/no_cuda "$t/src/kernels/"
  cp "$here"/../src/ops/dispatch.cpp "$t/src/ops/"
  printf '#if defined(BITLEARN_HAS_CUDA)\nvoid f() { cumsum_cuda(0, {}, 0); }\n#endif\n' > "$t/src/nn/bad.cpp"
  sed -i '/ sort_cuda(/d' "$t"/src/kernels/no_cuda/*.cpp
  sed -i 's/ topk_cuda(/ topk_cuda_renamed(/' "$t/src/ops/dispatch.cpp"
  mkdir -p "$t/tests/conformance"
  grep -v '"im2col"' "$here"/../tests/conformance/case_lists.h > "$t/tests/conformance/case_lists.h"
  out=$(bash "$0" "$t" 2>&1) && { echo "FAIL: the sabotaged tree passed"; exit 1; }
  for want in "rule 1: #if" "rule 1: cumsum_cuda" "rule 2: sort_cuda" "rule 3: topk_cuda" "rule 4: im2col"; do
    grep -q "$want" <<<"$out" || { echo "FAIL: the sabotaged tree did not report '$want'"; echo "$out"; exit 1; }
  done
  echo "PASS: the sabotaged tree fails each rule"; exit 0
fi
root=${1:-"$here/.."}
cd "$root"
fail=0
above=()
for d in src/autograd src/nn src/models src/ml src/verify src/text src/io src/ops tools/bitlearn; do
  [ -d "$d" ] && above+=("$d")
done

# CUDA entry points: functions named *_cuda declared at the start of a line in the kernel headers.
mapfile -t entries < <(grep -hoE '^[A-Za-z_][A-Za-z0-9_:<>* ]* ([a-z0-9_]+_cuda[a-z0-9_]*)\(' src/kernels/*.h |
                       sed -E 's/.* ([a-z0-9_]+_cuda[a-z0-9_]*)\($/\1/' | sort -u)
[ "${#entries[@]}" -gt 0 ] || { echo "check_layers: found no CUDA entry points in src/kernels/*.h"; exit 1; }
# Kernel entry points that only tests call (a sabotage arm, a form run by itself).
test_hooks=" attention_cuda_sabotaged_fold softmax_rows_on_chip_cuda "

hits=$(grep -rnE '^\s*#\s*if.*BITLEARN_HAS_CUDA' "${above[@]}" --include='*.cpp' --include='*.h' || true)
if [ -n "$hits" ]; then
  echo "FAIL rule 1: #if BITLEARN_HAS_CUDA above the ops layer (use ops/dispatch.h):"; echo "$hits"; fail=1
fi
for e in "${entries[@]}"; do
  hits=$(grep -rnw "$e" "${above[@]}" --include='*.cpp' --include='*.h' | grep -v '^src/ops/dispatch\.cpp:' || true)
  if [ -n "$hits" ]; then
    echo "FAIL rule 1: $e called above the ops layer (call dispatch:: or a Tensor op):"; echo "$hits"; fail=1
  fi
  if ! grep -qE "\b$e\(" src/kernels/no_cuda/*.cpp; then
    echo "FAIL rule 2: $e has no stub in src/kernels/no_cuda/"; fail=1
  fi
  case "$test_hooks" in *" $e "*) continue ;; esac
  if ! grep -qE "\b$e\(" src/ops/dispatch.cpp; then
    echo "FAIL rule 3: $e is not reached from src/ops/dispatch.cpp"; fail=1
  fi
done
# Rule 4. backend.h holds the elementwise and index kernels; the rows named are the driver's.
no_list=" lstm_cell selective_scan "
for h in src/kernels/*.h; do
  grep -qE '^[A-Za-z_][A-Za-z0-9_:<>* ]* [a-z0-9_]+_cuda\(' "$h" || continue
  op=$(basename "$h" .h)
  case "$no_list" in *" $op "*) continue ;; esac
  rows=$op
  [ "$op" = backend ] && rows="elementwise index"
  for row in $rows; do
    if ! grep -qE "\{\"[a-z0-9_]+\", \"$row( \(|\")" tests/conformance/case_lists.h 2>/dev/null; then
      echo "FAIL rule 4: $op has a CUDA body but no conformance driver case list for row '$row' (tests/conformance/case_lists.h)"; fail=1
    fi
  done
done
[ "$fail" = 0 ] && echo "PASS: layer rules hold (${#entries[@]} CUDA entry points, each stubbed and dispatched once; every kernel with a CUDA body has a driver case list)"
exit "$fail"
