#!/usr/bin/env bash
# The GPU check: run from the repository root of a machine with an NVIDIA GPU.
#
#   bash scripts/gpu-check.sh [options]
#
# Steps (default: build,tests,verify,bench; each has its own time limit, capped by --budget):
#   build       configure + build build-gpu/ (Release, CUDA on, benchmarks on, -j$(nproc)). A host
#               without the PCRE2 / MPFR / GMP dev packages (the GPU machine) needs pcre2.h, mpfr.h
#               and gmp.h in .gpudeps/include: the project's CMake finds pcre2.h there, and with
#               mpfr.h there tools/math_check is built against the host's runtime MPFR and GMP
#   tests       ctest --test-dir build-gpu -L cuda -LE exhaustive: every CUDA test, one process each;
#               FAIL on any failure, on a test that skipped for want of a device, or when none ran.
#               Without --quick the allocator and scratch tests run again with BITLEARN_CUDA_CACHE=0
#   verify      bitlearn verify --device all (full, then --quick): exit code 0 and every device's
#               digest equal to the expected one (the CPU suite digest; a GPU suite digest lacks the
#               two CPU-only checks) (--quick: the quick suite only)
#   bench       the benchmarks named by --bench (default: gemm_cuda,reduce_cuda,math_cuda,copy_cuda,
#               gemm,reduce); key figures in the summary, full output in the logs
# Optional steps (named in --only, or added by their flag):
#   exhaustive  (--exhaustive) the CUDA tests labelled exhaustive (ctest -L exhaustive, CUDA ones),
#               then the math sweep through tools/math_check: every function on all 2^32 inputs on
#               the GPU, compared with the committed tests/data/math/sweep_cpu.txt and with a CPU
#               sweep of every --sweep-step-th chunk on this host. Several minutes: give it its own call
#   isa         the CPU kernel variants of this host: verify --quick with BITLEARN_ISA=scalar, avx2
#               and avx512 (where the CPU has them) at 1 and $(nproc) threads, one digest for all,
#               and the CPU conformance tests with the widest variant
#   cputests    the CPU suite on this host: ctest -LE 'cuda|exhaustive' -j$(nproc)
#
# Options:
#   --only LIST        run just these steps (comma list, e.g. --only tests,verify,bench)
#   --skip LIST        leave these steps out
#   --quick            shorter run: verify --quick only, fewer benchmark shapes, no cache-off rerun
#   --exhaustive       add the exhaustive step
#   --bench LIST       benchmarks to run (comma list or all): gemm_cuda reduce_cuda math_cuda
#                      copy_cuda llm_cuda gemm reduce math llm tokenizer; adds the bench step
#   --budget SECONDS   wall-clock limit of the whole run (default 540: a device call allows 600);
#                      a step that finds too little time left is reported SKIP
#   --jobs N           parallel ctest jobs for the CUDA tests (default 4: each test is its own
#                      process with its own CUDA start-up, and no test asserts a time; 1 gives
#                      undisturbed per-test times and bandwidth reports)
#   --sweep-step S     CPU sweep keeps every S-th chunk in the exhaustive step (default 8)
#   --build-dir DIR    build folder (default build-gpu)
#   --dry-run          print the steps and their commands, run nothing
#
# Output: one line per step on stdout (PASS / FAIL / SKIP, digests, key figures), also written to
# $OUT/summary.txt; full logs beside it. OUT defaults to bench/results/gpu-<date>-<commit>/.
# Exit status: 0 every step passed; 1 a step failed (or no GPU); 2 bad usage; 3 nothing failed
# but a step was skipped for want of time.
#
# Typical calls: a cold machine first builds (`--only build --budget 590`), then
# `bash scripts/gpu-check.sh` runs the rest in about 8 minutes; `--only exhaustive --budget 590`
# in a call of its own.
set -u
cd "$(dirname "$0")/.." || exit 2

readonly FULL_DIGEST=fdc5181a031ce51376809a6f39556bf91744d8c159029ef8f6dd06ea89aa7d7f
readonly QUICK_DIGEST=42348d99740957c4be74f611cde47abbbc3df2dfc0f5797a12efe024fec2e184
# A GPU's own suite digests: every check with a GPU path gives the CPU's hash (verify --device all
# exits non-zero otherwise), and the two CPU-only algorithms are SKIPPED there, so the GPU suite
# digest is the CPU one without those two checks.
readonly FULL_GPU_DIGEST=2e9fd84d9349b946c0b1867bd5427b8580ea05e6178c3a12c6e725b14c276700
readonly QUICK_GPU_DIGEST=1f2bb0dfa1eea3f18aeb3937b609065d7453971461ec84eb2970df3b39c68622
readonly ALL_STEPS="build tests verify bench exhaustive isa cputests"
readonly ALL_BENCHES="gemm_cuda reduce_cuda math_cuda copy_cuda llm_cuda gemm reduce math llm tokenizer"

STEPS="build tests verify bench"
SKIP_STEPS=""
BENCHES="gemm_cuda reduce_cuda math_cuda copy_cuda gemm reduce"
QUICK=0
DRY=0
BUDGET=540
JOBS=4
SWEEP_STEP=8
B=build-gpu
NPROC=$(nproc)
START=$(date +%s)
NPASS=0
NFAIL=0
NSKIP=0
GPU_OK=0
GPU_WHY=""
BUILD_FAILED=0

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die_usage() { echo "gpu-check: $*" >&2; echo "see: bash scripts/gpu-check.sh --help" >&2; exit 2; }
commas() { echo "$1" | tr ',' ' '; }
has_word() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }

parse_args() {
  local only="" want_exhaustive=0 want_bench=0
  while [ $# -gt 0 ]; do
    case "$1" in
      -h|--help) usage; exit 0 ;;
      --only) [ $# -ge 2 ] || die_usage "--only needs a list"; only=$(commas "$2"); shift ;;
      --skip) [ $# -ge 2 ] || die_usage "--skip needs a list"; SKIP_STEPS=$(commas "$2"); shift ;;
      --quick) QUICK=1 ;;
      --exhaustive) want_exhaustive=1 ;;
      --bench) [ $# -ge 2 ] || die_usage "--bench needs a list"; BENCHES=$(commas "$2"); want_bench=1; shift ;;
      --budget) [ $# -ge 2 ] || die_usage "--budget needs seconds"; BUDGET="$2"; shift ;;
      --jobs) [ $# -ge 2 ] || die_usage "--jobs needs a number"; JOBS="$2"; shift ;;
      --sweep-step) [ $# -ge 2 ] || die_usage "--sweep-step needs a number"; SWEEP_STEP="$2"; shift ;;
      --build-dir) [ $# -ge 2 ] || die_usage "--build-dir needs a folder"; B="$2"; shift ;;
      --dry-run) DRY=1 ;;
      *) die_usage "unknown option '$1'" ;;
    esac
    shift
  done
  for n in "$BUDGET" "$JOBS" "$SWEEP_STEP"; do
    case "$n" in ''|*[!0-9]*) die_usage "'$n' is not a whole number" ;; esac
  done
  [ "$BENCHES" = all ] && BENCHES="$ALL_BENCHES"
  for b in $BENCHES; do has_word "$ALL_BENCHES" "$b" || die_usage "unknown benchmark '$b' ($ALL_BENCHES)"; done
  [ -n "$only" ] && STEPS="$only"
  [ $want_exhaustive -eq 1 ] && ! has_word "$STEPS" exhaustive && STEPS="$STEPS exhaustive"
  [ $want_bench -eq 1 ] && ! has_word "$STEPS" bench && STEPS="$STEPS bench"
  for s in $STEPS $SKIP_STEPS; do has_word "$ALL_STEPS" "$s" || die_usage "unknown step '$s' ($ALL_STEPS)"; done
  local ordered=""
  for s in $ALL_STEPS; do
    has_word "$STEPS" "$s" && ! has_word "$SKIP_STEPS" "$s" && ordered="$ordered $s"
  done
  STEPS="${ordered# }"
  [ -n "$STEPS" ] || die_usage "no step left to run"
}

# ---- output ---------------------------------------------------------------------------------

say() { echo "$*" | tee -a "$OUT/summary.txt"; }
indent() { sed 's/^/    /' | tee -a "$OUT/summary.txt"; }
result() {  # STATUS TEXT: one summary line per step outcome
  case "$1" in
    PASS) NPASS=$((NPASS + 1)) ;;
    FAIL) NFAIL=$((NFAIL + 1)) ;;
    SKIP) NSKIP=$((NSKIP + 1)) ;;
  esac
  say "$1 $2"
}
elapsed() { echo $(( $(date +%s) - START )); }

# limit WANT: seconds a step may take, WANT capped by what is left of the budget (0: none left).
limit() {
  local left=$(( BUDGET - $(elapsed) - 5 ))
  [ "$left" -lt 15 ] && { echo 0; return; }
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

# run SECONDS LOG CMD...: CMD with its output in LOG, killed (with its children) after SECONDS.
# Returns CMD's status; 124 means the time ran out. With --dry-run it only prints the command.
run() {
  local secs="$1" log="$2"; shift 2
  if [ $DRY -eq 1 ]; then
    echo "    [${secs}s] $* > ${log#"$OUT"/}"
    return 0
  fi
  timeout -k 10 "$secs" "$@" >"$log" 2>&1
}

# timed NAME WANT: sets T to the step's limit, or reports SKIP and returns 1 when no time is left.
timed() {
  T=$(limit "$2")
  if [ "$T" -eq 0 ]; then result SKIP "$1: no time left in the ${BUDGET} s budget"; return 1; fi
  return 0
}

need_gpu() {  # NAME: FAIL the step at once when there is no usable GPU
  [ $DRY -eq 1 ] && return 0
  [ $GPU_OK -eq 1 ] && return 0
  result FAIL "$1: no usable GPU ($GPU_WHY)"
  return 1
}

need_file() {  # NAME FILE: FAIL the step when FILE (a built program) is missing
  [ $DRY -eq 1 ] && return 0
  [ -x "$2" ] && return 0
  result FAIL "$1: $2 not built (run the build step)"
  return 1
}

# ---- steps ----------------------------------------------------------------------------------

preflight() {
  local commit gpu cpu
  if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
  else
    commit=unknown
  fi
  cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')
  say "== gpu-check $(date -u +%FT%TZ) commit $commit; steps: $STEPS; budget ${BUDGET} s"
  say "   cpu: ${cpu:-unknown}, $NPROC cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
  [ $DRY -eq 1 ] && return 0
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    GPU_WHY="nvidia-smi not found"
  elif ! gpu=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1); then
    GPU_WHY="nvidia-smi failed: $(echo "${gpu:-no answer within 30 s}" | head -1)"
  elif [ -z "$gpu" ]; then
    GPU_WHY="nvidia-smi lists no GPU"
  else
    GPU_OK=1
    say "   gpu: $(echo "$gpu" | head -1)$( [ "$(echo "$gpu" | wc -l)" -gt 1 ] && echo " (+$(( $(echo "$gpu" | wc -l) - 1 )) more)")"
  fi
  [ $GPU_OK -eq 1 ] || say "   gpu: none ($GPU_WHY)"
}

step_build() {
  BUILD_FAILED=1
  timed build 420 || return
  local args=(-S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBITLEARN_CUDA=ON -DBITLEARN_BENCH=ON
              -DBITLEARN_TESTS=ON)
  if [ -f .gpudeps/include/mpfr.h ]; then
    local lib mpfr gmp
    for lib in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
      mpfr=$(ls "$lib"/libmpfr.so* 2>/dev/null | head -1)
      gmp=$(ls "$lib"/libgmp.so* 2>/dev/null | head -1)
      [ -n "$mpfr" ] && [ -n "$gmp" ] && break
    done
    [ -n "$mpfr" ] && [ -n "$gmp" ] &&
      args+=(-DBL_MPFR_INCLUDE_DIR="$PWD/.gpudeps/include" -DBL_MPFR_LIBRARY="$mpfr" -DBL_GMP_LIBRARY="$gmp")
  fi
  command -v ccache >/dev/null 2>&1 &&
    args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  local t0; t0=$(elapsed)
  if ! run "$T" "$OUT/configure.log" cmake "${args[@]}"; then
    result FAIL "build: configure failed (configure.log)"
    tail -15 "$OUT/configure.log" | indent
    return
  fi
  T=$(limit $(( T - ($(elapsed) - t0) )))
  [ "$T" -gt 0 ] || { result SKIP "build: no time left after configure"; return; }
  run "$T" "$OUT/build.log" cmake --build "$B" -j"$NPROC"
  local rc=$?
  [ $DRY -eq 1 ] && { BUILD_FAILED=0; return; }
  if [ $rc -eq 0 ]; then
    BUILD_FAILED=0
    local mc="tools/math_check not built (no MPFR headers in .gpudeps/include)"
    [ -x "$B/tools/math_check/bitlearn_math_check" ] && mc="with tools/math_check"
    result PASS "build: $B ($(( $(elapsed) - t0 )) s, $mc)"
  else
    [ $rc -eq 124 ] && result FAIL "build: stopped after $T s (build.log); run again: the build resumes" ||
      result FAIL "build: rc $rc (build.log)"
    grep -E "error|FAILED:" "$OUT/build.log" | head -20 | indent
  fi
}

# ctest_summary LOG: "N passed, M failed, K skipped of TOTAL" from a ctest log.
ctest_summary() {
  local line total failed skipped
  line=$(grep -E "tests passed(, [0-9]+ tests? failed)? out of [0-9]+" "$1" | tail -1)
  total=$(echo "$line" | sed -nE 's/.*out of ([0-9]+).*/\1/p')
  failed=$(echo "$line" | sed -nE 's/.* ([0-9]+) tests? failed.*/\1/p')
  failed=${failed:-0}
  skipped=$(grep -cE "\*\*\*Skipped" "$1")
  [ -n "$total" ] || { echo "no ctest summary"; return; }
  echo "$(( total - failed - skipped )) passed, $failed failed, $skipped skipped of $total"
}

# ctest_run NAME LOGBASE WANT_SECONDS DEVICE ARGS...: one ctest run over build-gpu, one summary
# line. DEVICE=1: a test that skipped itself with "no CUDA device" (read from the JUnit report,
# which holds every test's output) makes the run FAIL, since this machine has a GPU.
ctest_run() {
  local name="$1" log="$OUT/$2.log" xml="$OUT/$2.xml" secs="$3" device="$4" t0 rc nodev=0; shift 4
  timed "$name" "$secs" || return
  t0=$(elapsed)
  run "$T" "$log" ctest --test-dir "$B" --output-on-failure --no-tests=error --output-junit "$xml" "$@"
  rc=$?
  [ $DRY -eq 1 ] && return
  [ "$device" -eq 1 ] && nodev=$(grep -c "no CUDA device" "$xml" 2>/dev/null)
  if [ $rc -eq 0 ] && [ "${nodev:-0}" -eq 0 ]; then
    result PASS "$name: $(ctest_summary "$log") ($(( $(elapsed) - t0 )) s)"
  elif [ $rc -eq 0 ]; then
    result FAIL "$name: $nodev tests skipped with 'no CUDA device': $(ctest_summary "$log")"
  else
    result FAIL "$name: rc $rc$( [ $rc -eq 124 ] && echo ", stopped after $T s"): $(ctest_summary "$log") (${log##*/})"
    grep -E "^\s*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Not Run|Exception)\)" "$log" | head -20 | indent
  fi
}

step_tests() {
  need_gpu tests || return
  need_file tests "$B/tests/bitlearn_cuda_tests" || return
  ctest_run tests ctest-cuda 270 1 -L cuda -LE exhaustive --timeout 300 -j"$JOBS"
  [ $QUICK -eq 1 ] && return
  # The allocator and the GEMM scratch again without the caching allocator (cudaMalloc per block).
  BITLEARN_CUDA_CACHE=0 ctest_run "tests BITLEARN_CUDA_CACHE=0" ctest-cuda-cache-off 60 1 \
    -L cuda -LE exhaustive -R 'CudaAllocator|MatmulCudaScratch' --timeout 120
}

# verify_run NAME LOG WANT_DIGEST WANT_GPU_DIGEST WANT_SECONDS ARGS...: one `bitlearn verify` run,
# checked: exit code 0, the CPU digest WANT_DIGEST and every GPU's WANT_GPU_DIGEST.
verify_run() {
  local name="$1" log="$OUT/$2" want="$3" want_gpu="$4" secs="$5"; shift 5
  timed "$name" "$secs" || return
  local t0 rc digests bad
  t0=$(elapsed)
  run "$T" "$log" "$B/bitlearn" verify "$@"
  rc=$?
  [ $DRY -eq 1 ] && return
  # "digest cpu <hex>" per device when there are several, and always "digest: <hex>".
  digests=$(grep -E "^digest " "$log" | awk '{printf "%s%s %s", sep, $2, substr($3, 1, 16); sep = ", "}')
  [ -n "$digests" ] || digests=$(awk '/^digest:/ {print "suite " substr($2, 1, 16)}' "$log")
  bad=$(grep -E "^digest( |:)" "$log" | awk -v w="$want" -v g="$want_gpu" '
    { if ($1 == "digest:") { d = $2; e = w } else { d = $3; e = ($2 == "cpu") ? w : g } if (d != e) n++ }
    END { print n + 0 }')
  if [ $rc -eq 0 ] && [ "$bad" -eq 0 ] && grep -q "^digest:" "$log"; then
    result PASS "$name: rc 0, digests (${digests}) as expected ($(( $(elapsed) - t0 )) s)"
  else
    result FAIL "$name: rc $rc$( [ $rc -eq 124 ] && echo " (time out)"), digests (${digests:-none}), expected cpu ${want:0:16}, gpu ${want_gpu:0:16} (${log##*/})"
    grep -E "DIVERGENT|SKIPPED" "$log" | head -12 | indent
  fi
}

step_verify() {
  need_gpu verify || return
  need_file verify "$B/bitlearn" || return
  if [ $QUICK -eq 0 ]; then
    verify_run "verify --device all" verify-all.log "$FULL_DIGEST" "$FULL_GPU_DIGEST" 180 --device all --threads "$NPROC" --json "$OUT/verify-all.json"
  fi
  verify_run "verify --quick --device all" verify-quick.log "$QUICK_DIGEST" "$QUICK_GPU_DIGEST" 60 --device all --quick --threads "$NPROC"
}

# gemm_table LOG: per shape, bitlearn (variant 0) and cuBLAS / OpenBLAS GFLOP/s and their ratio.
gemm_table() {
  grep -E "^BM_" "$1" | grep -vE "_(mean|median|stddev|cv) " |
    sed -nE 's/^([^ ]+) .*GFLOP\/s=([0-9.]+)([kMGT]?).*/\1 \2 \3/p' | awk '
    function val(x, u) { return u == "k" ? x * 1e3 : (u == "M" ? x * 1e6 : (u == "G" ? x * 1e9 : (u == "T" ? x * 1e12 : x))) }
    { name = $1; v = val($2, $3)
      match(name, /M:[0-9]+\/N:[0-9]+\/K:[0-9]+(\/trans_b:[01])?/); shape = substr(name, RSTART + 2, RLENGTH - 2)
      gsub(/\/[NK]:/, "x", shape); sub(/\/trans_b:1/, " B^T", shape); sub(/\/trans_b:0/, "", shape)
      th = ""; if (match(name, /threads:[0-9]+/)) th = " " substr(name, RSTART, RLENGTH)
      key = shape th
      if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      if (name ~ /cublas|openblas/) peer[key] = v; else ours[key] = v }
    END { for (i = 1; i <= n; ++i) { k = order[i]
            printf "%-26s bitlearn %8.0f GFLOP/s  peer %8.0f  ratio %s\n", k, ours[k], peer[k],
                   (peer[k] > 0 && ours[k] > 0) ? sprintf("%.2f", ours[k] / peer[k]) : "-" } }'
}

# bench_one NAME: one benchmark program, its figures in the summary.
bench_one() {
  local name="$1" exe="$B/bench/bench_$1" log="$OUT/bench-$1.log" want args=() envs=() rc t0
  local min=0.2 gemm_shapes='4096/N:4096/K:4096|8192/N:8192/K:8192|8192/N:768/K:3072|128/N:2304/K:768|128/N:768/K:3072'
  [ $QUICK -eq 1 ] && { min=0.05; gemm_shapes='4096/N:4096/K:4096|128/N:2304/K:768'; }
  case "$name" in
    llm_cuda) exe="$B/bench/bench_llm" ;;
  esac
  case "$name" in
    gemm_cuda) want=90; args=("--benchmark_min_time=${min}"
                 "--benchmark_filter=^BM_cublas_sgemm_strict/M:($gemm_shapes)/|^BM_bitlearn_matmul_cuda/M:($gemm_shapes)/variant:0/") ;;
    reduce_cuda|copy_cuda) want=60 ;;
    math_cuda) want=60; args=("--benchmark_min_time=${min}") ;;
    llm_cuda) want=60; envs=(BL_LLM_DEVICE=cuda BL_LLM_ONLY=gpt2-124m); args=(--benchmark_min_time=0.3) ;;
    llm) want=90; envs=(BL_LLM_DEVICE=cpu BL_LLM_ONLY=gpt2-124m BITLEARN_THREADS="$NPROC"); args=(--benchmark_min_time=0.3) ;;
    gemm) want=120; envs=(BITLEARN_BENCH_THREADS="$NPROC")
          args=("--benchmark_min_time=${min}" "--benchmark_filter=/M:(2048/N:2048/K:2048|4096/N:4096/K:4096|8192/N:768/K:3072)/")
          [ $QUICK -eq 1 ] && args[1]="--benchmark_filter=/M:2048/N:2048/K:2048/" ;;
    reduce) want=90; envs=(BITLEARN_BENCH_THREADS="$NPROC" "BITLEARN_BENCH_REPS=$((3 - 2 * QUICK))") ;;
    math) want=60; args=(--benchmark_min_time=0.05) ;;
    tokenizer) want=60; args=(--benchmark_min_time=0.2) ;;
  esac
  case "$name" in *_cuda) need_gpu "bench $name" || return ;; esac
  need_file "bench $name" "$exe" || return
  timed "bench $name" "$want" || return
  t0=$(elapsed)
  run "$T" "$log" env "${envs[@]}" "$exe" "${args[@]}"
  rc=$?
  [ $DRY -eq 1 ] && return
  if [ $rc -ne 0 ] || grep -qE "^FAIL|no CUDA device" "$log"; then
    result FAIL "bench $name: rc $rc$( [ $rc -eq 124 ] && echo " (time out)") (${log##*/})"
    grep -E "^FAIL|no CUDA device|rror" "$log" | head -5 | indent
    return
  fi
  result PASS "bench $name ($(( $(elapsed) - t0 )) s):"
  case "$name" in
    gemm_cuda|gemm) gemm_table "$log" | indent ;;
    reduce_cuda) grep -E "^(cudaMemcpy D2D|sum  |rms_norm|exp math map|softmax +normal +default|log_softmax +normal +default)" "$log" | indent ;;
    copy_cuda) grep -E "D2D|variant 0 |add " "$log" | head -6 | indent ;;
    math_cuda) sed -n '/^function/,$p' "$log" | indent ;;
    reduce) grep -E "^(threads=|  (memcpy|sum|softmax|log_softmax|exp|rms_norm) )" "$log" | head -12 | indent ;;
    llm|llm_cuda) grep -E "^(prefill|decode)/" "$log" | sed -E 's/^([^ ]+) .*tokens_per_s=([0-9.]+[kMG]?).*/\1 \2 tokens\/s/' | indent ;;
    math) sed -n '/^function/,$p' "$log" | indent ;;
    tokenizer) grep -E "MBps" "$log" | indent ;;
  esac
}

step_bench() {
  local b
  for b in $BENCHES; do bench_one "$b"; done
}

# sweep NAME LOG WANT_SECONDS ARGS...: one bitlearn_math_check sweep run (hashes, or a comparison
# of hash files: IDENTICAL, else the first differing chunk, or STALE for other math sources).
sweep() {
  local name="$1" log="$OUT/$2" secs="$3" t0 rc; shift 3
  timed "$name" "$secs" || return 1
  t0=$(elapsed)
  run "$T" "$log" "$B/tools/math_check/bitlearn_math_check" "$@"
  rc=$?
  [ $DRY -eq 1 ] && return 0
  if [ $rc -eq 0 ]; then
    result PASS "$name ($(( $(elapsed) - t0 )) s)"
    return 0
  fi
  result FAIL "$name: rc $rc$( [ $rc -eq 124 ] && echo " (time out)") (${log##*/})"
  grep -vE "IDENTICAL|^sweep \(" "$log" | tail -8 | indent
  return 1
}

step_exhaustive() {
  need_gpu exhaustive || return
  local ref=tests/data/math/sweep_cpu.txt
  ctest_run "exhaustive tests" ctest-cuda-exhaustive 300 1 -L exhaustive -R Cuda --timeout 600
  need_file "math sweep" "$B/tools/math_check/bitlearn_math_check" || return
  sweep "math sweep cuda: all 2^32 inputs of every function" sweep-cuda.log 240 \
    --sweep-hashes "$OUT/sweep_cuda.txt" --device cuda --fn all --threads "$NPROC" || return
  sweep "math sweep: CUDA = the committed CPU hashes ($ref)" sweep-vs-committed.log 60 \
    --sweep-hashes "$OUT/sweep_cuda.txt" --device file --compare "$ref"
  sweep "math sweep cpu: every ${SWEEP_STEP}th chunk on this host" sweep-cpu.log 300 \
    --sweep-hashes "$OUT/sweep_cpu.txt" --device cpu --fn all --threads "$NPROC" --sweep-chunk-step "$SWEEP_STEP" || return
  sweep "math sweep: CUDA = this host's CPU" sweep-cuda-vs-cpu.log 60 \
    --sweep-hashes "$OUT/sweep_cuda.txt" --device file --compare "$OUT/sweep_cpu.txt"
}

step_isa() {
  need_file isa "$B/bitlearn" || return
  local isas="scalar avx2" isa t d digests="" same=1 rc
  grep -qw avx512f /proc/cpuinfo 2>/dev/null && isas="$isas avx512"
  [ "$(uname -m)" = aarch64 ] && isas="scalar neon"
  for isa in $isas; do
    for t in 1 "$NPROC"; do
      timed "isa $isa threads $t" 60 || return
      run "$T" "$OUT/isa-verify-$isa-t$t.log" env BITLEARN_ISA="$isa" "$B/bitlearn" verify --quick --device cpu --threads "$t"
      rc=$?
      [ $DRY -eq 1 ] && continue
      d=$(awk '/^digest:/ {print $2}' "$OUT/isa-verify-$isa-t$t.log")
      digests="$digests $isa/t$t=${d:0:16}"
      { [ $rc -eq 0 ] && [ "$d" = "$QUICK_DIGEST" ]; } || same=0
    done
  done
  [ $DRY -eq 1 ] || { [ $same -eq 1 ] && result PASS "isa verify --quick: one digest ${QUICK_DIGEST:0:16}... for$digests" ||
    result FAIL "isa verify --quick: digests differ or rc != 0:$digests"; }
  isa=${isas##* }
  need_file "isa tests" "$B/tests/bitlearn_tests" || return
  timed "isa conformance $isa" 180 || return
  run "$T" "$OUT/isa-tests-$isa.log" env BITLEARN_ISA="$isa" "$B/tests/bitlearn_tests" --gtest_filter='*Conformance*:*Isa*:Contraction.*'
  rc=$?
  [ $DRY -eq 1 ] && return
  [ $rc -eq 0 ] && result PASS "isa conformance tests BITLEARN_ISA=$isa: $(grep -E '^\[  PASSED' "$OUT/isa-tests-$isa.log")" ||
    { result FAIL "isa conformance tests BITLEARN_ISA=$isa: rc $rc"; grep -E "^\[  FAILED  \] [A-Za-z]" "$OUT/isa-tests-$isa.log" | head -10 | indent; }
}

step_cputests() {
  need_file cputests "$B/tests/bitlearn_tests" || return
  ctest_run cputests ctest-cpu 300 0 -LE 'cuda|exhaustive' --timeout 300 -j"$NPROC"
}

# ---- main -----------------------------------------------------------------------------------

parse_args "$@"
if [ -z "${OUT:-}" ]; then
  OUT="bench/results/gpu-$(date -u +%Y%m%d-%H%M)-$(git rev-parse --short HEAD 2>/dev/null || echo nogit)"
fi
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
: >"$OUT/summary.txt"
unset NVIDIA_TF32_OVERRIDE BITLEARN_CUDA_EXHAUSTIVE BITLEARN_CUDA_CACHE BITLEARN_ISA
preflight
for step in $STEPS; do
  [ $DRY -eq 1 ] && echo "-- $step"
  # Programs left from an earlier build would be checked in place of this tree's code.
  if [ "$BUILD_FAILED" -eq 1 ]; then result SKIP "$step: the build did not finish"; continue; fi
  "step_$step"
done
[ $DRY -eq 1 ] && { echo "(dry run: nothing was run; logs would go to $OUT)"; exit 0; }
say "== $NPASS PASS, $NFAIL FAIL, $NSKIP SKIP in $(elapsed) s; logs in $OUT"
[ $NFAIL -gt 0 ] && exit 1
[ $NSKIP -gt 0 ] && exit 3
exit 0
