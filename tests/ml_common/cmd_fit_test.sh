#!/usr/bin/env bash
# `bitlearn fit`, `predict`, `evaluate` and `inspect` as a user meets them: an iterative solver stopped
# by max_iter warns (with --quiet too) and a converged one does not; --features / --ignore pick the
# columns and the summary names them; text class labels go in and come back out by name; inspect
# prints the SHA-256, trees as text, coefficients by feature and binary64 state as binary64; bad
# selections, unseen labels and a safetensors file given as a model get clear errors.
# Usage: cmd_fit_test.sh /path/to/bitlearn /path/to/repo
set -u
BIN="$1"
DATA="$2/tests/data/ml_linear"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
source "$(dirname "$0")/../cli_expect.sh"
train="$DATA/breast_cancer_std_train.csv"

# --- convergence warnings ---
expect 0 "warning: logistic_regression L-BFGS stopped at max_iter=2 before converging" \
  "$BIN" fit --model logistic_regression --data "$train" --target target --param max_iter=2 --out "$tmp/lr.json"
expect 0 "warning: logistic_regression L-BFGS stopped at max_iter=2" \
  "$BIN" fit --model logistic_regression --data "$train" --target target --param max_iter=2 --out "$tmp/lr.json" --quiet
"$BIN" fit --model logistic_regression --data "$train" --target target --out "$tmp/lr.json" 2>"$tmp/err" ||
  { echo "FAIL: default logistic_regression fit"; fail=1; }
grep -q "warning" "$tmp/err" && { echo "FAIL: a converged fit warned: $(cat "$tmp/err")"; fail=1; }
# stderr is not a terminal here: no progress bar (no carriage return), only the summary line.
grep -q $'\r' "$tmp/err" && { echo "FAIL: a progress bar was drawn into a file"; fail=1; }

# --- column selection ---
expect 0 "on 426 rows x 2 features (f3, f1), target target" \
  "$BIN" fit --model ridge --data "$train" --target target --features f3,f1 --out "$tmp/r.json"
grep -q '"feature_names": \[\s*"f3",\s*"f1"\s*\]' <(tr -d '\n' <"$tmp/r.json") ||
  { echo "FAIL: --features not recorded in the model file"; fail=1; }
"$BIN" predict --model "$tmp/r.json" --data "$DATA/breast_cancer_std_test.csv" --out "$tmp/p.csv" ||
  { echo "FAIL: predict with the selected columns"; fail=1; }
expect 0 "x 29 features (f0, f1, f2, f3, f4, f5, f6, f7, ... (21 more)), no target" \
  "$BIN" fit --model kmeans --data "$train" --ignore target,f29 --param n_clusters=2 --out "$tmp/k.json"
grep -q '"target"' <(tr -d '\n' <"$tmp/k.json" | grep -o '"feature_names": \[[^]]*\]') &&
  { echo "FAIL: --ignore target still used the target as a feature"; fail=1; }
expect 2 "--ignore names column 'nope'" \
  "$BIN" fit --model kmeans --data "$train" --ignore nope --out "$tmp/k.json"
expect 2 "excludes" \
  "$BIN" fit --model kmeans --data "$train" --ignore f1 --features f2 --out "$tmp/k.json"
expect 2 "--features names the target column 'target'" \
  "$BIN" fit --model ridge --data "$train" --target target --features f1,target --out "$tmp/r.json"
expect 2 "f99" "$BIN" fit --model ridge --data "$train" --target target --features f1,f99 --out "$tmp/r.json"

# --- predict given a safetensors file ---
printf '\x02\x00\x00\x00\x00\x00\x00\x00{}' >"$tmp/ckpt.safetensors"
expect 2 "a safetensors file (a \`bitlearn train\` checkpoint or model weights), not a model file of \`bitlearn fit\`" \
  "$BIN" predict --model "$tmp/ckpt.safetensors" --data "$DATA/breast_cancer_std_test.csv" --out "$tmp/p.csv"

# --- text class labels ---
for part in train test; do
  awk -F, 'BEGIN{OFS=","} NR==1{print; next} {t=$NF+0; $NF=(t==0?"barolo":(t==1?"grignolino":"\"barbera, old\"")); print}' \
    "$DATA/wine_$part.csv" >"$tmp/names_$part.csv"
done
"$BIN" fit --model logistic_regression --data "$tmp/names_train.csv" --target target --param max_iter=2000 \
  --out "$tmp/names.json" --quiet || { echo "FAIL: fit on text labels"; fail=1; }
"$BIN" predict --model "$tmp/names.json" --data "$tmp/names_test.csv" --out "$tmp/np.csv" &&
  [ "$(head -1 "$tmp/np.csv")" = target ] && grep -qx barolo "$tmp/np.csv" && grep -qx '"barbera, old"' "$tmp/np.csv" ||
  { echo "FAIL: predictions of text labels: $(head -3 "$tmp/np.csv")"; fail=1; }
"$BIN" predict --model "$tmp/names.json" --data "$tmp/names_test.csv" --out "$tmp/nq.csv" --output proba &&
  [ "$(head -1 "$tmp/nq.csv")" = '"proba_barbera, old",proba_barolo,proba_grignolino' ] ||
  { echo "FAIL: proba columns by label name: $(head -1 "$tmp/nq.csv")"; fail=1; }
"$BIN" evaluate --model "$tmp/names.json" --data "$tmp/names_test.csv" >"$tmp/ev.txt" &&
  grep -q "^grignolino " "$tmp/ev.txt" || { echo "FAIL: evaluate of text labels"; fail=1; }
sed 's/barolo$/nebbiolo/' "$tmp/names_test.csv" >"$tmp/names_new.csv"
expect 2 "label 'nebbiolo' was not among the labels at fit time" \
  "$BIN" evaluate --model "$tmp/names.json" --data "$tmp/names_new.csv"
expect 2 "only a classifier takes text labels" \
  "$BIN" fit --model ridge --data "$tmp/names_train.csv" --target target --out "$tmp/r.json"
expect 2 "'barolo' is not a number (a column of text can be a classifier's target, or a feature one-hot encoded with --categorical" \
  "$BIN" fit --model kmeans --data "$tmp/names_train.csv" --out "$tmp/k.json"
"$BIN" fit --model kmeans --data "$tmp/names_train.csv" --ignore target --out "$tmp/k.json" --quiet ||
  { echo "FAIL: --ignore of a text column"; fail=1; }

# --- inspect ---
"$BIN" fit --model decision_tree_classifier --data "$DATA/wine_train.csv" --target target --param max_depth=2 \
  --out "$tmp/t.json" --quiet
"$BIN" inspect "$tmp/t.json" >"$tmp/ins.txt" || { echo "FAIL: inspect of a tree"; fail=1; }
grep -q "^sha256       $(sha256sum "$tmp/t.json" | cut -c1-64)$" "$tmp/ins.txt" || { echo "FAIL: inspect's sha256"; fail=1; }
grep -q "^|--- f[0-9]* <= " "$tmp/ins.txt" && grep -q "leaf .* -> class " "$tmp/ins.txt" ||
  { echo "FAIL: inspect's tree text: $(head -c 600 "$tmp/ins.txt")"; fail=1; }
grep -q "contract profile bitlearn.identical.v1" "$tmp/ins.txt" || { echo "FAIL: inspect's contract profile"; fail=1; }
expect 2 "--tree 3: the model has trees 0..0" "$BIN" inspect "$tmp/t.json" --tree 3
"$BIN" inspect "$tmp/lr.json" | grep -qE "^  f29 +-?[0-9]" || { echo "FAIL: inspect's coefficients by feature"; fail=1; }
expect 2 "not a model file of \`bitlearn fit\`" "$BIN" inspect "$tmp/ckpt.safetensors"
# binary64 state (fields named *_f64, and arima's): printed as binary64 in its shortest text, so 0.1 read
# as binary32 shows as 0.10000000149011612 (binary32 decoding would halve the count and print garbage).
{ echo y; echo 0.5; echo 0.1; for i in $(seq 1 40); do echo "$(((i * 7) % 11)).25"; done; } >"$tmp/series.csv"
for m in arima exponential_smoothing; do
  "$BIN" fit --model $m --data "$tmp/series.csv" --target y --out "$tmp/$m.json" --quiet ||
    { echo "FAIL: fit $m for inspect"; fail=1; }
done
"$BIN" inspect "$tmp/arima.json" --max-values 3 >"$tmp/ins_arima.txt"
grep -qE "^  y +42 binary64: \[0\.5, 0\.10000000149011612, 7\.25\] \.\.\.$" "$tmp/ins_arima.txt" &&
  grep -qE "^  sigma2 +1 binary64: \[[0-9.e+-]+\]$" "$tmp/ins_arima.txt" ||
  { echo "FAIL: inspect's binary64 state of arima: $(cat "$tmp/ins_arima.txt")"; fail=1; }
"$BIN" inspect "$tmp/exponential_smoothing.json" --max-values 3 >"$tmp/ins_es.txt"
grep -qE "^  series_f64 +42 binary64: \[0\.5, 0\.10000000149011612, 7\.25\] \.\.\.$" "$tmp/ins_es.txt" &&
  ! grep -q "binary32" "$tmp/ins_es.txt" ||
  { echo "FAIL: inspect's *_f64 state: $(cat "$tmp/ins_es.txt")"; fail=1; }

# --- predict --output decision / score_samples ---
"$BIN" fit --model svc --data "$DATA/wine_train.csv" --target target --out "$tmp/svc.json" --quiet
"$BIN" predict --model "$tmp/svc.json" --data "$DATA/wine_test.csv" --out "$tmp/dec.csv" --output decision ||
  { echo "FAIL: predict --output decision"; fail=1; }
[ "$(head -1 "$tmp/dec.csv")" = "decision_0,decision_1,decision_2" ] ||
  { echo "FAIL: decision columns: $(head -1 "$tmp/dec.csv")"; fail=1; }
"$BIN" fit --model kernel_density --data "$DATA/wine_train.csv" --ignore target --param bandwidth=scott \
  --out "$tmp/kde.json" --quiet
"$BIN" predict --model "$tmp/kde.json" --data "$DATA/wine_test.csv" --out "$tmp/kde.csv" --output score_samples ||
  { echo "FAIL: predict --output score_samples"; fail=1; }
[ "$(head -1 "$tmp/kde.csv")" = "score" ] && [ "$(wc -l <"$tmp/kde.csv")" -gt 2 ] ||
  { echo "FAIL: score_samples output: $(head -3 "$tmp/kde.csv")"; fail=1; }
expect 2 "kernel_density: predict is not supported" \
  "$BIN" predict --model "$tmp/kde.json" --data "$DATA/wine_test.csv" --out "$tmp/kde2.csv"
expect 2 "ridge: score_samples is not supported" \
  "$BIN" predict --model "$tmp/r.json" --data "$DATA/breast_cancer_std_test.csv" --out "$tmp/x.csv" --output score_samples

[ "$fail" = 0 ] && echo "cmd_fit_test: all passed"
exit "$fail"
