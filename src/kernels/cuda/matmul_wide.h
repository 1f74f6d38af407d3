// matmul_wide.h: the warp-tiled CUDA GEMM kernels (variants 7..10: wide tiles, 11..13: small
// tiles, of matmul_cuda), internal to the CUDA backend. Same contract order as every other
// variant; only tiling and data movement differ.
#pragma once

#include <cuda_runtime.h>

#include <stddef.h>

#include "kernels/launch.h"
#include "kernels/matmul.h"

namespace bl {

// True when variant is one of the warp-tiled kernels of matmul_wide.cu (7..13).
inline bool matmul_wide_variant(int variant) { return variant >= 7 && variant <= 13; }

// Largest dynamic shared memory (bytes) warp-tiled variant 7..13 asks for, over the four transpose
// combinations; the variant runs only where the device's opt-in limit per block is at least this.
size_t matmul_wide_smem_bytes(int variant);

// Runs args (already validated, batch, m and n > 0) with warp-tiled variant 7..13 on stream.
// config.grid_cap bounds the grid (tiles are walked grid-stride); the bits never depend on it.
// Small-tile variants 11..13 only: bias (null or N device floats) is added to every row as the
// separate add op would (canonicalize(add(c, bias[n]))), and split runs the k leaves in parallel
// with the left-to-right fold done by the block that completes a tile (batch 1, default stream,
// two or more leaves).
void matmul_cuda_wide(int variant, const MatmulArgs& args, const float* a, const float* b, float* c,
                      const LaunchConfig& config, cudaStream_t stream, const float* bias = nullptr,
                      bool split = false);

}  // namespace bl
