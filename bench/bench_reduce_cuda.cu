// CUDA bandwidth of the large reductions against cudaMemcpy device to device.
//
// GB/s counts the bytes a kernel must move at least: sum reads n floats; rms_norm reads n floats
// twice (sum of squares, output pass) and writes n; softmax and log-softmax on rows of 4096 read n
// and write n (two passes: rows of up to 8192 stay on chip).
// cudaMemcpy D2D is counted as read + write (2 n floats), like bandwidthTest. Prints GB/s and the
// ratio to the cudaMemcpy rate (target >= 0.7).
// Softmax and log-softmax run on two inputs: "normal" (x in [0, 1)) and "wide" (x spread over
// (-90, 90): most e_i subnormal or zero), through softmax_cuda and through the on-chip kernel at
// several block sizes (capped by the kernel's threads for the row length: 128 for softmax, 256
// for log-softmax on rows of 4096); the exp math map (same bytes: one read, one write) is printed
// beside them for scale. The other forms of the on-chip kernel are timed by the kernel lab
// (dev/cuda/softmax_forms.cu).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/math_map.h"
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

int main(int argc, char** argv) {
  // "--softmax-once BLOCK": one on-chip softmax launch on 2^24 floats in rows of 4096 (for a
  // profiler).
  const bool once = argc == 3 && std::string(argv[1]) == "--softmax-once";
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
  if (once) {
    bl::LaunchConfig config;
    config.block = std::atoi(argv[2]);
    bl::softmax_rows_on_chip_cuda(x, (int64_t{1} << 24) / 4096, 4096, y, false, config);
    std::printf("softmax once block=%d\n", config.block);
    cudaFree(x);
    cudaFree(y);
    cudaFree(out);
    return 0;
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
    float* wide = nullptr;  // x spread over (-90, 90)
    CHECK(cudaMalloc(&wide, n * sizeof(float)));
    {
      std::vector<float> h(1 << 20);
      for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 7919) % 180001) * 0.001f - 90.0f;
      for (int64_t off = 0; off < n; off += h.size())
        CHECK(cudaMemcpy(wide + off, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    const float t_exp = best_ms([&] { bl::math_map_cuda(bl::MathFn::exp, x, y, n, bl::LaunchConfig()); });
    gbs = 2 * bytes / (t_exp * 1e-3) * 1e-9;
    std::printf("exp math map    %8.1f GB/s  ratio %.2f  (%.3f ms)\n", gbs, gbs / copy_gbs, t_exp);
    // softmax_cuda first, then the on-chip kernel at each block size.
    for (int log_form = 0; log_form < 2; ++log_form) {
      const char* op = log_form ? "log_softmax" : "softmax";
      for (int input = 0; input < 2; ++input) {
        const float* src = input ? wide : x;
        const char* in_name = input ? "wide" : "normal";
        float t = best_ms([&] { bl::softmax_cuda(src, n / 4096, 4096, y, log_form != 0); });
        gbs = 2 * bytes / (t * 1e-3) * 1e-9;
        std::printf("%-12s %-6s default            %8.1f GB/s  ratio %.2f  (%.3f ms, rows of 4096, 2 passes)\n",
                    op, in_name, gbs, gbs / copy_gbs, t);
        for (int block : {32, 64, 128, 256}) {
          bl::LaunchConfig config;
          config.block = block;
          t = best_ms([&] { bl::softmax_rows_on_chip_cuda(src, n / 4096, 4096, y, log_form != 0, config); });
          gbs = 2 * bytes / (t * 1e-3) * 1e-9;
          std::printf("%-12s %-6s on chip block=%-4d %8.1f GB/s  ratio %.2f  (%.3f ms)\n", op, in_name, block,
                      gbs, gbs / copy_gbs, t);
        }
      }
    }
    cudaFree(wide);
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(out);
  return 0;
}
