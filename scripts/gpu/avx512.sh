#!/usr/bin/env bash
# The AVX-512 CPU kernels on the GPU machine's host CPU (Intel Xeon with AVX-512), after
# scripts/gpu/build.sh built build-gpu/: `bitlearn doctor`, the CPU conformance tests with
# BITLEARN_ISA=avx512 and with the automatic choice, `bitlearn verify` (full) with
# BITLEARN_ISA=scalar|avx2|avx512 at 1 and 16 threads (all digests must be equal), then the GEMM
# against OpenBLAS at 1 and 16 threads with our avx2 and avx512 variants (bench/gemm_ratio.py,
# medians of interleaved repetitions), then math maps and reductions with both variants. Summary
# in $OUT/avx512.log, one PASS/FAIL line per item; exit 0 always. About 3-4 minutes on 16 cores.
set -u
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp}"
LOG="$OUT/avx512.log"
B="${BUILD_DIR:-build-gpu}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }

say "== avx512: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null)"
say "cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
say "avx512 flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep '^avx512' | sort | tr '\n' ' ')"
if [ ! -x "$B/bitlearn" ] || [ ! -x "$B/tests/bitlearn_tests" ]; then
  say "FAIL missing $B/bitlearn or $B/tests/bitlearn_tests (run scripts/gpu/build.sh first)"
  exit 0
fi

# 1. doctor: the automatic choice must be avx512 here, and the AVX-512 build must not contract.
"$B/bitlearn" doctor > "$OUT/avx512_doctor.txt" 2>&1
rc=$?
grep -iE "kernel variant|contraction probe|isa " "$OUT/avx512_doctor.txt" | sed 's/^ */  /' | tee -a "$LOG"
if grep -qiE "kernel variant.*avx512" "$OUT/avx512_doctor.txt" &&
   grep -iE "contraction probe \(avx512\)" "$OUT/avx512_doctor.txt" | grep -qivE "fail|skip"; then
  say "PASS doctor (rc $rc): auto variant avx512, avx512 contraction probe ok"
else
  say "FAIL doctor (rc $rc): auto variant is not avx512 or the avx512 contraction probe failed"
fi

# 2. conformance tests (every CPU kernel against its reference, memcmp) with avx512 forced and
#    with the automatic choice; the Isa / Verify / contraction tests with them.
filter='*Conformance*:*Isa*:Verify*:Contraction.*:*Reduce*:*Softmax*:*MathMap*:*Skinny*'
for isa in avx512 auto; do
  if [ "$isa" = auto ]; then env_isa=(env -u BITLEARN_ISA); else env_isa=(env BITLEARN_ISA=$isa); fi
  "${env_isa[@]}" timeout 150 "$B/tests/bitlearn_tests" --gtest_filter="$filter" \
    > "$OUT/avx512_tests_$isa.txt" 2>&1
  rc=$?
  summary=$(grep -E "^\[  (PASSED|FAILED) |tests? ran" "$OUT/avx512_tests_$isa.txt" | tr '\n' ' ')
  if [ $rc -eq 0 ]; then
    say "PASS conformance tests BITLEARN_ISA=$isa: $summary ($(elapsed))"
  else
    say "FAIL conformance tests BITLEARN_ISA=$isa (rc $rc): $summary"
    grep -E "^\[  FAILED  \]" "$OUT/avx512_tests_$isa.txt" | head -20 | sed 's/^/  /' | tee -a "$LOG"
  fi
done

# 3. verify (full) with every variant at 1 and 16 threads: one digest, and each run IDENTICAL to
#    the expected hashes.
digests=()
for isa in scalar avx2 avx512; do
  for t in 1 16; do
    BITLEARN_ISA=$isa timeout 120 "$B/bitlearn" verify --device cpu --threads "$t" \
      > "$OUT/avx512_verify_${isa}_t$t.txt" 2>&1
    rc=$?
    d=$(awk '/^digest:/ {print $2}' "$OUT/avx512_verify_${isa}_t$t.txt")
    digests+=("$d")
    if [ $rc -eq 0 ]; then
      say "PASS verify isa=$isa threads=$t: digest $d ($(elapsed))"
    else
      say "FAIL verify isa=$isa threads=$t (rc $rc): digest $d"
      grep -E "DIVERGENT|SKIPPED" "$OUT/avx512_verify_${isa}_t$t.txt" | head -10 | sed 's/^/  /' | tee -a "$LOG"
    fi
  done
done
same=1
for d in "${digests[@]}"; do [ -n "$d" ] && [ "$d" = "${digests[0]}" ] || same=0; done
[ $same -eq 1 ] && say "PASS verify digests: ${#digests[@]} runs, one digest ${digests[0]}" ||
  say "FAIL verify digests differ across ISA variants / thread counts: ${digests[*]}"

# 4. GEMM vs OpenBLAS at 1 and 16 threads, ours with the avx2 and the avx512 variant.
if [ ! -x "$B/bench/bench_gemm" ]; then
  say "FAIL missing $B/bench/bench_gemm (build with -DBITLEARN_BENCH=ON)"
  exit 0
fi
gemm_filter='M:(1024/N:1024/K:1024|2048/N:2048/K:2048|4096/N:4096/K:4096|8192/N:768/K:3072|8192/N:3072/K:768|8192/N:768/K:768)/'
for isa in avx2 avx512; do
  BITLEARN_ISA=$isa BITLEARN_BENCH_THREADS=1,16 timeout 170 python3 bench/gemm_ratio.py \
    "$B/bench/bench_gemm" --filter "$gemm_filter" --repetitions 3 --min-time 0.2 \
    > "$OUT/avx512_gemm_$isa.txt" 2>&1
  rc=$?
  say "-- GEMM, ours = $isa variant, 1 and 16 threads:"
  sed 's/^/  /' "$OUT/avx512_gemm_$isa.txt" | tee -a "$LOG"
  [ $rc -eq 0 ] && say "PASS gemm ratio run isa=$isa ($(elapsed))" || say "FAIL gemm ratio run isa=$isa (rc $rc)"
done

# 5. Math maps and reductions, avx2 vs avx512 (1-thread math maps; sum and softmax at 16 threads).
if [ -x "$B/bench/bench_math" ] && [ -x "$B/bench/bench_reduce" ]; then
  for isa in avx2 avx512; do
    BITLEARN_ISA=$isa timeout 60 "$B/bench/bench_math" --benchmark_filter='^bl/(exp|log|tanh|sigmoid|gelu|erf|sin)$' \
      --benchmark_min_time=0.1 --benchmark_color=false > "$OUT/avx512_math_$isa.txt" 2>&1
    rc1=$?
    BITLEARN_ISA=$isa BITLEARN_THREADS=16 timeout 60 "$B/bench/bench_reduce" --benchmark_filter='^$' \
      > "$OUT/avx512_reduce_$isa.txt" 2>&1
    rc2=$?
    say "-- math maps (items/s, 1 thread) and reductions, isa=$isa:"
    grep -E "^(exp|log|tanh|sigmoid|gelu|erf|sin) " "$OUT/avx512_math_$isa.txt" | awk '{print "  " $1, $2 " values/s"}' | tee -a "$LOG"
    grep -E "^(threads|memcpy|sum|softmax)" "$OUT/avx512_reduce_$isa.txt" | sed 's/^/  /' | tee -a "$LOG"
    [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && say "PASS math/reduce bench isa=$isa ($(elapsed))" ||
      say "FAIL math/reduce bench isa=$isa (rc $rc1/$rc2)"
  done
fi

# 6. GPT-2 124M shaped model (random weights) on the CPU, 16 threads: prefill of 128 tokens (full
#    GEMM, M = 128) and 32 decode steps (skinny GEMM), avx2 and avx512 alternated twice.
if [ -x "$B/bench/bench_llm" ]; then
  for round in 1 2; do
    for isa in avx2 avx512; do
      BITLEARN_ISA=$isa BITLEARN_THREADS=16 BL_LLM_ONLY=gpt2-124m timeout 90 "$B/bench/bench_llm" \
        --benchmark_min_time=0.5 --benchmark_color=false > "$OUT/avx512_llm_${isa}_$round.txt" 2>&1
      rc=$?
      line=$(grep -E "^(prefill|decode)/" "$OUT/avx512_llm_${isa}_$round.txt" |
             sed -E 's/^([^ ]+) .*tokens_per_s=([0-9.]+[kMG]?).*/\1 \2 tok\/s/' | tr '\n' ' ')
      [ $rc -eq 0 ] && say "PASS llm isa=$isa round $round: $line ($(elapsed))" ||
        say "FAIL llm isa=$isa round $round (rc $rc): $line"
    done
  done
fi
say "== avx512 done in $(elapsed)"
exit 0
