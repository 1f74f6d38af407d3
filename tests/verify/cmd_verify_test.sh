#!/usr/bin/env bash
# The command line's answers to incomplete runs and unknown commands: `verify` on a device that is
# not there exits 3 and prints no digest (a digest of fewer checks must never be compared with a
# complete run's); a first word that names no command is an error (exit 2), even before --help;
# a real command's --help still exits 0.
# Usage: cmd_verify_test.sh /path/to/bitlearn
set -u
BIN="$1"
fail=0
out=$(mktemp); err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

"$BIN" verify --quick --device cuda:97 >"$out" 2>"$err"; rc=$?
grep -Eq '^digest: [0-9a-f]{64}' "$out" && { echo "FAIL: an incomplete run printed a hex digest"; fail=1; }
if grep -q 'built without CUDA' "$err"; then
  # A build without CUDA refuses a CUDA device as bad usage before running anything.
  [ $rc -eq 2 ] || { echo "FAIL: verify --device cuda:97 in a build without CUDA exited $rc, expected 2"; fail=1; }
else
  [ $rc -eq 3 ] || { echo "FAIL: verify on a missing device exited $rc, expected 3"; cat "$err"; fail=1; }
  grep -q '^digest: none (incomplete run' "$out" || { echo "FAIL: verify on a missing device printed a digest:"; cat "$out"; fail=1; }
  grep -q 'SKIPPED device cuda:97' "$out" || { echo "FAIL: the missing device is not named"; cat "$out"; fail=1; }
fi

for args in "assess --help" "assess" "nonsense --model x"; do
  # shellcheck disable=SC2086
  "$BIN" $args >"$out" 2>"$err"; rc=$?
  [ $rc -eq 2 ] || { echo "FAIL: 'bitlearn $args' exited $rc, expected 2"; fail=1; }
  grep -q "unknown command '${args%% *}'" "$err" || { echo "FAIL: 'bitlearn $args': stderr lacks the unknown command:"; cat "$err"; fail=1; }
done

for cmd in verify evaluate; do
  "$BIN" $cmd --help >"$out" 2>"$err"; rc=$?
  [ $rc -eq 0 ] || { echo "FAIL: 'bitlearn $cmd --help' exited $rc"; fail=1; }
done
"$BIN" --help >"$out" 2>"$err"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: 'bitlearn --help' exited $rc"; fail=1; }

[ $fail -eq 0 ] && echo "PASS: verify without the device, unknown commands"
exit $fail
