// launch.h: how a GPU kernel launch is shaped.
//
// Results never depend on the launch shape (docs/contract.md); the conformance tests run every
// CUDA op under several LaunchConfigs to prove it. Ops use the default unless a test asks.
#pragma once

namespace bl {

struct LaunchConfig {
  int block = 256;     // threads per block (a multiple of 32; kernels may round or clamp)
  int grid_cap = 0;    // upper bound on blocks in the grid, 0 = as many as the work needs
  int variant = 0;     // op-specific kernel choice (0 = the op's own choice; see below)
};

// What `variant` selects. Only the ops listed here read it; every other op ignores it. Each value
// names a kernel the op also runs on its own for some shapes, so a test can run that kernel on any
// shape; any other value leaves the choice to the op.
//
// matmul_cuda, matmul_bias_cuda: the tile shape (otherwise chosen by the shape of the product).
constexpr int kMatmulTileRegister64 = 1;   // 64 x 64 tiles, slabs staged through registers
constexpr int kMatmulTilePipe128x64 = 4;   // 128 x 64 tiles, cp.async pipeline
constexpr int kMatmulTilePipe128 = 6;      // 128 x 128 tiles, cp.async pipeline
constexpr int kMatmulTileWarp128 = 10;     // 128 x 128 warp tiles
constexpr int kMatmulTileSmall = 11;       // 32 x 64 small warp tiles over all of K
constexpr int kMatmulTileSmallSplit = 14;  // the same, k leaves in parallel where that applies
// exact_matmul_cuda: the plain kernel's output tile a side (otherwise 32 where M or N <= 32, else
// 64), or the residue products on int8 tensor cores wherever they apply (otherwise on products of
// at least 2^26 multiply-adds with M, N >= 32; CUDA only, K < 2^17).
constexpr int kExactGemmTile32 = 1;
constexpr int kExactGemmTile64 = 2;
constexpr int kExactGemmResidues = 3;
// The residue path with one modulus fewer than its basis needs: wrong wherever |T| exceeds the
// smaller product. Only the conformance test's sabotage arm uses it.
constexpr int kExactGemmResiduesShort = 4;
// attention_cuda: kAttentionVariantBlockRows (attention.h) runs the block-per-row kernel on every
// shape (otherwise only where the warp-rows kernel does not apply); kAttentionVariantWarpRows runs
// the warp-rows kernel wherever it applies (otherwise only where the tiled kernel does not);
// kAttentionVariantTiledRecompute makes the tiled kernel recompute its scores.
// softmax_cuda: kSoftmaxPassesVariant runs rows longer than 8192 through the three-pass kernels
// (otherwise only rows longer than the long-row kernel's 57344).
constexpr int kSoftmaxPassesVariant = 3;
// Transposing copy (elementwise_cuda.cu): 7 runs the 64 x 64 tiles (otherwise only where the
// 16-byte quads do not apply); 6 runs 32 x 32 tiles.

// The launch shapes every CUDA conformance test runs under.
inline const LaunchConfig kConformanceLaunchConfigs[] = {
    {256, 0, 0}, {64, 7, 1}, {1024, 3, 2}, {128, 1, 0}};

}  // namespace bl
