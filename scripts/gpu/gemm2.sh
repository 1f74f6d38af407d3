#!/usr/bin/env bash
# GEMM speed check on the GPU machine, run from the repo root after build-gpu is built with
# -DBITLEARN_BENCH=ON: runs scripts/gpu/gemm.sh (CUDA GEMM conformance + benchmark vs cuBLAS
# strict fp32), lists the GEMM kernels that touch local memory (register spills), and, when ncu is
# present, the issue statistics of the default variant at 4096^3. Summary in $OUT/gemm2.log.
OUT="${OUT:-.}"
LOG="$OUT/gemm2.log"
B="${BUILD_DIR:-build-gpu}"
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

OUT="$OUT" BUILD_DIR="$B" bash scripts/gpu/gemm.sh > /dev/null 2>&1
grep -E "PASS|FAIL|BM_" "$OUT/gemm.log" | tee -a "$LOG"

o=$(find "$B" -name 'matmul.cu.o' | head -1)
if command -v cuobjdump > /dev/null && [ -n "$o" ]; then
  say "local-memory instructions per GEMM kernel:"
  cuobjdump -sass "$o" 2>/dev/null | awk '/Function :/{f=$3} /LDL|STL/{n[f]++} END{for (k in n) print n[k], k}' |
    c++filt | sed -E 's/\(bl::.*//; s/void bl::\(anonymous namespace\):://' | tee -a "$LOG"
fi
if command -v ncu > /dev/null && [ -x "$B/bench/bench_gemm_cuda" ]; then
  timeout 90 ncu --kernel-name regex:matmul_pipe --launch-count 1 --section WarpStateStats \
    --section SpeedOfLight "$B/bench/bench_gemm_cuda" \
    --benchmark_filter='bitlearn.*M:4096/N:4096/K:4096/variant:0' --benchmark_min_time=0.01 \
    > "$OUT/gemm2_ncu.txt" 2>&1
  grep -E "SM Frequency|Compute \(SM\) Throughput|Warp Cycles Per Issued" "$OUT/gemm2_ncu.txt" | tee -a "$LOG"
fi
exit 0
