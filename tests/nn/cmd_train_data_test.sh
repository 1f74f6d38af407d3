#!/usr/bin/env bash
# `bitlearn train --model mlp|cnn` on the user's data, as a user meets it: a CSV file (classes and
# --task regression), folders of class subfolders of PGM (grey) and PPM (colour) images and IDX
# files train; the checkpoint
# has the same bytes at --threads 1, 2 and 3, after --stop-at + --resume and with periodic saves;
# the per-class report and the loss-curve SVG come out; `bitlearn predict` reads the checkpoint of a
# CSV file; wrong input gets a clear message (exit 2).
# Usage: cmd_train_data_test.sh /path/to/bitlearn /path/to/repo
set -u
BIN="$1"
DATA="$2/tests/data/ml_linear"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
source "$(dirname "$0")/../cli_expect.sh"
train="$DATA/breast_cancer_train.csv"
test="$DATA/breast_cancer_test.csv"
csv() { "$BIN" train --model mlp --data "$train" --target target --steps 120 "$@"; }

# --- a CSV classifier: identical checkpoints at 1, 2 and 3 threads, on resume, with periodic saves ---
for t in 1 2 3; do
  csv --threads $t --checkpoint "$tmp/t$t.safetensors" >"$tmp/out$t" 2>&1 || { echo "FAIL: CSV train at $t threads:"; cat "$tmp/out$t"; fail=1; }
done
h1=$(sha256sum <"$tmp/t1.safetensors")
for t in 2 3; do
  [ "$(sha256sum <"$tmp/t$t.safetensors")" = "$h1" ] || { echo "FAIL: the checkpoint at $t threads differs from 1 thread"; fail=1; }
done
cmp -s <(grep -v '^model\|steps run\|^checkpoint\|^loss curve' "$tmp/out1") \
  <(grep -v '^model\|steps run\|^checkpoint\|^loss curve' "$tmp/out3") ||
  { echo "FAIL: the printed losses or report differ between 1 and 3 threads"; fail=1; }
csv --stop-at 50 --checkpoint "$tmp/r.safetensors" >"$tmp/out" 2>&1
grep -q "^stopped after step 50" "$tmp/out" || { echo "FAIL: --stop-at 50 not reported:"; cat "$tmp/out"; fail=1; }
csv --resume --threads 2 --checkpoint "$tmp/r.safetensors" >"$tmp/out" 2>&1
grep -q "^resumed from $tmp/r.safetensors after step 50$" "$tmp/out" || { echo "FAIL: the resume does not name its step:"; cat "$tmp/out"; fail=1; }
[ "$(sha256sum <"$tmp/r.safetensors")" = "$h1" ] || { echo "FAIL: --stop-at 50 + --resume differs from one run"; fail=1; }
csv --checkpoint-every 40 --checkpoint "$tmp/p.safetensors" >/dev/null 2>&1
[ "$(sha256sum <"$tmp/p.safetensors")" = "$h1" ] || { echo "FAIL: --checkpoint-every changed the final checkpoint"; fail=1; }

# --- what a run prints and writes ---
o="$tmp/out1"
grep -q "^model mlp (.*), optimizer adamw, " "$o" || { echo "FAIL: the first line does not name the optimizer:"; cat "$o"; fail=1; }
grep -q "^data .*: 341 training rows, 85 validation rows, 30 features, target 'target', 2 classes$" "$o" ||
  { echo "FAIL: the data line (--val-fraction 0.2 of 426 rows):"; cat "$o"; fail=1; }
grep -q "^class  *precision  recall  *f1  support$" "$o" || { echo "FAIL: no per-class report:"; cat "$o"; fail=1; }
grep -q "^macro avg " "$o" || { echo "FAIL: no macro average:"; cat "$o"; fail=1; }
acc=$(sed -n 's/^validation accuracy: //p' "$o")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || { echo "FAIL: validation accuracy '$acc' below 0.9"; fail=1; }
[ "$(grep -c '<polyline' "$tmp/t1.svg" 2>/dev/null)" = 2 ] || { echo "FAIL: no train + validation curves in t1.svg"; fail=1; }
grep -q "^loss curve $tmp/t1.svg$" "$o" || { echo "FAIL: the curve's path is not printed"; fail=1; }

# --- a held-out CSV (--test), the other optimizers, --depth, --epochs; predict with the checkpoint ---
csv --test "$test" --optimizer adam --depth 3 --width 32 --checkpoint "$tmp/c.safetensors" >"$tmp/out" 2>&1
acc=$(sed -n 's/^test accuracy: //p' "$tmp/out")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || { echo "FAIL: test accuracy '$acc' below 0.9:"; cat "$tmp/out"; fail=1; }
"$BIN" predict --model "$tmp/c.safetensors" --data "$test" --out "$tmp/pred.csv" || { echo "FAIL: predict with a checkpoint"; fail=1; }
pacc=$(paste -d, "$tmp/pred.csv" <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "target") c = i } { print $c }' "$test") |
  awk -F, 'NR > 1 { n++; if ($1 + 0 == $2 + 0) k++ } END { printf "%.4f", k / n }')
[ "$pacc" = "$acc" ] || { echo "FAIL: predict's accuracy $pacc is not the report's $acc"; fail=1; }
"$BIN" predict --model "$tmp/c.safetensors" --data "$test" --out "$tmp/proba.csv" --output proba &&
  [ "$(head -1 "$tmp/proba.csv")" = "proba_0,proba_1" ] || { echo "FAIL: predict --output proba header: $(head -1 "$tmp/proba.csv")"; fail=1; }
for opt in sgd momentum; do
  "$BIN" train --data "$train" --target target --optimizer $opt --epochs 2 >"$tmp/out" 2>&1 && grep -q "optimizer $opt, .*, steps 10, batch 64$" "$tmp/out" ||
    { echo "FAIL: --optimizer $opt --epochs 2:"; cat "$tmp/out"; fail=1; }
done

# --- text features one-hot encoded (--categorical), a column left out (--ignore) ---
awk 'BEGIN { print "id,x,colour,label"; for (i = 0; i < 120; i++) { x = (i * 37 % 101) / 25 - 2; c = i % 3 == 0 ? "red" : i % 3 == 1 ? "green" : "blue";
  print i "," x "," c "," (x + (c == "red" ? 1.5 : 0) > 0.3 ? "yes" : "no") } }' >"$tmp/cat.csv"
"$BIN" train --data "$tmp/cat.csv" --target label --categorical colour --ignore id --steps 200 --checkpoint "$tmp/cat.safetensors" >"$tmp/out" 2>&1 &&
  grep -q "96 training rows, 24 validation rows, 4 features, target 'label', 2 classes" "$tmp/out" ||
  { echo "FAIL: --categorical colour --ignore id:"; cat "$tmp/out"; fail=1; }
"$BIN" predict --model "$tmp/cat.safetensors" --data "$tmp/cat.csv" --out "$tmp/catp.csv" &&
  [ "$(paste -d, "$tmp/catp.csv" <(cut -d, -f4 "$tmp/cat.csv") | awk -F, 'NR > 1 && $1 != $2' | wc -l)" -le 6 ] ||
  { echo "FAIL: predict with a one-hot checkpoint"; fail=1; }
printf 'id,x,colour,label\n1,0.5,purple,yes\n' >"$tmp/purple.csv"
expect 2 "column 'colour' holds 'purple', a category the model was not fitted on" \
  "$BIN" predict --model "$tmp/cat.safetensors" --data "$tmp/purple.csv" --out "$tmp/x.csv"

# --- regression ---
reg() { "$BIN" train --model mlp --data "$DATA/diabetes_train.csv" --target target --task regression --steps 100 "$@"; }
reg --threads 1 --checkpoint "$tmp/g1.safetensors" >"$tmp/out" 2>&1 && reg --threads 3 --checkpoint "$tmp/g3.safetensors" >/dev/null 2>&1
cmp -s "$tmp/g1.safetensors" "$tmp/g3.safetensors" || { echo "FAIL: regression checkpoints differ at 1 and 3 threads"; fail=1; }
grep -q "^validation report (.* rows): R^2 " "$tmp/out" || { echo "FAIL: no regression report:"; cat "$tmp/out"; fail=1; }
"$BIN" predict --model "$tmp/g1.safetensors" --data "$DATA/diabetes_test.csv" --out "$tmp/gp.csv" &&
  [ "$(head -1 "$tmp/gp.csv")" = target ] && [ "$(wc -l <"$tmp/gp.csv")" = "$(wc -l <"$DATA/diabetes_test.csv")" ] ||
  { echo "FAIL: predict with a regression checkpoint"; fail=1; }

# --- a folder of PGM images (4x4, two classes) and the same images as IDX files (PNG decoding through
# libpng: tests/nn/test_image_folder.cpp) ---
img="$tmp/img"
mkdir -p "$img/bright" "$img/dark"
for i in 1 2 3 4 5 6 7 8 9 10; do
  printf 'P5\n# a comment\n4 4\n255\n' >"$img/dark/$i.pgm"
  printf 'P5\n4 4\n255\n' >"$img/bright/$i.pgm"
  for p in $(seq 1 16); do
    printf "\\$(printf '%03o' $(( (i * 7 + p * 3) % 60 )))" >>"$img/dark/$i.pgm"
    printf "\\$(printf '%03o' $(( 250 - (i * 5 + p * 11) % 60 )))" >>"$img/bright/$i.pgm"
  done
done
for m in mlp cnn; do
  for t in 1 2; do
    "$BIN" train --model $m --data "$img" --width 4 --steps 30 --batch 4 --threads $t --checkpoint "$tmp/$m$t.safetensors" >"$tmp/out" 2>&1 ||
      { echo "FAIL: --model $m on an image folder:"; cat "$tmp/out"; fail=1; }
  done
  cmp -s "$tmp/${m}1.safetensors" "$tmp/${m}2.safetensors" || { echo "FAIL: --model $m on images differs at 1 and 2 threads"; fail=1; }
  grep -q "^data $img: 16 training images, 4 validation images, 4x4x1, 2 classes$" "$tmp/out" ||
    { echo "FAIL: the image data line:"; cat "$tmp/out"; fail=1; }
  grep -q "^bright " "$tmp/out" || { echo "FAIL: the report does not name the class folders:"; cat "$tmp/out"; fail=1; }
done
# colour images (binary PPM): red-ish and blue-ish 4x4 squares; the CNN and the MLP read 3 channels
col="$tmp/colour"
mkdir -p "$col/red" "$col/blue"
for i in 1 2 3 4 5 6 7 8 9 10; do
  printf 'P6\n4 4\n255\n' >"$col/red/$i.ppm"
  printf 'P6\n4 4\n255\n' >"$col/blue/$i.ppm"
  for p in $(seq 1 16); do
    v=$(( (i * 7 + p * 3) % 60 ))
    printf "\\$(printf '%03o' $(( 200 + v % 50 )))\\$(printf '%03o' $v)\\$(printf '%03o' $(( v / 2 )))" >>"$col/red/$i.ppm"
    printf "\\$(printf '%03o' $(( v / 2 )))\\$(printf '%03o' $v)\\$(printf '%03o' $(( 200 + v % 50 )))" >>"$col/blue/$i.ppm"
  done
done
for m in cnn mlp lstm; do
  for t in 1 3; do
    "$BIN" train --model $m --data "$col" --width 4 --steps 40 --batch 4 --threads $t --checkpoint "$tmp/c$m$t.safetensors" >"$tmp/out" 2>&1 ||
      { echo "FAIL: --model $m on colour images:"; cat "$tmp/out"; fail=1; }
  done
  cmp -s "$tmp/c${m}1.safetensors" "$tmp/c${m}3.safetensors" || { echo "FAIL: --model $m on colour images differs at 1 and 3 threads"; fail=1; }
  grep -q "^data $col: 16 training images, 4 validation images, 4x4x3, 2 classes$" "$tmp/out" ||
    { echo "FAIL: the colour image data line:"; cat "$tmp/out"; fail=1; }
  grep -q "^validation accuracy: 1.0000$" "$tmp/out" ||
    { echo "FAIL: --model $m does not separate the colour classes:"; cat "$tmp/out"; fail=1; }
done
{ printf '\0\0\010\003\0\0\0\024\0\0\0\004\0\0\0\004'; for f in "$img"/bright/*.pgm "$img"/dark/*.pgm; do tail -c 16 "$f"; done; } >"$tmp/x.idx3"
{ printf '\0\0\010\001\0\0\0\024'; for i in $(seq 10); do printf '\0'; done; for i in $(seq 10); do printf '\001'; done; } >"$tmp/y.idx1"
"$BIN" train --model mlp --data "$tmp/x.idx3" --labels "$tmp/y.idx1" --width 4 --steps 30 --batch 4 --checkpoint "$tmp/idx.safetensors" >"$tmp/out" 2>&1 ||
  { echo "FAIL: IDX files with --labels:"; cat "$tmp/out"; fail=1; }
grep -q "^data $tmp/x.idx3: 16 training images, 4 validation images, 4x4x1, 2 classes$" "$tmp/out" ||
  { echo "FAIL: the IDX data line:"; cat "$tmp/out"; fail=1; }

# --- messages ---
printf 'a,b,y\n1,2,x\n3,4,z\n5,6,x\n7,8,z\n' >"$tmp/s.csv"
printf 'a,b,y\n1,foo,x\n3,4,z\n' >"$tmp/text.csv"
printf 'a,b,y\n1,2,x\n3,4,x\n' >"$tmp/one.csv"
printf 'a,b,y\n1,,x\n3,4,z\n' >"$tmp/nan.csv"
printf 'a,b,y\n1,2,q\n' >"$tmp/unseen.csv"
expect 2 "s.csv: target column 'w' not found (columns: a, b, y)" "$BIN" train --data "$tmp/s.csv" --target w
expect 2 "text.csv: line 2, column 'b' (2): 'foo' is not a number" "$BIN" train --data "$tmp/text.csv" --target y
expect 2 "one.csv: target column 'y' holds one class only ('x'); a classifier needs at least two" \
  "$BIN" train --data "$tmp/one.csv" --target y
expect 2 "nan.csv: feature column 'b' is missing on data row 1 (line 2)" "$BIN" train --data "$tmp/nan.csv" --target y
expect 2 "is read as a CSV file and needs --target COLUMN" "$BIN" train --data "$tmp/s.csv"
expect 2 "--data $tmp/nowhere.csv: no such file or folder" "$BIN" train --data "$tmp/nowhere.csv" --target y
expect 2 "unseen.csv: class 'q' of data row 1 is not one of the training classes" \
  "$BIN" train --data "$tmp/s.csv" --target y --test "$tmp/unseen.csv" --batch 2 --steps 1
expect 2 "holds text ('x', ...); --task regression needs a numeric target" \
  "$BIN" train --data "$tmp/s.csv" --target y --task regression
expect 2 "--model cnn takes square images (grey or colour)" "$BIN" train --model cnn --data "$tmp/s.csv" --target y
expect 2 "--target applies only with --data of your own" "$BIN" train --target y
expect 2 "--model lstm on a CSV file needs --time-steps T" \
  "$BIN" train --model lstm --data "$tmp/s.csv" --target y
expect 2 "--optimizer must be sgd, momentum, adam or adamw, got 'lion'" \
  "$BIN" train --data "$tmp/s.csv" --target y --optimizer lion
expect 2 "--val-fraction must lie strictly between 0 and 1, got 1" \
  "$BIN" train --data "$tmp/s.csv" --target y --val-fraction 1
expect 2 "--resume: checkpoint '$tmp/t1.safetensors' was trained with another --seed" \
  "$BIN" train --data "$train" --target target --steps 120 --seed 2 --resume --checkpoint "$tmp/t1.safetensors"
expect 2 "--resume: checkpoint '$tmp/t1.safetensors' was trained on other data or another network" \
  "$BIN" train --data "$train" --target target --steps 120 --width 8 --resume --checkpoint "$tmp/t1.safetensors"
mkdir -p "$tmp/empty" "$tmp/single/a" "$tmp/mixed/a" "$tmp/mixed/b" "$tmp/noimg/a" "$tmp/noimg/b" "$tmp/png/a" "$tmp/png/b"
printf 'P5\n2 2\n255\nabcd' >"$tmp/mixed/a/1.pgm"
printf 'P5\n3 2\n255\nabcdef' >"$tmp/mixed/b/1.pgm"
cp "$tmp/mixed/a/1.pgm" "$tmp/single/a/"
cp "$tmp/mixed/a/1.pgm" "$tmp/noimg/a/"
cp "$tmp/mixed/a/1.pgm" "$tmp/png/b/"
printf 'PNG' >"$tmp/png/a/1.png"
expect 2 "'$tmp/mixed/b/1.pgm' is 3x2x1 but '$tmp/mixed/a/1.pgm' is 2x2x1 (width x height x channels); every image must have the same size" \
  "$BIN" train --data "$tmp/mixed"
expect 2 "image folder '$tmp/empty' holds no class subfolders" "$BIN" train --data "$tmp/empty"
expect 2 "image folder '$tmp/single' holds one class only ('a')" "$BIN" train --data "$tmp/single"
expect 2 "class folder '$tmp/noimg/b' holds no images" "$BIN" train --data "$tmp/noimg"
expect 2 "$tmp/png/a/1.png: not a PNG file (bad signature)" "$BIN" train --data "$tmp/png"
printf '\211PNG\r\n\032\n....' >"$tmp/png/a/1.png"  # a PNG signature, then no header
"$BIN" train --data "$tmp/png" >"$tmp/out" 2>&1
grep -qE "$tmp/png/a/1.png: (not a readable PNG|this build has no PNG support: install libpng-dev)" "$tmp/out" ||
  { echo "FAIL: a damaged PNG:"; cat "$tmp/out"; fail=1; }
mv "$tmp/png/a/1.png" "$tmp/png/a/1.jpg"
expect 2 "'$tmp/png/a/1.jpg': only PNG and binary PGM/PPM images (.png, .pgm, .ppm) are read" "$BIN" train --data "$tmp/png"
expect 2 "a checkpoint trained on images; predict reads CSV rows" \
  "$BIN" predict --model "$tmp/mlp1.safetensors" --data "$test" --out "$tmp/x.csv"

[ $fail -eq 0 ] && echo "PASS: train on CSV, image folders and IDX files: identical checkpoints, reports, curves, predict, messages"
exit $fail
