// The trainer's ops (src/lm/train_ops.h) on CUDA give the CPU's bits, outputs and every gradient,
// under every conformance launch shape. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/launch.h"
#include "lm/train_ops_cases.h"
#include "ops/op_util.h"

namespace bl::lm {
namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.raw_data(), cb.raw_data(), static_cast<size_t>(ca.numel()) * ca.element_size()) == 0;
}

TEST(LmTrainOpsCuda, EveryOpMatchesTheCpuUnderEveryLaunchShape) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (const auto& c : testing::train_op_cases()) {
    const std::vector<Tensor> cpu = c.run(Device::cpu(), 0);
    int shape = 0;
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      ScopedLaunchConfig scoped(cfg);
      const std::vector<Tensor> gpu = c.run(Device::cuda(0), 0);
      ASSERT_EQ(gpu.size(), cpu.size()) << c.name;
      for (size_t i = 0; i < cpu.size(); ++i)
        EXPECT_TRUE(same_bits(gpu[i], cpu[i])) << c.name << ", result " << i << ", launch shape " << shape;
      ++shape;
    }
  }
}

}  // namespace
}  // namespace bl::lm
