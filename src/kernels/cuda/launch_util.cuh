// launch_util.cuh: grid shape from a LaunchConfig for the grid-stride kernels of this folder.
// The shape only decides which thread computes which element, never what is computed.
#pragma once

#include <cstdint>

#include "core/cuda_check.h"
#include "kernels/launch.h"

namespace bl::cuda {

struct GridShape {
  unsigned blocks;
  unsigned threads;
};

// Threads per block: cfg.block clamped to [32, 1024]; blocks: enough for n, at most cfg.grid_cap.
inline GridShape grid_for(int64_t n, const LaunchConfig& cfg) {
  int threads = cfg.block < 32 ? 32 : (cfg.block > 1024 ? 1024 : cfg.block);
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks < 1) blocks = 1;
  if (blocks > (int64_t(1) << 30)) blocks = int64_t(1) << 30;
  if (cfg.grid_cap > 0 && blocks > cfg.grid_cap) blocks = cfg.grid_cap;
  return GridShape{static_cast<unsigned>(blocks), static_cast<unsigned>(threads)};
}

// An attribute of the current device, read once per device index (a reading <= 0 is kept as 1);
// `beyond` for a device index past the 64 cached.
template <cudaDeviceAttr ATTR>
int64_t current_device_attribute(int64_t beyond) {
  static int64_t cached[64] = {};
  int dev = 0;
  BL_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) return beyond;
  if (cached[dev] == 0) {
    int v = 0;
    BL_CUDA_CHECK(cudaDeviceGetAttribute(&v, ATTR, dev));
    cached[dev] = v > 0 ? v : 1;
  }
  return cached[dev];
}

// Multiprocessors of the current device.
inline int64_t current_multiprocessors() { return current_device_attribute<cudaDevAttrMultiProcessorCount>(132); }

}  // namespace bl::cuda
