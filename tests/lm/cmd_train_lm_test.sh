#!/usr/bin/env bash
# Tests `bitlearn train` on a language model end to end: a tiny Llama trained on the docs folder
# gives the same report bits with other micro-batching and thread counts and across --stop-at /
# --resume (checked by `bitlearn compare`), writes a loss curve and a Hugging Face folder that
# `bitlearn generate` runs; bad input exits non-zero with a message naming the problem.
# Usage: cmd_train_lm_test.sh /path/to/bitlearn /path/to/source
set -u
BIN="$1"
SRC="$2"
fail=0
tmp=$(mktemp -d)

"$BIN" tokenizer train --corpus "$SRC"/docs/*.md --vocab-size 384 --special '<|endoftext|>' \
  --out "$tmp/tokenizer.json" >/dev/null || { echo "FAIL: tokenizer train"; fail=1; }
cat >"$tmp/config.json" <<'EOF'
{"model_type": "llama", "vocab_size": 384, "hidden_size": 64, "intermediate_size": 96,
 "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
 "max_position_embeddings": 32, "rms_norm_eps": 1e-5, "hidden_act": "silu", "tie_word_embeddings": false}
EOF
# (CLI11 refuses an option given twice: the bad-input runs below start from base.)
base=(train --model llama --config "$tmp/config.json" --tokenizer "$tmp/tokenizer.json" --steps 6 --batch 4
      --seq-len 32 --warmup 2 --quiet)
common=("${base[@]}" --data "$SRC/docs" --tokens "$tmp/tokens.bin" --lr 3e-3)

# The reference run.
"$BIN" "${common[@]}" --report "$tmp/a.json" --checkpoint "$tmp/a.ckpt" --save-hf "$tmp/hf" >"$tmp/a.txt" 2>&1 ||
  { echo "FAIL: training run: $(cat "$tmp/a.txt")"; fail=1; }
grep -q "^model llama (llama, [0-9]* parameters), device cpu, threads [0-9]*, steps 6, batch 4, seq len 32, shards 4, micro-batches 1" \
  "$tmp/a.txt" || { echo "FAIL: start line: $(head -1 "$tmp/a.txt")"; fail=1; }
params=$(sed -n 's/^model llama (llama, \([0-9]*\) parameters).*/\1/p' "$tmp/a.txt")
grep -q "\"parameters\": $params," "$tmp/a.json" || { echo "FAIL: start line parameters $params differ from the report"; fail=1; }
for want in "final loss" "final params sha256: [0-9a-f]\{64\}" "checkpoint sha256: [0-9a-f]\{64\}" "tokens/s: "; do
  grep -q "$want" "$tmp/a.txt" || { echo "FAIL: summary lacks '$want': $(cat "$tmp/a.txt")"; fail=1; }
done
grep -q '"format": "bitlearn.lm.train.v1"' "$tmp/a.json" || { echo "FAIL: report format"; fail=1; }
grep -q "<svg" "$tmp/a.svg" 2>/dev/null || { echo "FAIL: no loss curve $tmp/a.svg"; fail=1; }

# Other micro-batching and one thread: the same bits.
"$BIN" "${common[@]}" --accumulate 2 --threads 1 --report "$tmp/b.json" --checkpoint "$tmp/b.ckpt" >"$tmp/b.txt" 2>&1 ||
  { echo "FAIL: --accumulate 2 run: $(cat "$tmp/b.txt")"; fail=1; }
grep -q "threads 1, .*micro-batches 2" "$tmp/b.txt" || { echo "FAIL: start line of run b: $(head -1 "$tmp/b.txt")"; fail=1; }
"$BIN" compare "$tmp/a.json" "$tmp/b.json" >"$tmp/cmp.txt"; rc=$?
[ $rc -eq 0 ] && grep -q "^IDENTICAL: 6 steps" "$tmp/cmp.txt" ||
  { echo "FAIL: compare a b (rc $rc): $(cat "$tmp/cmp.txt")"; fail=1; }
cmp -s "$tmp/a.ckpt" "$tmp/b.ckpt" || { echo "FAIL: checkpoints of a and b differ"; fail=1; }

# Stop after step 3, resume: the same bits as the uninterrupted run.
"$BIN" "${common[@]}" --stop-at 3 --checkpoint "$tmp/c.ckpt" --report "$tmp/c1.json" >"$tmp/c1.txt" 2>&1 ||
  { echo "FAIL: --stop-at 3: $(cat "$tmp/c1.txt")"; fail=1; }
"$BIN" "${common[@]}" --resume --checkpoint "$tmp/c.ckpt" --report "$tmp/c2.json" >"$tmp/c2.txt" 2>&1 ||
  { echo "FAIL: --resume: $(cat "$tmp/c2.txt")"; fail=1; }
grep -q "steps 4\.\.6" "$tmp/c2.txt" || { echo "FAIL: the resumed run did not run steps 4..6: $(cat "$tmp/c2.txt")"; fail=1; }
"$BIN" compare "$tmp/a.json" "$tmp/c2.json" >"$tmp/cmp.txt"; rc=$?
[ $rc -eq 0 ] && grep -q "^overlap: steps 4\.\.6" "$tmp/cmp.txt" && grep -q "^IDENTICAL: 3 steps" "$tmp/cmp.txt" ||
  { echo "FAIL: compare a c2 (rc $rc): $(cat "$tmp/cmp.txt")"; fail=1; }
"$BIN" compare "$tmp/c1.json" "$tmp/a.json" >"$tmp/cmp.txt"; rc=$?
[ $rc -eq 0 ] && grep -q "final hashes not compared" "$tmp/cmp.txt" ||
  { echo "FAIL: compare c1 a (rc $rc): $(cat "$tmp/cmp.txt")"; fail=1; }
cmp -s "$tmp/a.ckpt" "$tmp/c.ckpt" || { echo "FAIL: the resumed checkpoint differs from the uninterrupted one"; fail=1; }

# Another seed: compare names the first differing step and field, exit 1.
"$BIN" "${common[@]}" --seed 2 --report "$tmp/d.json" >/dev/null 2>&1 || { echo "FAIL: --seed 2 run"; fail=1; }
"$BIN" compare "$tmp/a.json" "$tmp/d.json" >"$tmp/cmp.txt"; rc=$?
[ $rc -eq 1 ] && grep -q "^first difference: step 1 loss_bits" "$tmp/cmp.txt" ||
  { echo "FAIL: compare a d (rc $rc): $(cat "$tmp/cmp.txt")"; fail=1; }
# A training report against another kind of JSON, and a missing file: exit 2.
"$BIN" compare "$tmp/a.json" "$tmp/config.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "different kinds" "$tmp/err" || { echo "FAIL: mixed compare (rc $rc): $(cat "$tmp/err")"; fail=1; }
"$BIN" compare "$tmp/a.json" "$tmp/none.json" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot open" "$tmp/err" || { echo "FAIL: compare with a missing file (rc $rc): $(cat "$tmp/err")"; fail=1; }

# The exported folder runs in `bitlearn generate` (its tokenizer.json beside the weights).
[ -f "$tmp/hf/config.json" ] && [ -f "$tmp/hf/model.safetensors" ] && [ -f "$tmp/hf/tokenizer.json" ] ||
  { echo "FAIL: --save-hf folder incomplete: $(ls "$tmp/hf")"; fail=1; }
text=$("$BIN" generate --model "$tmp/hf" --prompt "The model" --max-new-tokens 4 2>&1) ||
  { echo "FAIL: generate on the exported folder: $text"; fail=1; }
case "$text" in "The model"*) ;; *) echo "FAIL: generate output '$text'"; fail=1 ;; esac
ids=$("$BIN" generate --model "$tmp/hf" --ids 5,6,7 --max-new-tokens 4 2>&1)
[ "$(echo "$ids" | tr ',' '\n' | wc -l)" -eq 7 ] || { echo "FAIL: generate --ids output '$ids'"; fail=1; }

check_error() {  # expected stderr text, then the arguments
  local want_err="$1" rc
  shift
  "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ $rc -eq 0 ]; then echo "FAIL: '$*' exited 0"; fail=1; fi
  if ! grep -q "$want_err" "$tmp/err"; then echo "FAIL: '$*': stderr lacks '$want_err':"; cat "$tmp/err"; fail=1; fi
}
mkdir -p "$tmp/bad"
printf 'fine text\n' >"$tmp/bad/a.txt"
printf 'then \xff\xfe bytes' >"$tmp/bad/b.txt"
check_error "b.txt' is not UTF-8 text (invalid byte at offset 5)" "${base[@]}" --lr 3e-3 --data "$tmp/bad" --tokens "$tmp/bad.bin"
check_error "^bitlearn train: --accumulate 3 does not divide the 4 shards" "${common[@]}" --accumulate 3
check_error "^bitlearn train: --resume refused: .*lr = " "${base[@]}" --data "$SRC/docs" --tokens "$tmp/tokens.bin" --lr 1e-3 --resume --checkpoint "$tmp/c.ckpt"
check_error "^bitlearn train: --seq-len applies only to language models" train --model mlp --seq-len 8
check_error "^bitlearn train: --width applies only to the classifiers" "${common[@]}" --width 8
check_error "^bitlearn train: --model must be" train --model gpt3
check_error "^bitlearn train: --model gpt2 but the --init-from folder .* holds a llama model" \
  train --model gpt2 --init-from "$tmp/hf" --data "$SRC/docs" --tokens "$tmp/tokens.bin" --steps 1
check_error "^bitlearn train: .*fewer than one sequence" "${base[@]}" --lr 3e-3 --data "$tmp/bad/a.txt" --tokens "$tmp/short.bin"
cmp -s "$tmp/a.ckpt" "$tmp/c.ckpt" || { echo "FAIL: a refused resume changed the checkpoint"; fail=1; }

rm -rf "$tmp"
[ $fail -eq 0 ] && echo "lm train cli: all checks passed"
exit $fail
