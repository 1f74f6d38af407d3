#!/usr/bin/env bash
# `bitlearn train` (classifiers) says what a user needs to see: the optimizer in the first line,
# the step a resume continues after, and how many steps ran (every step counted, the untimed first
# one included). Needs the Fashion-MNIST package (scripts/install-deps.sh).
# Usage: cmd_train_test.sh /path/to/bitlearn
set -u
BIN="$1"
fail=0
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
run() { "$BIN" train --model mlp --train-subset 512 --no-eval --checkpoint "$d/ck.safetensors" "$@" >"$d/out" 2>&1; }

run --steps 12 --checkpoint-every 6 || { echo "FAIL: train exited non-zero:"; cat "$d/out"; fail=1; }
grep -q '^model mlp (.*), optimizer adamw, ' "$d/out" || { echo "FAIL: the first line does not name the optimizer:"; cat "$d/out"; fail=1; }
grep -q '(12 steps run, the first one untimed)' "$d/out" || { echo "FAIL: 12 steps not reported as 12:"; cat "$d/out"; fail=1; }
grep -q 'resumed' "$d/out" && { echo "FAIL: a fresh run says it resumed"; fail=1; }

run --steps 20 --resume || { echo "FAIL: the resumed run exited non-zero:"; cat "$d/out"; fail=1; }
grep -q "^resumed from $d/ck.safetensors after step 12$" "$d/out" || { echo "FAIL: the resume does not name its step:"; cat "$d/out"; fail=1; }
grep -q '(8 steps run, the first one untimed)' "$d/out" || { echo "FAIL: the resumed run's 8 steps not reported:"; cat "$d/out"; fail=1; }

[ $fail -eq 0 ] && echo "PASS: train names its optimizer, its resume step and its step count"
exit $fail
