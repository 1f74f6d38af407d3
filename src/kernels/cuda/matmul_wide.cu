// matmul_wide.cu: the warp-tiled CUDA GEMM kernels matmul_cuda ships (matmul_wide.h), built from
// the templates of matmul_wide.cuh, and the scratch of their leaf-parallel mode.
#include "kernels/cuda/matmul_wide.h"

#include <algorithm>
#include <mutex>

#include "core/allocator.h"
#include "core/cuda_check.h"
#include "core/error.h"
#include "kernels/cuda/matmul_wide.cuh"

namespace bl {
namespace {

// Scratch of the leaf-parallel mode, one per device: leaf partials and per-tile arrival counters
// (zero between products: the folding block resets its tile's counter). The blocks come from the
// CUDA caching allocator (they count in cuda_memory_stats' bytes_in_use while held), grow on demand
// and are kept between products; cuda_empty_cache() gives them back (release_split_workspaces) and
// the next leaf-parallel product takes new ones. Only products on the default stream use them, one
// after another, so a grown or released block is reused by a later owner only after these kernels.
// matmul_split_mutex() guards the table from the lookup until the launch is queued.
constexpr int kMaxSplitDevices = 64;

MatmulSplitWorkspace* split_workspaces() {
  static MatmulSplitWorkspace* spaces = new MatmulSplitWorkspace[kMaxSplitDevices];  // never destroyed
  return spaces;
}

// Frees every device's workspace back to the pool (registered with cuda_empty_cache).
void release_split_workspaces() {
  std::lock_guard<std::mutex> lock(matmul_split_mutex());
  MatmulSplitWorkspace* spaces = split_workspaces();
  for (int dev = 0; dev < kMaxSplitDevices; ++dev) {
    MatmulSplitWorkspace& w = spaces[dev];
    cuda_free(w.partial, dev);
    cuda_free(w.counters, dev);
    w = MatmulSplitWorkspace{};
  }
}

// The shipped shapes (WideConfig<BM, BN, BK, TM, TN, WM, WN, stages, blocks per multiprocessor>).
// Warp tiles 64 x 32, 8 x 8 outputs per thread, BK 32: the by-shape choice for large products.
using WarpTiles128 = WideConfig<128, 128, 32, 8, 8, 64, 32, 3, 1>;
// Small tiles: 4 x 4 outputs per thread (128 threads), warp tiles 32 x 16, BK 32, four blocks per
// multiprocessor.
using SmallTiles32x64 = WideConfig<32, 64, 32, 4, 4, 32, 16, 3, 4>;

}  // namespace

std::mutex& matmul_split_mutex() {
  static std::mutex mu;
  return mu;
}

MatmulSplitWorkspace& matmul_split_workspace(int64_t partial_floats, int64_t counter_count) {
  static std::once_flag registered;
  std::call_once(registered, [] { cuda_register_scratch_release(release_split_workspaces); });
  int dev = 0;
  BL_CUDA_CHECK(cudaGetDevice(&dev));
  BL_CHECK(dev >= 0 && dev < kMaxSplitDevices, "matmul_cuda: device index ", dev, " outside 0..",
           kMaxSplitDevices - 1);
  MatmulSplitWorkspace& w = split_workspaces()[dev];
  if (partial_floats > w.partial_floats) {
    cuda_free(w.partial, dev);
    w.partial = nullptr;
    w.partial_floats = 0;
    w.partial = static_cast<float*>(cuda_allocate(static_cast<size_t>(partial_floats) * sizeof(float),
                                                  dev, "matmul_cuda leaf-parallel partials"));
    w.partial_floats = partial_floats;
  }
  if (counter_count > w.counter_count) {
    cuda_free(w.counters, dev);
    w.counters = nullptr;
    w.counter_count = 0;
    const size_t bytes = static_cast<size_t>(counter_count) * sizeof(unsigned);
    w.counters = static_cast<unsigned*>(cuda_allocate(bytes, dev, "matmul_cuda leaf-parallel counters"));
    BL_CUDA_CHECK(cudaMemset(w.counters, 0, bytes));  // ordered before the product on the default stream
    w.counter_count = counter_count;
  }
  return w;
}


size_t matmul_warp_tiles_smem_bytes() { return wide_smem_max<WarpTiles128>(); }

size_t matmul_small_tiles_smem_bytes() { return wide_smem_max<SmallTiles32x64>(); }

void matmul_cuda_warp_tiles(const MatmulArgs& args, const float* a, const float* b, float* c,
                            const LaunchConfig& config, cudaStream_t stream) {
  launch_wide<WarpTiles128, false>(args, a, b, c, nullptr, config, stream);
}

void matmul_cuda_small_tiles(const MatmulArgs& args, const float* a, const float* b, float* c,
                             const LaunchConfig& config, cudaStream_t stream, const float* bias, bool split) {
  launch_small<SmallTiles32x64>(args, a, b, c, bias, split, config, stream);
}

}  // namespace bl
