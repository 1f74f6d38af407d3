// CUDA contract GEMM: SIMT fp32 (no tensor cores: their internal accumulation is not the
// contract's), shared-memory tiles, register blocking. The kernels are the templates of
// matmul_tile.cuh (slabs staged through registers, or copied by a cp.async pipeline) and
// matmul_wide.cuh (warp tiles); this file picks the tile shape by the shape of the product (or by
// LaunchConfig::variant, launch.h). Every tile shape gives the same bits, so the choice changes
// only speed. Further tile shapes are compared in the kernel lab (dev/cuda/gemm_tiles.cu).
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/launch_util.cuh"
#include "kernels/cuda/matmul_tile.cuh"
#include "kernels/cuda/matmul_wide.h"
#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl {
namespace {

// Opt-in shared memory per block of the current device, bytes.
int64_t current_smem_optin() { return cuda::current_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(0); }

// True when the leaf-parallel mode of the small tiles may split this product: a single product
// (batch 1) on the default stream (where products share its scratch one after another) with two or
// more k leaves. Otherwise the small tiles run over all of K in one launch.
bool leaf_parallel_applies(const MatmulArgs& args, void* stream) {
  return stream == nullptr && args.batch == 1 && gemm_k_leaf_count(args.k) >= 2;
}

// The tile by shape (times: H100, bench_gemm_cuda's BM_step shapes, bench/results/gpu/2026-12-06-tiles):
// - K <= 64 (the attention backward's scores): the small warp tiles (32 x 64); a big tile spends
//   most of its time filling and draining (48 x 256 x 2048 x 64: 0.154 ms vs 0.173 warp tiles).
// - N <= 64 (the attention backward's key and value gradients): the 128 x 64 pipeline where it
//   fills the device, as a 128 x 128 tile leaves half its columns idle (48 x 2048 x 64 x 256:
//   0.103 ms vs 0.207).
// - A 128 x 128 tile when it gives every multiprocessor a tile without a nearly empty last wave
//   (the warp tiles where the device has the shared memory for them, else the 128 x 128 pipeline).
// - A second wave of big tiles holding less than half a wave (4 x 768 x 768 x 2048 weight
//   gradients: 144 tiles on 132 multiprocessors; the 1000-token prefill's 1000 x 2304 x 768): the
//   small warp tiles (0.358 ms vs 0.387 on 128 x 64 tiles and 0.454 on warp tiles; 0.140 vs 0.173).
// - Else the 128 x 64 pipeline when that fills the device, else the small warp tiles, with the k
//   leaves run in parallel and folded in the same launch only where the small tiles alone would not
//   give every multiprocessor one (a 128-token prefill; at 1000 rows the split is slower: 1000 x
//   768 x 3072 0.224 ms split vs 0.187).
// Where a device gives a block less shared memory (AMD: 64 KiB per workgroup), each choice falls
// back to the next smaller tile that fits; the 64 x 64 tile's static buffers always do.
int tile_by_shape(const MatmulArgs& args, void* stream) {
  const int64_t sms = cuda::current_multiprocessors();
  const int64_t optin = current_smem_optin();
  const int64_t batch = args.batch, m = args.m, n = args.n;
  auto tiles = [&](int64_t bm, int64_t bn) { return batch * ((m + bm - 1) / bm) * ((n + bn - 1) / bn); };
  const bool fits_warp128 = static_cast<int64_t>(matmul_warp_tiles_smem_bytes()) <= optin;
  const bool fits_pipe128 = static_cast<int64_t>(pipe_smem_bytes<128, 128, 32, 3>()) <= optin;
  const bool fits_pipe128x64 = static_cast<int64_t>(pipe_smem_bytes<128, 64, 16, 4>()) <= optin;
  const bool fits_small = static_cast<int64_t>(matmul_small_tiles_smem_bytes()) <= optin;
  auto small = [&] {
    if (!fits_small) return kMatmulTileRegister64;
    return leaf_parallel_applies(args, stream) && tiles(32, 64) < sms ? kMatmulTileSmallSplit : kMatmulTileSmall;
  };
  if (args.k <= 64 && fits_small) return kMatmulTileSmall;
  if (n <= 64 && fits_pipe128x64 && tiles(128, 64) >= sms) return kMatmulTilePipe128x64;
  const int64_t big = tiles(128, 128);
  const bool ragged = big < 2 * sms && 2 * (big - sms) < sms;
  if (big >= sms && !ragged) {
    if (fits_warp128) return kMatmulTileWarp128;
    if (fits_pipe128) return kMatmulTilePipe128;
  }
  if (big >= sms && ragged && fits_small) return kMatmulTileSmall;
  if (tiles(128, 64) >= sms && fits_pipe128x64) return kMatmulTilePipe128x64;
  return small();
}

// c[m * ldc + n] = canonicalize(add(c[m * ldc + n], bias[n])) for every batch entry: the row
// broadcast add of the Tensor add op, after a tile that does not add the bias as it stores.
__global__ void add_bias_rows_kernel(float* c, const float* bias, int64_t batch, int64_t m, int64_t n,
                                     int64_t ldc, int64_t stride_c) {
  const int64_t total = batch * m * n;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < total;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = g % n, i = (g / n) % m, bi = g / (m * n);
    float* out = c + bi * stride_c + i * ldc + j;
    *out = canonicalize(add(*out, bias[j]));
  }
}

// The tile that runs: the one config.variant names (launch.h), else the choice by shape.
int resolve_tile(const MatmulArgs& args, const LaunchConfig& config, void* stream) {
  switch (config.variant) {
    case kMatmulTileRegister64:
    case kMatmulTilePipe128x64:
    case kMatmulTilePipe128:
    case kMatmulTileWarp128:
    case kMatmulTileSmall:
    case kMatmulTileSmallSplit:
      return config.variant;
    default:
      return tile_by_shape(args, stream);
  }
}

// True when the tile adds the bias as it stores (the small tiles); the others leave it to
// add_bias_rows_kernel.
bool tile_fuses_bias(int tile) { return tile == kMatmulTileSmall || tile == kMatmulTileSmallSplit; }

// Runs the product with tile (bias: see matmul_bias_cuda; only the small tiles take it, the caller
// adds it after the others).
void run_tile(int tile, const MatmulArgs& args, const float* a, const float* b, float* c, const float* bias,
              const LaunchConfig& config, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (tile_fuses_bias(tile)) {
    const bool split = tile == kMatmulTileSmallSplit && leaf_parallel_applies(args, stream);
    matmul_cuda_small_tiles(args, a, b, c, config, s, bias, split);
    return;
  }
  if (tile == kMatmulTileWarp128) {
    matmul_cuda_warp_tiles(args, a, b, c, config, s);
    return;
  }
  MatmulDeviceArgs p;
  pipe_problem_sizes(args, p);
  p.trans_a = args.trans_a ? 1 : 0;
  p.trans_b = args.trans_b ? 1 : 0;
  p.tiles_m = p.tiles_n = 0;
  p.tiles_total = args.batch;
  switch (tile) {
    case kMatmulTilePipe128:  // 128 x 128 tiles, BK = 32, 3 cp.async stages, one block per multiprocessor
      launch_matmul_pipe<128, 128, 32, 3, 1, false>(p, args.batch, a, b, c, config, s);
      break;
    case kMatmulTilePipe128x64:  // 128 x 64 tiles (128 threads), BK = 16, 4 stages, three blocks
      launch_matmul_pipe<128, 64, 16, 4, 3, false>(p, args.batch, a, b, c, config, s);
      break;
    default:  // kMatmulTileRegister64: 64 x 64 tiles staged through registers, BK = 8
      launch_matmul<64, 64, 8, 4, 4, 1>(p, a, b, c, config, s);
      break;
  }
}

}  // namespace

void matmul_cuda(const MatmulArgs& args, const float* a, const float* b, float* c,
                 const LaunchConfig& config, void* stream) {
  matmul_check_args("matmul_cuda", args, a, b, c);
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  // The tile shape decides the block size (config.block is not used).
  run_tile(resolve_tile(args, config, stream), args, a, b, c, nullptr, config, stream);
}

void matmul_bias_cuda(const MatmulArgs& args, const float* a, const float* b, const float* bias, float* c,
                      const LaunchConfig& config, void* stream) {
  matmul_check_args("matmul_bias_cuda", args, a, b, c);
  BL_CHECK(bias != nullptr || args.n == 0, "matmul_bias_cuda: bias is null for a product with ", args.n,
           " columns");
  if (args.batch == 0 || args.m == 0 || args.n == 0) return;
  const int tile = resolve_tile(args, config, stream);
  const bool fused = tile_fuses_bias(tile);
  run_tile(tile, args, a, b, c, fused ? bias : nullptr, config, stream);
  if (fused) return;
  const cuda::GridShape g = cuda::grid_for(args.batch * args.m * args.n, config);
  add_bias_rows_kernel<<<g.blocks, g.threads, 0, static_cast<cudaStream_t>(stream)>>>(
      c, bias, args.batch, args.m, args.n, args.ldc, args.stride_c);
  BL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace bl
