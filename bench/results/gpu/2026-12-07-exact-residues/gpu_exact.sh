#!/usr/bin/env bash
# One device call: build the CUDA tests, the GEMM bench and the CLI; the exact-GEMM tests, the
# GEMM conformance tests, the training tests under the exact profile; verify --device all for
# both profiles' quick suites and the exact full suite; the GEMM bench (exact against cuBLAS).
set -u
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
bash .gpudeps/restore_head.sh
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DBITLEARN_CUDA=ON -DBITLEARN_BENCH=ON -DBITLEARN_TESTS=ON > "$OUT/configure.log" 2>&1
cmake --build build-gpu -j16 --target bitlearn_cuda_tests bench_gemm_cuda bitlearn_cli > "$OUT/build.log" 2>&1; rc=$?
echo "build rc $rc $(( $(date +%s)-t0 )) s"; [ $rc -eq 0 ] || { grep -E 'error' "$OUT/build.log" | head -30; tail -20 "$OUT/build.log"; exit 1; }
timeout 150 build-gpu/tests/bitlearn_cuda_tests --gtest_brief=1 \
  --gtest_filter='ExactGemmCuda.*:*ConformanceDriverCuda*:MatmulCuda*' > "$OUT/tests.log" 2>&1; trc=$?
echo "tests rc $trc $(( $(date +%s)-t0 )) s"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests ran|Failure|differ" "$OUT/tests.log" | head -30
BITLEARN_GEMM_PROFILE=exact timeout 120 build-gpu/tests/bitlearn_cuda_tests --gtest_brief=1 \
  --gtest_filter='*NnCuda.*:*LmCuda.*:*HfModelCuda.*:*MlWave2Cuda.*' > "$OUT/tests_exact_profile.log" 2>&1; erc=$?
echo "exact-profile training tests rc $erc $(( $(date +%s)-t0 )) s"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests ran" "$OUT/tests_exact_profile.log" | head -20
for args in "--quick" "--quick --gemm-profile exact" "--gemm-profile exact"; do
  timeout 100 build-gpu/bitlearn verify --device all $args > "$OUT/verify.log" 2>&1
  echo "verify --device all $args: rc=$? $(grep -E '^digest|digest:' "$OUT/verify.log" | tr '\n' ' ') $(( $(date +%s)-t0 )) s" | tee -a "$OUT/summary.txt"
  grep -E 'DIFFER|FAIL|MISMATCH' "$OUT/verify.log" | head -5
done
timeout 150 build-gpu/bench/bench_gemm_cuda --benchmark_filter='BM_exact_matmul_cuda|BM_cublas_sgemm_strict' \
  --benchmark_min_time=0.2s > "$OUT/bench.log" 2>&1; echo "bench rc $? $(( $(date +%s)-t0 )) s"
grep -E '^BM_' "$OUT/bench.log" | cut -c1-150 | head -60
exit $trc
