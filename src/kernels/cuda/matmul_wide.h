// matmul_wide.h: the warp-tiled CUDA GEMM kernels matmul_cuda ships (128 x 128 warp tiles for large
// products, 32 x 64 small tiles for products with few rows), internal to the CUDA backend. Same
// contract order as every other GEMM kernel; only tiling and data movement differ.
#pragma once

#include <cuda_runtime.h>

#include <stddef.h>

#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl {

// Largest dynamic shared memory (bytes) the 128 x 128 warp tiles ask for, over the four transpose
// combinations; they run only where the device's opt-in limit per block is at least this.
size_t matmul_warp_tiles_smem_bytes();

// The same for the 32 x 64 small tiles.
size_t matmul_small_tiles_smem_bytes();

// Runs args (already validated, batch, m and n > 0) with the 128 x 128 warp tiles on stream.
// config.grid_cap bounds the grid (tiles are walked grid-stride); the bits never depend on it.
void matmul_cuda_warp_tiles(const MatmulArgs& args, const float* a, const float* b, float* c,
                            const LaunchConfig& config, cudaStream_t stream);

// Runs args with the 32 x 64 small tiles on stream. bias (null or N device floats) is added to
// every row as the separate add op would (canonicalize(add(c, bias[n]))), and split runs the k
// leaves in parallel with the left-to-right fold done by the block that completes a tile (batch 1,
// default stream, two or more leaves).
void matmul_cuda_small_tiles(const MatmulArgs& args, const float* a, const float* b, float* c,
                             const LaunchConfig& config, cudaStream_t stream, const float* bias = nullptr,
                             bool split = false);

}  // namespace bl
