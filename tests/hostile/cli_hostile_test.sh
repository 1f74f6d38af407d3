#!/usr/bin/env bash
# Feeds the `bitlearn` program the hostile inputs of its options, CSV files, reports and standard
# output, and checks each is refused with exit code 2 and a message naming the problem, quickly
# (every refusal happens before any training, fitting or checking starts) and without writing files.
# Usage: cli_hostile_test.sh /path/to/bitlearn /path/to/repository
set -u
BIN="$1"
SRC="$2"
HF="$SRC/tests/data/hf"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/../cli_expect.sh"

# AddressSanitizer reserves terabytes of address space for its shadow memory, so under it (the
# scripts/sanitize.sh build) no address-space limit can be set: the case that needs one is skipped,
# the others run without the limit.
if grep -qa __asan_init "$BIN"; then asan=1; limit_as=":"; else asan=0; limit_as="ulimit -v 1048576"; fi

# --- thread counts ---
printf 'a,b,y\n1,2,3\n4,5,6\n7,8,9\n' >"$tmp/ok.csv"
expect 2 "--threads 100000: the thread count must be at most 1024" \
  "$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out "$tmp/m.json" --threads 100000
expect 2 "--threads -3: the thread count must be at least 1" \
  "$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out "$tmp/m.json" --threads -3
expect 2 "--threads 100000" "$BIN" predict --model "$tmp/m.json" --data "$tmp/ok.csv" --out "$tmp/p.csv" --threads 100000
expect 2 "--threads 100000" "$BIN" train --model mlp --threads 100000
expect 2 "--threads 100000" "$BIN" train --model llama-tiny --threads 100000
expect 2 "--threads 100000" "$BIN" verify --quick --threads 100000
# --threads 0 is refused like any other count below 1 (the default is asked for by omitting it).
expect 2 "--threads 0: the thread count must be at least 1" \
  "$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out "$tmp/m.json" --threads 0
expect 2 "--threads 0: the thread count must be at least 1" \
  "$BIN" predict --model "$tmp/m.json" --data "$tmp/ok.csv" --out "$tmp/p.csv" --threads 0
expect 2 "--threads 0: the thread count must be at least 1" "$BIN" train --model mlp --threads 0
expect 2 "--threads must be >= 1, got 0" "$BIN" verify --quick --threads 0
expect 2 "BITLEARN_THREADS 100000: the thread count must be at most 1024" env BITLEARN_THREADS=100000 "$BIN" verify --list
expect 2 "BITLEARN_THREADS='12abc': expected a whole number" env BITLEARN_THREADS=12abc "$BIN" verify --list
[ -e "$tmp/m.json" ] && { echo "FAIL: a refused fit wrote its model file"; fail=1; }
# 300 threads in a 1 GiB address space: the system refuses a thread stack part-way (no SIGABRT).
[ "$asan" = 1 ] || expect 2 "refused to start thread" bash -c "ulimit -v 1048576; exec \"\$0\" fit --model ridge \
  --data \"\$1\" --target y --out \"\$2\" --threads 300" "$BIN" "$tmp/ok.csv" "$tmp/m.json"

# --- CSV ---
printf 'f0,f0,f2,f2,target\n1,2,3,4,5\n6,7,8,9,10\n' >"$tmp/dup.csv"
expect 2 "names column 'f0' twice (columns 1 and 2)" \
  "$BIN" fit --model ridge --data "$tmp/dup.csv" --target target --out "$tmp/m.json"
printf 'a,target,b,target\n1,2,3,4\n5,6,7,8\n' >"$tmp/dup2.csv"
expect 2 "names column 'target' twice" "$BIN" fit --model ridge --data "$tmp/dup2.csv" --target target --out "$tmp/m.json"
mkdir "$tmp/dir.csv"
expect 2 "is a directory, not a CSV file" "$BIN" fit --model ridge --data "$tmp/dir.csv" --target y --out "$tmp/m.json"
[ -e "$tmp/m.json" ] && { echo "FAIL: a refused fit wrote its model file"; fail=1; }
"$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out "$tmp/m.json" --quiet || { echo "FAIL: fit"; fail=1; }
expect 2 "names column 'f0' twice" "$BIN" predict --model "$tmp/m.json" --data "$tmp/dup.csv" --out "$tmp/p.csv"
expect 2 "is a directory" "$BIN" predict --model "$tmp/m.json" --data "$tmp/dir.csv" --out "$tmp/p.csv"
[ -e "$tmp/p.csv" ] && { echo "FAIL: a refused predict wrote its predictions"; fail=1; }
# 3 rows x 20,001 columns: refused before any [d, d] matrix is allocated (run in 1 GiB of address space).
awk 'BEGIN { c = 20001; h = "c0"; for (i = 1; i < c; ++i) h = h ",c" i; print h;
             for (r = 0; r < 3; ++r) { l = "1"; for (i = 1; i < c; ++i) l = l "," (i + r) % 5; print l } }' \
  >"$tmp/wide.csv"
for m in ridge linear_regression bayesian_ridge pca; do
  expect 2 "20000 features on 3 rows would need a 20000 x 20000 matrix; refused past max(4096, 16 x rows)" \
    bash -c "$limit_as; exec \"\$0\" fit --model $m --data \"\$1\" --target c20000 --out \"\$2\" --threads 1" \
    "$BIN" "$tmp/wide.csv" "$tmp/m.json"
done

# --- train options of the classifiers (refused before the data is read) ---
for model in mlp cnn lstm; do
  for bad in "--steps 0" "--steps -5" "--batch 0" "--batch -4" "--width 0" "--width -3" \
             "--train-subset 0" "--train-subset -1"; do
    set -- $bad
    expect 2 "bitlearn train: $1 must be >= 1, got $2" "$BIN" train --model $model --data "$tmp/none" $bad
  done
  for lr in -1 0; do
    expect 2 "bitlearn train: --lr must be a finite number > 0" "$BIN" train --model $model --data "$tmp/none" --lr $lr
  done
  # Non-finite numbers are refused for every option, before the command runs.
  for lr in nan inf; do
    expect 2 "--lr: expects a finite number (got $lr)" "$BIN" train --model $model --data "$tmp/none" --lr $lr
  done
done
expect 2 "--checkpoint-every must be >= 0, got -2" "$BIN" train --model mlp --checkpoint-every -2
# The language-model path validates the same options in its trainer.
printf 'hello world, a tiny corpus for a tiny test.\n' >"$tmp/corpus.txt"
for bad in "--steps 0" "--steps -5" "--batch 0" "--batch -4"; do
  set -- $bad
  expect 2 "$1 must be >= 1" "$BIN" train --model llama-tiny --data "$tmp/corpus.txt" --tokenizer "$HF/tokenizer.json" \
    --tokens "$tmp/c.tok" $bad
done
expect 2 "--lr" "$BIN" train --model llama-tiny --data "$tmp/corpus.txt" --tokenizer "$HF/tokenizer.json" \
  --tokens "$tmp/c.tok" --lr nan

# --- verify --json and compare ---
expect 2 "--json: needs a value (got an empty one)" "$BIN" verify --quick --json ""
# Any option: an empty value, an integer beyond 64 bits, a negative unsigned value.
expect 2 "--max-new-tokens: needs a value (got an empty one)" "$BIN" generate --model "$HF/llama" --ids 1 --max-new-tokens ""
expect 2 "--max-new-tokens: 99999999999999999999999 is beyond the range of a 64-bit integer" \
  "$BIN" generate --model "$HF/llama" --ids 1 --max-new-tokens 99999999999999999999999
expect 2 "--seed: must not be negative (got -1)" "$BIN" generate --model "$HF/llama" --ids 1 --seed -1
expect 2 "--folds: expects an integer (got '3.5')" "$BIN" cv --model ridge --data "$tmp/none" --target y --folds 3.5
expect 2 "cannot write beside '/nonexistent-dir/r.json'" "$BIN" verify --quick --json /nonexistent-dir/r.json
expect 2 "is a directory" "$BIN" verify --quick --json "$tmp"
h0=$(printf '0%.0s' $(seq 64))
h1=$(printf '1%.0s' $(seq 64))
digest_of() {  # digest_of HASH...: the suite digest, SHA-256 over the checks' raw 32-byte hashes
  perl -e 'use Digest::SHA qw(sha256_hex); print sha256_hex(join "", map { pack "H*", $_ } @ARGV)' "$@"
}
report() {  # report FILE CHECKS_JSON DIGEST [SUITE]
  printf '{"format":"bitlearn.verify.report.v1","version":"x","contract_profile":"p","suite":"%s",
"threads":1,"runs":[{"device":"cpu","digest":"%s","checks":[%s]}]}\n' "${4:-quick}" "$3" "$2" >"$1"
}
check() {  # check NAME HASH [STATE]: one check result's JSON, its expected hash its own
  printf '{"name":"%s","state":"%s","hash":"%s","expected":"%s"}' "$1" "${3:-IDENTICAL}" "$2" "$2"
}
report "$tmp/a.json" "$(check gemm "$h0")" "$(digest_of "$h0")"
report "$tmp/twice.json" "$(check gemm "$h1"),$(check gemm "$h0")" "$(digest_of "$h1" "$h0")"
"$BIN" compare "$tmp/a.json" "$tmp/a.json" >/dev/null || { echo "FAIL: compare of a good report"; fail=1; }
# A report must agree with itself: an edited hash under the old digest, or IDENTICAL beside another
# expected hash, is refused; the reports of two suites are not comparable (no list of differences).
report "$tmp/edited.json" "$(check gemm "$h1")" "$(digest_of "$h0")"
expect 2 "self-contradicting report: device run 'cpu' claims digest $(digest_of "$h0") but its check hashes give $(digest_of "$h1")" \
  "$BIN" compare "$tmp/a.json" "$tmp/edited.json"
report "$tmp/claims.json" "{\"name\":\"gemm\",\"state\":\"IDENTICAL\",\"hash\":\"$h1\",\"expected\":\"$h0\"}" "$(digest_of "$h1")"
expect 2 "check 'gemm' in device run 'cpu' is marked IDENTICAL but its hash $h1 is not the expected $h0" \
  "$BIN" compare "$tmp/claims.json" "$tmp/a.json"
report "$tmp/full.json" "$(check gemm "$h0")" "$(digest_of "$h0")" full
expect 2 "not comparable: A is a quick report of p, B a full report of p" "$BIN" compare "$tmp/a.json" "$tmp/full.json"
"$BIN" compare "$tmp/a.json" "$tmp/full.json" 2>/dev/null | grep -q "difference" &&
  { echo "FAIL: a quick and a full report were compared check by check"; fail=1; }
expect 2 "corrupt report: check 'gemm' appears twice in device run 'cpu'" "$BIN" compare "$tmp/twice.json" "$tmp/a.json"
expect 2 "corrupt report: check 'gemm' appears twice" "$BIN" compare "$tmp/a.json" "$tmp/twice.json"
# A report without check results compares nothing: refused, not IDENTICAL.
report "$tmp/none.json" "" "$(digest_of)"
expect 2 "holds no check results: nothing to compare" "$BIN" compare "$tmp/none.json" "$tmp/none.json"
expect 2 "'$tmp/none.json' holds no check results" "$BIN" compare "$tmp/a.json" "$tmp/none.json"

# --- standard output that cannot be written ---
if [ -w /dev/full ]; then
  full() {  # full PATTERN CMD...: CMD with stdout on /dev/full exits 2 with PATTERN on stderr.
    local pattern="$1"
    shift
    "$@" >/dev/full 2>"$tmp/err" </dev/null
    local got=$?
    if [ "$got" != 2 ] || ! grep -qF -- "$pattern" "$tmp/err"; then
      echo "FAIL: $* >/dev/full -> exit $got, stderr: $(head -c 300 "$tmp/err")"
      fail=1
    fi
  }
  msg="cannot write standard output"
  full "$msg" "$BIN" version
  full "$msg" "$BIN" --version
  full "$msg" "$BIN" tokenizer encode --tokenizer "$HF/tokenizer.json" --text "hello world"
  full "$msg" "$BIN" tokenizer decode --tokenizer "$HF/tokenizer.json" --ids 1,2,3
  full "$msg" "$BIN" generate --model "$HF/gpt2" --ids 1,2,3 --max-new-tokens 2
  full "$msg" "$BIN" verify --list
  full "$msg" "$BIN" compare "$tmp/a.json" "$tmp/a.json"
fi

# --- pipes and devices (the sweep's first findings) ---
# A named pipe that nobody writes reads as empty (it never blocks); a device as the output is written
# in place, never replaced by a file.
mkfifo "$tmp/pipe.csv"
expect 2 "pipe.csv: empty file" timeout 20 "$BIN" fit --model ridge --data "$tmp/pipe.csv" --target y --out "$tmp/m2.json"
[ -p "$tmp/pipe.csv" ] || { echo "FAIL: the pipe was replaced"; fail=1; }
mknod "$tmp/full" c 1 7 2>/dev/null && {
  expect 2 "full: write failed (No space left on device)" "$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out "$tmp/full"
  [ -c "$tmp/full" ] || { echo "FAIL: the device node was replaced by a file"; fail=1; }
}
got=$("$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out /dev/stdout --quiet | head -c 13)
[ "$got" = '{
 "estimator' ] || { echo "FAIL: --out /dev/stdout: $got"; fail=1; }
printf 'a\xe9,b,y\n1,2,3\n4,5,6\n' >"$tmp/latin1.csv"
expect 2 "column 1 name is not valid UTF-8" "$BIN" fit --model ridge --data "$tmp/latin1.csv" --target y --out "$tmp/m3.json"
"$BIN" fit --model ridge --data "$tmp/ok.csv" --target y --out "$tmp/m.json" --quiet
sed 's/"feature_names": \[/"feature_names": [-1, /' "$tmp/m.json" >"$tmp/bad_names.json"
expect 2 "feature_names holds -1, not a column name" "$BIN" predict --model "$tmp/bad_names.json" --data "$tmp/ok.csv" --out "$tmp/p.csv"
printf 'a,y\n1,0.5\n2,1.5\n3,2.5\n4,0.25\n5,1\n6,2\n' >"$tmp/cont.csv"
expect 2 "is not a class label (a continuous target)" "$BIN" cv --model ridge --data "$tmp/cont.csv" --target y --folds 2 --stratified
expect 2 "expected >= 0 or none" "$BIN" fit --model decision_tree_classifier --data "$tmp/ok.csv" --target y --out "$tmp/m4.json" --param max_depth=-1
for f in m2.json m3.json m4.json p.csv; do [ ! -e "$tmp/$f" ] || { echo "FAIL: $f was written"; fail=1; }; done

[ "$fail" = 0 ] && echo "cli_hostile: all passed"
exit $fail
