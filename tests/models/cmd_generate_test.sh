#!/usr/bin/env bash
# Tests `bitlearn generate` and `bitlearn logits` end to end: greedy ids equal the float64
# reference continuation of the gpt2, mamba and mamba2 fixtures, sampling is reproducible by seed, logits files are
# byte-identical across runs, --prompt goes through the tokenizer, --stream prints what a plain run
# prints, --stop / --min-p / --repetition-penalty / generation_config.json do what they say, --chat
# renders each prompt with the model folder's chat template, and bad input exits non-zero with a
# message naming the problem.
# Usage: cmd_generate_test.sh /path/to/bitlearn /path/to/tests/data/hf
set -u
BIN="$1"
HF="$2"
fail=0
tmp=$(mktemp -d)

# greedy_f64 of tests/data/hf/gpt2/reference.safetensors: the prompt, then 16 tokens.
prompt="467,284,73,66,264,65,67,371,8,78,306,199,259,323,291,302"
want="$prompt,44,44,44,44,44,44,44,44,44,44,44,44,44,44,44,44"
got=$("$BIN" generate --model "$HF/gpt2" --ids "$prompt" --max-new-tokens 16)
[ "$got" = "$want" ] || { echo "FAIL: greedy gpt2: got $got"; fail=1; }

# greedy_f64 of the mamba and mamba2 fixtures (same prompt): prefill, then recurrent-state decode.
want="$prompt,302,302,302,302,302,302,302,302,302,302,302,302,302,302,302,302"
got=$("$BIN" generate --model "$HF/mamba" --ids "$prompt" --max-new-tokens 16)
[ "$got" = "$want" ] || { echo "FAIL: greedy mamba: got $got"; fail=1; }
want="$prompt,488,79,365,280,160,473,5,149,294,451,504,219,246,175,296,192"
got=$("$BIN" generate --model "$HF/mamba2" --ids "$prompt" --max-new-tokens 16)
[ "$got" = "$want" ] || { echo "FAIL: greedy mamba2: got $got"; fail=1; }
"$BIN" logits --model "$HF/mamba2" --ids 1,2,3,4 --out "$tmp/m1.safetensors" >"$tmp/m.txt" || fail=1
"$BIN" logits --model "$HF/mamba2" --ids 1,2,3,4 --out "$tmp/m2.safetensors" >/dev/null || fail=1
grep -q "logits \[4, 512\]" "$tmp/m.txt" || { echo "FAIL: mamba2 logits output: $(cat "$tmp/m.txt")"; fail=1; }
cmp -s "$tmp/m1.safetensors" "$tmp/m2.safetensors" || { echo "FAIL: mamba2 logits files differ"; fail=1; }

a=$("$BIN" generate --model "$HF/llama" --ids 5,6,7 --max-new-tokens 10 --temperature 1.3 --seed 9)
b=$("$BIN" generate --model "$HF/llama" --ids 5,6,7 --max-new-tokens 10 --temperature 1.3 --seed 9)
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: sampling not reproducible: '$a' vs '$b'"; fail=1; }

"$BIN" logits --model "$HF/qwen2" --ids 1,2,3 --out "$tmp/a.safetensors" >"$tmp/a.txt" || fail=1
"$BIN" logits --model "$HF/qwen2" --ids 1,2,3 --out "$tmp/b.safetensors" >/dev/null || fail=1
grep -q "logits \[3, 512\]" "$tmp/a.txt" || { echo "FAIL: logits output: $(cat "$tmp/a.txt")"; fail=1; }
cmp -s "$tmp/a.safetensors" "$tmp/b.safetensors" || { echo "FAIL: logits files differ"; fail=1; }

text=$("$BIN" generate --model "$HF/gpt2" --prompt "def main():" --max-new-tokens 4)
case "$text" in "def main():"*) ;; *) echo "FAIL: --prompt output '$text'"; fail=1 ;; esac

check_error() {  # expected stderr text, then the arguments
  local want_err="$1" rc
  shift
  "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ $rc -eq 0 ]; then echo "FAIL: '$*' exited 0"; fail=1; fi
  if ! grep -q "$want_err" "$tmp/err"; then echo "FAIL: '$*': stderr lacks '$want_err':"; cat "$tmp/err"; fail=1; fi
}
check_error "outside the vocabulary" generate --model "$HF/gpt2" --ids 1,600

# --stream prints what the plain run prints (ids and text), then the timings on stderr.
plain=$("$BIN" generate --model "$HF/gpt2" --ids "$prompt" --max-new-tokens 8)
streamed=$("$BIN" generate --model "$HF/gpt2" --ids "$prompt" --max-new-tokens 8 --stream 2>"$tmp/err")
[ "$streamed" = "$plain" ] || { echo "FAIL: --stream ids '$streamed' vs '$plain'"; fail=1; }
grep -q "^prompt 16 tokens; first token after .* ms; 8 tokens generated, .* tokens/s" "$tmp/err" ||
  { echo "FAIL: --stream timings: $(cat "$tmp/err")"; fail=1; }
full=$("$BIN" generate --model "$HF/llama" --prompt "def main():" --max-new-tokens 12)
streamed=$("$BIN" generate --model "$HF/llama" --prompt "def main():" --max-new-tokens 12 --stream 2>/dev/null)
[ "$streamed" = "$full" ] || { echo "FAIL: --stream text differs from the plain run"; fail=1; }
# --stop ends the text before the stop string (streamed or not).
want="${full%%te*}"
[ "$want" != "$full" ] || { echo "FAIL: the fixture's continuation lacks 'te' (test needs another stop string)"; fail=1; }
got=$("$BIN" generate --model "$HF/llama" --prompt "def main():" --max-new-tokens 12 --stop te --stop zzz)
[ "$got" = "$want" ] || { echo "FAIL: --stop: '$got' vs '$want'"; fail=1; }
got=$("$BIN" generate --model "$HF/llama" --prompt "def main():" --max-new-tokens 12 --stop te --stream 2>/dev/null)
[ "$got" = "$want" ] || { echo "FAIL: --stop --stream: '$got' vs '$want'"; fail=1; }
check_error "needs --prompt" generate --model "$HF/gpt2" --ids 1,2 --stop x
# min-p 1 keeps only the most likely token: sampling becomes greedy.
greedy=$("$BIN" generate --model "$HF/llama" --ids 5,6,7 --max-new-tokens 10)
got=$("$BIN" generate --model "$HF/llama" --ids 5,6,7 --max-new-tokens 10 --temperature 1.3 --seed 9 --min-p 1)
[ "$got" = "$greedy" ] || { echo "FAIL: --min-p 1 is not greedy: $got vs $greedy"; fail=1; }
# The repetition penalty changes gpt2's repeated greedy token, reproducibly.
want="$prompt,44,477,477,477,477,477,477,492"
got=$("$BIN" generate --model "$HF/gpt2" --ids "$prompt" --max-new-tokens 8 --repetition-penalty 1.5)
[ "$got" = "$want" ] || { echo "FAIL: --repetition-penalty: $got"; fail=1; }
check_error "repetition_penalty" generate --model "$HF/gpt2" --ids 1,2 --repetition-penalty 0
# generation_config.json: its sampling defaults and eos ids are used; options override them.
mkdir -p "$tmp/gc"
ln -s "$(cd "$HF/gpt2" && pwd)/config.json" "$tmp/gc/config.json"
ln -s "$(cd "$HF/gpt2" && pwd)/model.safetensors" "$tmp/gc/model.safetensors"
echo '{"do_sample": true, "temperature": 1.3, "eos_token_id": [9999, 7777]}' >"$tmp/gc/generation_config.json"
a=$("$BIN" generate --model "$tmp/gc" --ids 5,6,7 --max-new-tokens 10 --seed 9)
b=$("$BIN" generate --model "$HF/gpt2" --ids 5,6,7 --max-new-tokens 10 --seed 9 --temperature 1.3)
[ "$a" = "$b" ] || { echo "FAIL: generation_config sampling: $a vs $b"; fail=1; }
echo '{"eos_token_id": [9999, 44]}' >"$tmp/gc/generation_config.json"
got=$("$BIN" generate --model "$tmp/gc" --ids "$prompt" --max-new-tokens 8)
[ "$got" = "$prompt,44" ] || { echo "FAIL: generation_config eos list: $got"; fail=1; }
got=$("$BIN" generate --model "$tmp/gc" --ids "$prompt" --max-new-tokens 3 --ignore-eos)
[ "$got" = "$prompt,44,44,44" ] || { echo "FAIL: --ignore-eos: $got"; fail=1; }
echo '{"eos_token_id": "two"}' >"$tmp/gc/generation_config.json"
check_error "generation_config.json: eos_token_id holds" generate --model "$tmp/gc" --ids 1,2
echo '{"temperature": ' >"$tmp/gc/generation_config.json"
check_error "generation_config.json: not valid JSON" generate --model "$tmp/gc" --ids 1,2
check_error "cannot open" generate --model "$tmp/none" --ids 1
check_error "give --prompt (or --prompts-file) or --ids, not both" generate --model "$HF/gpt2" --ids 1 --prompt x
# Several prompts: one JSON line each, each the line of that prompt alone (same tokens, same hash).
many=$("$BIN" generate --model "$HF/llama" --prompt "def main():" --prompt "import os" --max-new-tokens 5)
[ "$(printf '%s\n' "$many" | wc -l)" = 2 ] || { echo "FAIL: two prompts give two lines: $many"; fail=1; }
alone=$("$BIN" generate --model "$HF/llama" --prompt "import os" --max-new-tokens 5 --jsonl)
line2=$(printf '%s\n' "$many" | sed -n 2p)
[ "${line2#*\"prompt\":}" = "${alone#*\"prompt\":}" ] || { echo "FAIL: prompt 2 of 2 differs from alone: $line2 vs $alone"; fail=1; }
case "$line2" in *'"index":1'*'"tokens_sha256":"'*) ;; *) echo "FAIL: JSON line fields: $line2"; fail=1 ;; esac
printf 'def main():\n\nimport os\r\n' >"$tmp/prompts.txt"
fromfile=$("$BIN" generate --model "$HF/llama" --prompts-file "$tmp/prompts.txt" --max-new-tokens 5)
[ "$fromfile" = "$many" ] || { echo "FAIL: --prompts-file (blank line, CRLF) differs: $fromfile"; fail=1; }
# --batch: prompts generated together give the lines they give one at a time (sampled, with a stop string).
printf 'def main():\nimport os\nx = 1\nclass A:\nprint(\n' >"$tmp/five.txt"
b1=$("$BIN" generate --model "$HF/llama" --prompts-file "$tmp/five.txt" --max-new-tokens 8 --temperature 1.2 --seed 5 --stop ")" --batch 1)
b3=$("$BIN" generate --model "$HF/llama" --prompts-file "$tmp/five.txt" --max-new-tokens 8 --temperature 1.2 --seed 5 --stop ")" --batch 3)
[ "$(printf '%s\n' "$b3" | wc -l)" = 5 ] && [ "$b1" = "$b3" ] || { echo "FAIL: --batch 3 differs from --batch 1: $b3 vs $b1"; fail=1; }
check_error "batch must be >= 1" generate --model "$HF/llama" --prompt a --prompt b --batch 0
# --jsonl of --ids: the hash is of the whole sequence.
ids_line=$("$BIN" generate --model "$HF/gpt2" --ids "$prompt" --max-new-tokens 16 --jsonl)
case "$ids_line" in *'"finish_reason":"length"'*'"token_ids":[44,44,44,44,44,44,44,44,44,44,44,44,44,44,44,44]'*) ;;
  *) echo "FAIL: --ids --jsonl: $ids_line"; fail=1 ;; esac
check_error "stream takes one prompt" generate --model "$HF/llama" --prompt a --prompt b --stream
: >"$tmp/empty.txt"
check_error "holds no prompt" generate --model "$HF/llama" --prompts-file "$tmp/empty.txt"
check_error "not an integer" logits --model "$HF/gpt2" --ids 1,x --out "$tmp/c.safetensors"

# --chat: each prompt is a user turn of the model folder's chat template (a ChatML template in a
# folder of links to the llama fixture), encoded without special tokens: the same tokens as --ids of
# `tokenizer chat --ids`, and the plain output starts with the rendered prompt.
mkdir -p "$tmp/chat"
for f in config.json model.safetensors generation_config.json; do ln -s "$(cd "$HF/llama" && pwd)/$f" "$tmp/chat/$f"; done
ln -s "$(cd "$HF" && pwd)/tokenizer.json" "$tmp/chat/tokenizer.json"
cat >"$tmp/chat/tokenizer_config.json" <<'JSON'
{"chat_template": "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}", "eos_token": "<|im_end|>"}
JSON
printf '[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "def main():"}]' >"$tmp/conv.json"
chat_ids=$("$BIN" tokenizer chat --model "$tmp/chat" --messages "$tmp/conv.json" --generation-prompt --ids)
by_chat=$("$BIN" generate --model "$tmp/chat" --chat --system "Be brief." --prompt "def main():" --max-new-tokens 6 --jsonl)
by_ids=$("$BIN" generate --model "$tmp/chat" --ids "$chat_ids" --max-new-tokens 6 --jsonl)
[ -n "$chat_ids" ] && [ "${by_chat#*\"token_ids\":}" = "${by_ids#*\"token_ids\":}" ] ||
  { echo "FAIL: --chat tokens differ from the rendered prompt's ids: $by_chat vs $by_ids"; fail=1; }
text=$("$BIN" generate --model "$tmp/chat" --chat --prompt "def main():" --max-new-tokens 4)
want_start=$(printf '<|im_start|>user\ndef main():<|im_end|>\n<|im_start|>assistant\n')
case "$text" in "$want_start"*) ;; *) echo "FAIL: --chat output does not start with the rendered prompt: '$text'"; fail=1 ;; esac
two=$("$BIN" generate --model "$tmp/chat" --chat --prompt "def main():" --prompt "import os" --max-new-tokens 3)
[ "$(printf '%s\n' "$two" | wc -l)" = 2 ] || { echo "FAIL: --chat with two prompts: $two"; fail=1; }
check_error "no chat template" generate --model "$HF/llama" --chat --prompt x
check_error "system needs --chat" generate --model "$HF/llama" --system x --prompt x
check_error "chat needs --prompt" generate --model "$tmp/chat" --chat --ids 1,2

rm -rf "$tmp"
[ $fail -eq 0 ] && echo "llm cli: all checks passed"
exit $fail
