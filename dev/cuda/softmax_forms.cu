// softmax_forms: the kernel lab for the on-chip softmax. Every form of softmax_forms.cuh against the
// scalar reference, bit for bit (lengths around the lane, float4 and leaf sizes, scales that send
// e^(x - m) into the subnormal and zero range, special values, rows aimed at the lean division and
// maximum, unaligned and in-place rows, several launch shapes), then the time of each form and
// block size on rows of 4096 against cudaMemcpy device to device. Without a GPU every test skips.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "cuda/softmax_forms.cuh"

namespace bl::dev {
namespace {

using conformance::bits_equal;
using conformance::generate_floats;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct DeviceFloats {
  float* ptr = nullptr;
  size_t count = 0;
  explicit DeviceFloats(const std::vector<float>& host) : count(host.size()) {
    EXPECT_EQ(cudaMalloc(&ptr, (count + 4) * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), count * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(ptr); }
  std::vector<float> to_host(size_t offset, size_t n) const {
    std::vector<float> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), ptr + offset, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

std::string label(int form, int64_t rows, int64_t n, bool log_form, const LaunchConfig& c, const char* extra) {
  return std::string(log_form ? "log_softmax" : "softmax") + " form=" + std::to_string(form) +
         " rows=" + std::to_string(rows) + " n=" + std::to_string(n) + " block=" + std::to_string(c.block) +
         " grid_cap=" + std::to_string(c.grid_cap) + extra;
}

// Launch shapes each form runs under: the conformance shapes and one and two warps per row.
std::vector<LaunchConfig> launch_configs() {
  std::vector<LaunchConfig> configs(std::begin(kConformanceLaunchConfigs), std::end(kConformanceLaunchConfigs));
  configs.push_back(LaunchConfig{32, 0, 0});
  configs.push_back(LaunchConfig{64, 0, 0});
  return configs;
}

// Out of place at offset 0 and 1 (aligned and unaligned rows), and in place. x holds rows * n + 1
// floats.
void check_rows_of(const std::vector<float>& x, int64_t rows, int64_t n) {
  for (bool log_form : {false, true}) {
    for (int64_t offset : {0, 1}) {
      std::vector<float> expected(rows * n);
      softmax_reference(x.data() + offset, rows, n, expected.data(), log_form);
      for (int form : kSoftmaxForms) {
        for (const LaunchConfig& c : launch_configs()) {
          DeviceFloats dx(x), dy(std::vector<float>(x.size(), 0.0f));
          softmax_form_cuda(form, dx.ptr + offset, rows, n, dy.ptr + offset, log_form, c);
          ASSERT_TRUE(bits_equal(expected, dy.to_host(offset, rows * n),
                                 label(form, rows, n, log_form, c, offset ? " unaligned" : "")));
          softmax_form_cuda(form, dx.ptr + offset, rows, n, dx.ptr + offset, log_form, c);
          ASSERT_TRUE(bits_equal(expected, dx.to_host(offset, rows * n),
                                 label(form, rows, n, log_form, c, " in place")));
        }
      }
    }
  }
}

TEST(SoftmaxForms, LengthsAndScales) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (int64_t n : {1, 3, 4, 5, 31, 32, 33, 255, 257, 1021, 4095, 4096, 4097, 8191, 8192}) {
    const int64_t rows = n <= 257 ? 37 : 5;
    for (float scale : {1.0f, 30.0f, 100.0f}) check_rows_of(generate_floats(rows * n + 1, 1000 + n, scale), rows, n);
  }
}

TEST(SoftmaxForms, SpecialValuesAndManyRows) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  check_rows_of(generate_floats(64 * 4096 + 1, 77, 10.0f, 997), 64, 4096);
  check_rows_of(generate_floats(2000 * 12 + 1, 79, 5.0f), 2000, 12);
}

// Rows aimed at the lean forms: s an even integer (the tie rule runs), s = 1, zero maxima of
// either sign, NaN beside a finite maximum, all NaN, most e_i subnormal or zero.
TEST(SoftmaxForms, LeanDivisionAndMaximumRows) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const float ninf = float_of(0xFF800000u), nan = float_of(0x7FC00000u);
  for (int64_t n : {int64_t{4096}, int64_t{4093}, int64_t{100}}) {
    const int64_t rows = 11;
    std::vector<float> x = generate_floats(rows * n + 1, 900 + n, 1.0f);
    for (int64_t r = 0; r < rows; ++r) {
      float* xr = x.data() + r * n;
      const int64_t k = r == 0 ? std::min<int64_t>(n, 3994) : r == 1 ? n / 2 : r == 2 ? 1 : r == 3 ? 6 : 0;
      for (int64_t i = 0; i < n; ++i) {
        const float spread = -87.0f - 17.0f * static_cast<float>((i * 7919) % 1000) / 1000.0f;
        if (r <= 3) xr[i] = i < k ? 0.0f : spread;
        if (r == 4) xr[i] = i == 5 ? -0.0f : spread;
        if (r == 5) xr[i] = i == 5 ? -0.0f : i == 9 ? 0.0f : spread;
        if (r == 6) xr[i] = i % 3 == 0 ? -0.0f : ninf;
        if (r == 7 && i == n / 2) xr[i] = nan;
        if (r == 8) xr[i] = nan;
        if (r == 9) xr[i] = 90.0f * xr[i];
      }
    }
    check_rows_of(x, rows, n);
  }
}

// Sabotage arm: a reference dividing by a binary32 reciprocal must differ from every form.
TEST(SoftmaxForms, SabotageBinary32ReciprocalIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 8, n = 4096;
  const std::vector<float> x = generate_floats(rows * n, 4244, 4.0f);
  std::vector<float> sabotaged(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    const float m = reference_reduce_one<StepMax>(xr, n, 1, 0.0f);
    const float s = reference_reduce_one<StepExpShift>(xr, n, 1, m);
    const float inverse = div(1.0f, s);
    for (int64_t i = 0; i < n; ++i) sabotaged[r * n + i] = mul(exp(sub(xr[i], m)), inverse);
  }
  DeviceFloats dx(x), dy(x);
  for (int form : kSoftmaxForms) {
    softmax_form_cuda(form, dx.ptr, rows, n, dy.ptr, false, LaunchConfig{256, 0, 0});
    EXPECT_FALSE(bits_equal(sabotaged, dy.to_host(0, rows * n), "form " + std::to_string(form)));
  }
}

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

// Rows of 4096 over 1 GiB of floats: GB/s of each form and block size (one read, one write) and
// its ratio to cudaMemcpy device to device (read + write).
TEST(SoftmaxForms, Times) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = int64_t{1} << 28, row = 4096;
  std::vector<float> h(n);
  for (int64_t i = 0; i < n; ++i) h[i] = static_cast<float>(i % 1000) * 0.001f;
  DeviceFloats dx(h), dy(h);
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  const float t_copy = best_ms([&] { cudaMemcpy(dy.ptr, dx.ptr, n * sizeof(float), cudaMemcpyDeviceToDevice); });
  const double copy_gbs = bytes / (t_copy * 1e-3) * 1e-9;
  std::printf("cudaMemcpy D2D %8.1f GB/s\n", copy_gbs);
  for (bool log_form : {false, true}) {
    for (int form : kSoftmaxForms) {
      for (int block : {32, 64, 128, 256}) {
        const LaunchConfig c{block, 0, 0};
        const float t = best_ms([&] { softmax_form_cuda(form, dx.ptr, n / row, row, dy.ptr, log_form, c); });
        const double gbs = bytes / (t * 1e-3) * 1e-9;
        std::printf("%-12s form=%-4d block=%-4d %8.1f GB/s  ratio %.2f  (%.3f ms)\n",
                    log_form ? "log_softmax" : "softmax", form, block, gbs, gbs / copy_gbs, t);
      }
    }
  }
}

}  // namespace
}  // namespace bl::dev
