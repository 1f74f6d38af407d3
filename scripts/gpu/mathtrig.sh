#!/usr/bin/env bash
# GPU check of the contract's sin, cos, erf, gelu, pow and rsqrt: the CUDA build of
# src/contract/math/trig_erf_pow.h must give the same bits as the CPU build, for every one of the
# 2^32 inputs of the unary functions and 2^28 sampled (x, y) pairs of pow. Also times the GPU.
# Run from the repository root on the GPU machine; writes a short summary to $OUT/mathtrig.log.
# Always exits 0; failures are printed as FAIL lines.
set -u
OUT="${OUT:-/tmp}"
LOG="$OUT/mathtrig.log"
WORK="$(mktemp -d)"
NVCC="${NVCC:-nvcc}"
command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
cat > "$WORK/math_gpu_check.cu" <<'CU'
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "contract/math.h"

__host__ __device__ inline float apply(int f, float x) {
  switch (f) {
    case 0: return bl::sin(x);
    case 1: return bl::cos(x);
    case 2: return bl::erf(x);
    case 3: return bl::gelu(x);
    default: return bl::rsqrt(x);
  }
}
__host__ __device__ inline uint32_t mix(uint64_t i) {  // splitmix64 -> 32 bits
  uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}
__global__ void unary_kernel(int f, uint64_t start, uint64_t n, uint32_t* out) {
  uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = bl::bits_of(apply(f, bl::float_of(static_cast<uint32_t>(start + i))));
}
__global__ void pow_kernel(uint64_t start, uint64_t n, uint32_t* out) {
  uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    uint64_t j = start + i;
    out[i] = bl::bits_of(bl::pow(bl::float_of(mix(2 * j)), bl::float_of(mix(2 * j + 1) & 0xC3FFFFFFu)));
  }
}
int main() {
  const char* names[] = {"sin", "cos", "erf", "gelu", "rsqrt", "pow"};
  const uint64_t chunk = 1ull << 28;
  std::vector<uint32_t> gpu(chunk), cpu(chunk);
  uint32_t* d = nullptr;
  if (cudaMalloc(&d, chunk * 4) != cudaSuccess) { printf("FAIL cudaMalloc\n"); return 0; }
  for (int f = 0; f < 6; ++f) {
    uint64_t total = f == 5 ? chunk : (1ull << 32), mismatches = 0, digest = 1469598103934665603ull;
    float gpu_ms = 0.0f;
    for (uint64_t start = 0; start < total; start += chunk) {
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0); cudaEventCreate(&e1);
      cudaEventRecord(e0);
      if (f == 5) pow_kernel<<<static_cast<unsigned>(chunk / 256), 256>>>(start, chunk, d);
      else unary_kernel<<<static_cast<unsigned>(chunk / 256), 256>>>(f, start, chunk, d);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms = 0.0f;
      cudaEventElapsedTime(&ms, e0, e1);
      gpu_ms += ms;
      if (cudaGetLastError() != cudaSuccess) { printf("FAIL %s kernel launch\n", names[f]); break; }
      cudaMemcpy(gpu.data(), d, chunk * 4, cudaMemcpyDeviceToHost);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < static_cast<int64_t>(chunk); ++i) {
        uint64_t j = start + static_cast<uint64_t>(i);
        cpu[i] = f == 5 ? bl::bits_of(bl::pow(bl::float_of(mix(2 * j)), bl::float_of(mix(2 * j + 1) & 0xC3FFFFFFu)))
                        : bl::bits_of(apply(f, bl::float_of(static_cast<uint32_t>(j))));
      }
      for (uint64_t i = 0; i < chunk; ++i) {
        if (gpu[i] != cpu[i]) {
          if (mismatches < 5) printf("FAIL %s input #%llu: gpu 0x%08x cpu 0x%08x\n", names[f], (unsigned long long)(start + i), gpu[i], cpu[i]);
          ++mismatches;
        }
        digest = (digest ^ cpu[i]) * 1099511628211ull;
      }
    }
    printf("%s %s: %llu inputs, %llu gpu/cpu mismatches, digest %016llx, gpu %.2f ns/elem\n",
           mismatches ? "FAIL" : "ok", names[f], (unsigned long long)total, (unsigned long long)mismatches,
           (unsigned long long)digest, gpu_ms * 1e6 / static_cast<double>(total));
  }
  cudaFree(d);
  return 0;
}
CU
{
  echo "== mathtrig: GPU vs CPU bits for sin cos erf gelu rsqrt (all 2^32 inputs) and pow (2^28 pairs)"
  if "$NVCC" -std=c++17 -O3 -I src --fmad=false -ftz=false -prec-div=true -prec-sqrt=true -arch=native \
      -Xcompiler -fopenmp,-ffp-contract=off,-fno-fast-math -o "$WORK/math_gpu_check" "$WORK/math_gpu_check.cu" \
      > "$WORK/build.txt" 2>&1; then
    timeout 540 "$WORK/math_gpu_check" || echo "FAIL math_gpu_check exited with $?"
  else
    echo "FAIL nvcc build"; tail -20 "$WORK/build.txt"
  fi
} > "$LOG" 2>&1
cat "$LOG"
rm -rf "$WORK"
exit 0
