// bench_gemm_cuda: the contract GEMM and the exact-integer GEMM (profile bitlearn.exact_gemm.v1,
// BM_exact_matmul_cuda) on the GPU (bl::matmul_cuda by shape and each shipped tile; the exact one by shape) side by side
// with cuBLAS cublasSgemm in strict fp32 (CUBLAS_DEFAULT_MATH with TF32 not allowed, i.e. no
// tensor cores), same shapes, same device, in one process.
//
// Shapes are M x N x K: square 2048, 4096, 8192, the LM shapes 8192x768x3072, 8192x3072x768,
// 8192x768x768, the GPT-2 124M prefill shapes at 128 tokens, and the LM head of that prefill
// (128 x 50257 x 768) with the weight stored [K, N] (plain) and [N, K] (transposed B, as the tied
// embedding is stored). Times come from CUDA events (manual time); GFLOP/s = 2*M*N*K / time.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_timing.cuh"
#include "kernels/exact_gemm.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace {

struct DeviceGemm {
  float *a = nullptr, *b = nullptr, *c = nullptr;
  DeviceGemm(int64_t m, int64_t n, int64_t k) {  // B holds K * N elements either way
    cudaMalloc(&a, m * k * sizeof(float));
    cudaMalloc(&b, k * n * sizeof(float));
    cudaMalloc(&c, m * n * sizeof(float));
    std::vector<float> ha(static_cast<size_t>(m * k)), hb(static_cast<size_t>(k * n));
    for (size_t i = 0; i < ha.size(); ++i) ha[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.125f;
    for (size_t i = 0; i < hb.size(); ++i) hb[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f;
    cudaMemcpy(a, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~DeviceGemm() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

// Runs `body` per iteration between CUDA events (bench/cuda_timing.cuh) and reports GFLOP/s.
template <typename Body>
void time_gpu(benchmark::State& state, int64_t m, int64_t n, int64_t k, Body body) {
  bl::bench::time_gpu_iterations(state, body);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * 1e-9 * state.iterations(),
                                                 benchmark::Counter::kIsRate);
}

void BM_bitlearn_matmul_cuda(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  bl::LaunchConfig config;
  config.variant = static_cast<int>(state.range(3));
  DeviceGemm d(m, n, k);
  bl::MatmulArgs args = bl::matmul_dense_args(1, m, n, k);
  time_gpu(state, m, n, k, [&] { bl::matmul_cuda(args, d.a, d.b, d.c, config); });
}

// The LM head: range(3) = 1 stores B as [N, K] (trans_b), 0 as [K, N].
void BM_bitlearn_lm_head_cuda(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const bool trans_b = state.range(3) != 0;
  bl::LaunchConfig config;
  config.variant = static_cast<int>(state.range(4));
  DeviceGemm d(m, n, k);
  bl::MatmulArgs args = bl::matmul_dense_args(1, m, n, k, false, trans_b);
  time_gpu(state, m, n, k, [&] { bl::matmul_cuda(args, d.a, d.b, d.c, config); });
}

// The exact-integer product (kernels/exact_gemm.h), by shape or one of its two tiles.
void BM_exact_matmul_cuda(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  bl::LaunchConfig config;
  config.variant = static_cast<int>(state.range(3));
  DeviceGemm d(m, n, k);
  const bl::MatmulArgs args = bl::matmul_dense_args(1, m, n, k);
  time_gpu(state, m, n, k, [&] { bl::exact_matmul_cuda(args, d.a, d.b, d.c, config); });
}

// cuBLAS cublasSgemm in strict fp32 (default math, TF32 tensor-core conversion not allowed) on
// row-major C = A op(B), with B stored [K, N] or, when trans_b, [N, K]: computed as column-major
// C^T = op(B)^T A^T.
void time_cublas_strict(benchmark::State& state, int64_t m, int64_t n, int64_t k, bool trans_b) {
  DeviceGemm d(m, n, k);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
  const float one = 1.0f, zero = 0.0f;
  time_gpu(state, m, n, k, [&] {
    cublasSgemm(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
                static_cast<int>(m), static_cast<int>(k), &one, d.b,
                static_cast<int>(trans_b ? k : n), d.a, static_cast<int>(k), &zero, d.c,
                static_cast<int>(n));
  });
  cublasDestroy(handle);
}

void BM_cublas_lm_head(benchmark::State& state) {
  time_cublas_strict(state, state.range(0), state.range(1), state.range(2), state.range(3) != 0);
}

void BM_cublas_sgemm_strict(benchmark::State& state) {
  time_cublas_strict(state, state.range(0), state.range(1), state.range(2), false);
}

// Square, LM training shapes (8192 tokens) and GPT-2 124M prefill shapes (128 tokens).
const int64_t kShapes[][3] = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
                              {8192, 768, 3072},  {8192, 3072, 768},  {8192, 768, 768},
                              {128, 2304, 768},   {128, 3072, 768},   {128, 768, 3072},
                              {128, 768, 768}};

// The exact product by shape (variant 0: the int8 residue products on these shapes) and the plain
// integer kernel (64 x 64 tiles) beside it.
void exact_shapes(benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes)
    for (int64_t variant : {int64_t(0), int64_t(bl::kExactGemmTile64)}) b->Args({s[0], s[1], s[2], variant});
  b->ArgNames({"M", "N", "K", "variant"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

// The choice by shape (variant 0) and every tile the library ships (launch.h) at every shape; the
// 128 x 128 warp tiles only where M >= 2048, as they leave most of the device idle on the 128-token
// shapes, and the small tiles only where M < 2048. Other tile shapes: dev/cuda/gemm_tiles.cu.
void bitlearn_shapes(benchmark::internal::Benchmark* b) {
  const int64_t tiles[] = {0,
                           bl::kMatmulTileRegister64,
                           bl::kMatmulTilePipe128x64,
                           bl::kMatmulTilePipe128,
                           bl::kMatmulTileWarp128,
                           bl::kMatmulTileSmall,
                           bl::kMatmulTileSmallSplit};
  for (const auto& s : kShapes)
    for (int64_t variant : tiles) {
      const bool wide = variant == bl::kMatmulTileWarp128;
      const bool small = variant == bl::kMatmulTileSmall || variant == bl::kMatmulTileSmallSplit;
      if ((!wide || s[0] >= 2048) && (!small || s[0] < 2048)) b->Args({s[0], s[1], s[2], variant});
    }
  b->ArgNames({"M", "N", "K", "variant"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

void cublas_shapes(benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) b->Args({s[0], s[1], s[2]});
  b->ArgNames({"M", "N", "K"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

void lm_head_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t trans_b = 0; trans_b <= 1; ++trans_b)
    for (int64_t variant : {0, bl::kMatmulTileWarp128, bl::kMatmulTileSmall})
      b->Args({128, 50257, 768, trans_b, variant});
  b->ArgNames({"M", "N", "K", "trans_b", "variant"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

void cublas_lm_head_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t trans_b = 0; trans_b <= 1; ++trans_b) b->Args({128, 50257, 768, trans_b});
  b->ArgNames({"M", "N", "K", "trans_b"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

// The products of one training step of the 162M language model (B = 4, T = 2048, width 768, SwiGLU
// 2048, vocabulary 50257: linear layers, their weight gradients per sequence, the chunked loss, the
// attention backward's per-block products over 48 heads) and of a 1000-token GPT-2 124M prefill:
// batch, M, N, K, trans_a, trans_b. Each runs with the choice by shape (variant 0) and every
// shipped tile, beside cuBLAS's strided batched SGEMM in strict fp32 on the same operands.
const int64_t kStepShapes[][6] = {
    {1, 8192, 768, 768, 0, 1},   {1, 8192, 768, 768, 0, 0},   {1, 8192, 2048, 768, 0, 1},
    {1, 8192, 768, 2048, 0, 1},  {1, 8192, 768, 2048, 0, 0},  {1, 8192, 2048, 768, 0, 0},
    {4, 768, 768, 2048, 1, 0},   {4, 2048, 768, 2048, 1, 0},  {4, 768, 2048, 2048, 1, 0},
    {1, 1024, 50257, 768, 0, 1}, {1, 4096, 768, 50257, 0, 0}, {1, 50257, 768, 1024, 1, 0},
    {48, 2048, 64, 256, 1, 0},   {48, 1024, 64, 256, 1, 0},   {48, 256, 2048, 64, 0, 1},
    {48, 256, 1024, 64, 0, 1},   {48, 256, 64, 2048, 0, 0},   {48, 256, 64, 1024, 0, 0},
    {1, 1000, 2304, 768, 0, 0},  {1, 1000, 3072, 768, 0, 0},  {1, 1000, 768, 3072, 0, 0},
    {1, 1000, 768, 768, 0, 0},   {1, 1000, 50257, 768, 0, 1}};

struct DeviceBatchedGemm {
  float *a = nullptr, *b = nullptr, *c = nullptr;
  DeviceBatchedGemm(int64_t batch, int64_t m, int64_t n, int64_t k) {
    cudaMalloc(&a, batch * m * k * sizeof(float));
    cudaMalloc(&b, batch * k * n * sizeof(float));
    cudaMalloc(&c, batch * m * n * sizeof(float));
    cudaMemset(a, 0, batch * m * k * sizeof(float));
    cudaMemset(b, 0, batch * k * n * sizeof(float));
  }
  ~DeviceBatchedGemm() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

void BM_step_bitlearn(benchmark::State& state) {
  const int64_t batch = state.range(0), m = state.range(1), n = state.range(2), k = state.range(3);
  bl::LaunchConfig config;
  config.variant = static_cast<int>(state.range(6));
  DeviceBatchedGemm d(batch, m, n, k);
  const bl::MatmulArgs args = bl::matmul_dense_args(batch, m, n, k, state.range(4) != 0, state.range(5) != 0);
  time_gpu(state, batch * m, n, k, [&] { bl::matmul_cuda(args, d.a, d.b, d.c, config); });
}

void BM_step_cublas(benchmark::State& state) {
  const int64_t batch = state.range(0), m = state.range(1), n = state.range(2), k = state.range(3);
  const bool ta = state.range(4) != 0, tb = state.range(5) != 0;
  DeviceBatchedGemm d(batch, m, n, k);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
  const float one = 1.0f, zero = 0.0f;
  // Row-major C [m, n] = op(A) op(B) as column-major C^T = op(B)^T op(A)^T.
  time_gpu(state, batch * m, n, k, [&] {
    cublasSgemmStridedBatched(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                              static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one, d.b,
                              static_cast<int>(tb ? k : n), k * n, d.a, static_cast<int>(ta ? m : k), m * k,
                              &zero, d.c, static_cast<int>(n), m * n, static_cast<int>(batch));
  });
  cublasDestroy(handle);
}

void step_shapes(benchmark::internal::Benchmark* b) {
  for (const auto& s : kStepShapes)
    for (int64_t variant : {0, bl::kMatmulTileRegister64, bl::kMatmulTilePipe128x64, bl::kMatmulTilePipe128,
                            bl::kMatmulTileWarp128, bl::kMatmulTileSmall, bl::kMatmulTileSmallSplit})
      b->Args({s[0], s[1], s[2], s[3], s[4], s[5], variant});
  b->ArgNames({"B", "M", "N", "K", "tA", "tB", "variant"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

void step_shapes_cublas(benchmark::internal::Benchmark* b) {
  for (const auto& s : kStepShapes) b->Args({s[0], s[1], s[2], s[3], s[4], s[5]});
  b->ArgNames({"B", "M", "N", "K", "tA", "tB"})->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_step_cublas)->Apply(step_shapes_cublas);
BENCHMARK(BM_step_bitlearn)->Apply(step_shapes);
BENCHMARK(BM_cublas_sgemm_strict)->Apply(cublas_shapes);
BENCHMARK(BM_bitlearn_matmul_cuda)->Apply(bitlearn_shapes);
BENCHMARK(BM_exact_matmul_cuda)->Apply(exact_shapes);
BENCHMARK(BM_cublas_lm_head)->Apply(cublas_lm_head_shapes);
BENCHMARK(BM_bitlearn_lm_head_cuda)->Apply(lm_head_shapes);

}  // namespace

BENCHMARK_MAIN();
