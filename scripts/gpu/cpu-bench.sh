#!/usr/bin/env bash
# CPU bandwidth and AVX2 GEMM partition on the GPU machine's host CPU (16 cores, AVX-512).
# Run from the repo root after scripts/gpu/build.sh -DBITLEARN_BENCH=ON (build-gpu/):
#   1. CPU GEMM, norm, reduce and softmax conformance with the automatic ISA and with BITLEARN_ISA=avx2 (16 cores);
#   2. `bitlearn verify` full and quick with BITLEARN_ISA=avx2 at 16 threads (expected digests);
#   3. bench_gemm vs OpenBLAS at 16 threads, BITLEARN_ISA=avx2, OpenBLAS forced to its AVX2
#      (Haswell) kernels and with its own choice (bench/gemm_ratio.py, interleaved, medians);
#   4. bench_reduce: every op's bandwidth against memcpy on the same pool, 16 then 1 thread.
# Summary in $OUT/cpu-bench.log (PASS/FAIL per item, the figures); full outputs beside it.
# Exits 0 always.
cd "$(dirname "$0")/../.." || exit 0
OUT="${OUT:-.}"
LOG="$OUT/cpu-bench.log"
B="${BUILD_DIR:-build-gpu}"
FULL=052cbdeaecb8203bc08b8939199cd21ffb885ade0a5a8e2fac38af9645bb958d
QUICK=21aa768bce3e27e8f7e18e35454352409e55ab52917c588faef2e6fbf686c751
START=$(date +%s)
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo "$(( $(date +%s) - START )) s"; }

say "== cpu-bench: $(date -u +%FT%TZ) cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cores"
say "load: $(cut -d' ' -f1-3 /proc/loadavg); L3: $(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null)"

# 1. conformance
if [ -x "$B/tests/bitlearn_tests" ]; then
  for isa in auto avx2; do
    if [ "$isa" = auto ]; then env_isa=(env -u BITLEARN_ISA); else env_isa=(env BITLEARN_ISA=$isa); fi
    "${env_isa[@]}" timeout 60 "$B/tests/bitlearn_tests" \
      --gtest_filter='MatmulConformance.*:MatmulOps.*:MatmulPackedConformance.*:SkinnyMatmul*:NormConformance.*:ReduceConformance*:SoftmaxConformance*' \
      > "$OUT/cpu-bench_tests_$isa.txt" 2>&1
    rc=$?
    summary=$(grep -E "^\[  (PASSED|FAILED) " "$OUT/cpu-bench_tests_$isa.txt" | tr '\n' ' ')
    [ $rc -eq 0 ] && say "PASS matmul+norm+reduce conformance isa=$isa: $summary ($(elapsed))" ||
      { say "FAIL matmul+norm+reduce conformance isa=$isa (rc $rc): $summary"; grep -E "^\[  FAILED|first diff" "$OUT/cpu-bench_tests_$isa.txt" | head -10 | tee -a "$LOG"; }
  done
else
  say "FAIL missing $B/tests/bitlearn_tests"
fi

# 2. verify digests with the AVX2 variant at 16 threads
if [ -x "$B/bitlearn" ]; then
  for mode in full quick; do
    flag=(); want=$FULL
    [ $mode = quick ] && { flag=(--quick); want=$QUICK; }
    BITLEARN_ISA=avx2 timeout 60 "$B/bitlearn" verify --device cpu --threads 16 "${flag[@]}" \
      > "$OUT/cpu-bench_verify_$mode.txt" 2>&1
    got=$(grep -E "^digest:" "$OUT/cpu-bench_verify_$mode.txt" | awk '{print $2}')
    [ "$got" = "$want" ] && say "PASS verify $mode avx2 threads=16 digest $got ($(elapsed))" ||
      say "FAIL verify $mode avx2 threads=16 digest '$got' expected $want"
  done
else
  say "FAIL missing $B/bitlearn"
fi

# 3. GEMM vs OpenBLAS, 16 threads, our AVX2 variant
if [ -x "$B/bench/bench_gemm" ] && command -v python3 > /dev/null; then
  filter='M:(1024/N:1024/K:1024|2048/N:2048/K:2048|4096/N:4096/K:4096|8192/N:768/K:3072)/'
  for core in Haswell default; do
    if [ $core = default ]; then env_core=(env -u OPENBLAS_CORETYPE); else env_core=(env OPENBLAS_CORETYPE=$core); fi
    name=$("${env_core[@]}" python3 -c "import ctypes,ctypes.util
l=ctypes.CDLL(ctypes.util.find_library('openblas') or 'libopenblas.so.0'); l.openblas_get_corename.restype=ctypes.c_char_p
print(l.openblas_get_corename().decode())" 2>/dev/null)
    say "-- gemm: bitlearn BITLEARN_ISA=avx2 vs OpenBLAS core '${name:-?}' (OPENBLAS_CORETYPE=$core), 16 threads"
    "${env_core[@]}" BITLEARN_ISA=avx2 BITLEARN_BENCH_THREADS=16 timeout 60 python3 bench/gemm_ratio.py \
      "$B/bench/bench_gemm" --filter "$filter" --repetitions 3 --min-time 0.2 \
      > "$OUT/cpu-bench_gemm_$core.txt" 2>&1
    rc=$?
    grep -E "^(load|M:)" "$OUT/cpu-bench_gemm_$core.txt" | tee -a "$LOG"
    [ $rc -eq 0 ] && say "PASS gemm ratio run ($core) ($(elapsed))" || say "FAIL gemm ratio run ($core) rc=$rc"
  done
else
  say "FAIL missing $B/bench/bench_gemm or python3"
fi

# 4. bandwidth of reductions / row ops / maps against memcpy on the same pool
if [ -x "$B/bench/bench_reduce" ]; then
  BITLEARN_BENCH_THREADS=16,1 BITLEARN_BENCH_FLOATS=268435456 BITLEARN_BENCH_REPS=3 \
    timeout 100 "$B/bench/bench_reduce" > "$OUT/cpu-bench_reduce.txt" 2>&1
  rc=$?
  tee -a "$LOG" < "$OUT/cpu-bench_reduce.txt"
  [ $rc -eq 0 ] && say "PASS bench_reduce ($(elapsed))" || say "FAIL bench_reduce rc=$rc ($(elapsed))"
else
  say "FAIL missing $B/bench/bench_reduce"
fi
say "done in $(elapsed); load $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
