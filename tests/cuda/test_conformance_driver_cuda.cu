// test_conformance_driver_cuda.cu: the conformance driver on CUDA: the same case lists as the CPU
// (tests/conformance/case_lists.h) under every launch shape of kConformanceLaunchConfigs, memcmp
// against the scalar reference; and each list's sabotage arms, the one-bit arm on the GPU's own
// output. Skips when no GPU is present.
#include "conformance/case_lists.h"

namespace bl::conformance {
namespace {

class ConformanceDriverCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceDriverCuda, MatchesReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  run_case_list(case_list(GetParam()), cuda_backend_configs());
}

TEST_P(ConformanceDriverCuda, SabotageRejected) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  expect_sabotage_rejected(case_list(GetParam()), cuda_backend_configs().front());
}

INSTANTIATE_TEST_SUITE_P(Cuda, ConformanceDriverCuda, ::testing::ValuesIn(case_list_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace bl::conformance
