// CUDA bandwidth of the large reductions against cudaMemcpy device to device.
//
// GB/s counts the bytes a kernel must move at least: sum reads n floats; rms_norm reads n floats
// twice (sum of squares, output pass) and writes n; softmax and log-softmax on rows of 4096 read n
// and write n (two passes: rows of up to 8192 stay on chip); the figure counted as 4 passes, as
// earlier runs printed it (when rows went through memory five times), follows for comparison.
// cudaMemcpy D2D is counted as read + write (2 n floats), like bandwidthTest. Prints GB/s and the
// ratio to the cudaMemcpy rate (target >= 0.7).
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"

namespace {

#define CHECK(call)                                                             \
  do {                                                                          \
    cudaError_t e = (call);                                                     \
    if (e != cudaSuccess) {                                                     \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(e));             \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

template <class F>
float best_ms(F f, int reps = 10) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();  // warm up
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best) best = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP no CUDA device\n");
    return 0;
  }
  const int64_t n = int64_t{1} << 28;  // 1 GiB of floats
  float *x = nullptr, *y = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&out, 1024 * sizeof(float)));
  {
    std::vector<float> h(1 << 20);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i % 1000) * 0.001f;
    for (int64_t off = 0; off < n; off += h.size())
      CHECK(cudaMemcpy(x + off, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  const double bytes = static_cast<double>(n) * sizeof(float);
  float t_copy = best_ms([&] { cudaMemcpy(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice); });
  const double copy_gbs = 2 * bytes / (t_copy * 1e-3) * 1e-9;
  std::printf("n=%lld floats\n", static_cast<long long>(n));
  std::printf("cudaMemcpy D2D  %8.1f GB/s (read+write)\n", copy_gbs);
  try {
    float t_sum = best_ms([&] { bl::reduce_cuda(bl::ReduceOp::sum, x, bl::ReduceShape{1, n, 1}, out, 0); });
    double gbs = bytes / (t_sum * 1e-3) * 1e-9;
    std::printf("sum             %8.1f GB/s  ratio %.2f  (%.3f ms)\n", gbs, gbs / copy_gbs, t_sum);
    float t_rows = best_ms([&] { bl::reduce_cuda(bl::ReduceOp::sum, x, bl::ReduceShape{n / 4096, 4096, 1}, y, 0); });
    gbs = bytes / (t_rows * 1e-3) * 1e-9;
    std::printf("sum rows of 4096 %7.1f GB/s  ratio %.2f  (%.3f ms)\n", gbs, gbs / copy_gbs, t_rows);
    float t_rms = best_ms([&] { bl::rms_norm_cuda(x, n / 4096, 4096, nullptr, 1e-6f, y, nullptr); });
    gbs = 3 * bytes / (t_rms * 1e-3) * 1e-9;
    std::printf("rms_norm        %8.1f GB/s  ratio %.2f  (%.3f ms, 3 passes of bytes)\n", gbs, gbs / copy_gbs, t_rms);
    float t_soft = best_ms([&] { bl::softmax_cuda(x, n / 4096, 4096, y, false); });
    gbs = 2 * bytes / (t_soft * 1e-3) * 1e-9;
    std::printf("softmax         %8.1f GB/s  ratio %.2f  (%.3f ms, 2 passes of bytes; counted as 4: ratio %.2f)\n",
                gbs, gbs / copy_gbs, t_soft, 2 * gbs / copy_gbs);
    float t_log = best_ms([&] { bl::softmax_cuda(x, n / 4096, 4096, y, true); });
    gbs = 2 * bytes / (t_log * 1e-3) * 1e-9;
    std::printf("log_softmax     %8.1f GB/s  ratio %.2f  (%.3f ms, 2 passes of bytes; counted as 4: ratio %.2f)\n",
                gbs, gbs / copy_gbs, t_log, 2 * gbs / copy_gbs);
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(out);
  return 0;
}
