// launch.h: how a GPU kernel launch is shaped.
//
// Results never depend on the launch shape (docs/contract.md); the conformance tests run every
// CUDA op under several LaunchConfigs to prove it. Ops use the default unless a test asks.
#pragma once

namespace bl {

struct LaunchConfig {
  int block = 256;     // threads per block (a multiple of 32; kernels may round or clamp)
  int grid_cap = 0;    // upper bound on blocks in the grid, 0 = as many as the work needs
  int variant = 0;     // op-specific tile-shape choice (0 = default)
};

// The launch shapes every CUDA conformance test runs under.
inline const LaunchConfig kConformanceLaunchConfigs[] = {
    {256, 0, 0}, {64, 7, 1}, {1024, 3, 2}, {128, 1, 0}};

}  // namespace bl
