// test_estimator_checks_cuda.cu: the common estimator check across devices: for every registered
// name, data on the GPU either gives the CPU's model file and output bytes exactly, or fit throws a
// bl::Error (the estimator has no CUDA path; the test then skips, naming it). Skips without a GPU.
#include <gtest/gtest.h>

#include "ml_common/estimator_checks.h"

namespace bl::ml_common {
namespace {

class EstimatorChecksCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(EstimatorChecksCuda, CpuAndCudaGiveSameBytes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::string name = GetParam();
  CheckSpec s = check_spec(name);
  if (!s.fixed_X.empty()) GTEST_SKIP() << name << ": imported model (its data come from a file)";
  Dataset cpu = spec_dataset(s, 48, 1), test = spec_dataset(s, 48, 2);
  Dataset gpu;
  gpu.X = cpu.X.to(Device::cuda(0));
  if (cpu.y.defined()) gpu.y = cpu.y.to(Device::cuda(0));
  auto on_cpu = fit_by_spec(name, s, cpu);
  std::unique_ptr<ml::Estimator> on_gpu;
  try {
    on_gpu = fit_by_spec(name, s, gpu);
  } catch (const Error& e) {
    GTEST_SKIP() << name << " has no CUDA path: " << e.what();
  }
  EXPECT_EQ(on_gpu->to_json_text(), on_cpu->to_json_text()) << name << ": model file differs on CUDA";
  EXPECT_TRUE(outputs_of(*on_gpu, test.X.to(Device::cuda(0))) == outputs_of(*on_cpu, test.X))
      << name << ": outputs differ on CUDA";
}

INSTANTIATE_TEST_SUITE_P(Registry, EstimatorChecksCuda, ::testing::ValuesIn(ml::estimator_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace bl::ml_common
