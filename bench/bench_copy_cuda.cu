// bench_copy_cuda: bandwidth of the CUDA transposing copy (bl::strided_copy_cuda on a transposed
// view, each kernel variant) and of a large elementwise add, each next to cudaMemcpy device to
// device on the same bytes. Bytes moved count read + write (2 n floats for a copy, 3 n for add),
// like bandwidthTest. Prints GB/s and the ratio to D2D; best of 10 timed runs after a warm-up.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "cuda_timing.cuh"
#include "kernels/backend.h"
#include "kernels/binary.h"
#include "kernels/launch.h"

namespace {

using bl::bench::best_ms;
using bl::bench::gb_per_s;

void run_size(int64_t side, float* x, float* y, float* z) {
  const int64_t n = side * side;
  const double bytes = static_cast<double>(n) * sizeof(float);
  const float t_d2d = best_ms([&] { cudaMemcpy(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice); });
  const double d2d = gb_per_s(2 * bytes, t_d2d);
  std::printf("%lldx%lld f32: cudaMemcpy D2D %8.1f GB/s (%.3f ms)\n", static_cast<long long>(side),
              static_cast<long long>(side), d2d, t_d2d);
  // y = x^T: y[r][c] = x[c][r], the view of x with shape (side, side) and strides (1, side).
  bl::StridedView sv;
  sv.ndim = 2;
  sv.shape[0] = side;
  sv.shape[1] = side;
  sv.strides[0] = 1;
  sv.strides[1] = side;
  bl::StridedView dv;
  dv.ndim = 1;
  dv.shape[0] = n;
  dv.strides[0] = 1;
  for (int variant : {0, 6, 7}) {  // 0: the default (16-byte quads), 6: 32 x 32, 7: 64 x 64
    bl::LaunchConfig cfg;
    cfg.variant = variant;
    const float t = best_ms([&] { bl::strided_copy_cuda(4, x, sv, y, dv, n, cfg); });
    const double gbs = gb_per_s(2 * bytes, t);
    std::printf("%lldx%lld f32: transpose-copy variant %d %8.1f GB/s  ratio to D2D %.2f  (%.3f ms)\n",
                static_cast<long long>(side), static_cast<long long>(side), variant, gbs, gbs / d2d, t);
  }
  bl::StridedView iv = dv;
  const float t_add = best_ms([&] {
    bl::binary_cuda(bl::BinaryOp::add, bl::DType::f32, x, iv, y, iv, z, n, bl::LaunchConfig{});
  });
  const double add_gbs = gb_per_s(3 * bytes, t_add);
  std::printf("%lldx%lld f32: add %8.1f GB/s  ratio to D2D %.2f  (%.3f ms)\n", static_cast<long long>(side),
              static_cast<long long>(side), add_gbs, add_gbs / d2d, t_add);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP no CUDA device\n");
    return 0;
  }
  const int64_t max_side = 16384;
  const size_t max_bytes = static_cast<size_t>(max_side * max_side) * sizeof(float);
  float *x = nullptr, *y = nullptr, *z = nullptr;
  BL_BENCH_CUDA_CHECK(cudaMalloc(&x, max_bytes));
  BL_BENCH_CUDA_CHECK(cudaMalloc(&y, max_bytes));
  BL_BENCH_CUDA_CHECK(cudaMalloc(&z, max_bytes));
  BL_BENCH_CUDA_CHECK(cudaMemset(x, 0x3F, max_bytes));
  BL_BENCH_CUDA_CHECK(cudaMemset(y, 0x40, max_bytes));
  for (int64_t side : {int64_t{8192}, max_side}) run_size(side, x, y, z);
  cudaFree(x);
  cudaFree(y);
  cudaFree(z);
  return 0;
}
