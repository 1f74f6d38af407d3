// test_conformance_driver.cpp: the conformance driver on the CPU: every case list of case_lists.h
// on every ISA variant this CPU supports at threads 1, 2 and 3, memcmp against the scalar
// reference; and each list's sabotage arms, which the same comparison must reject.
#include "conformance/case_lists.h"

namespace bl::conformance {
namespace {

class ConformanceDriver : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceDriver, MatchesReference) {
  run_case_list(case_list(GetParam()), cpu_backend_configs());
}

TEST_P(ConformanceDriver, SabotageRejected) {
  expect_sabotage_rejected(case_list(GetParam()), cpu_backend_configs().back());
}

INSTANTIATE_TEST_SUITE_P(Cpu, ConformanceDriver, ::testing::ValuesIn(case_list_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The driver's own comparison: a dtype, shape or single-byte difference is reported with the
// element that differs.
TEST(ConformanceDriverSelf, ComparisonNamesTheDifference) {
  Tensor a = Tensor::from_vector(std::vector<float>{1.0f, 2.0f, 3.0f}, {3});
  Tensor b = copy(a);
  EXPECT_TRUE(outputs_equal({a}, {b}, "same"));
  ::testing::AssertionResult r = outputs_equal({a}, {flip_lowest_bit(b)}, "ctx");
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("element 1"), std::string::npos) << r.message();
  EXPECT_FALSE(outputs_equal({a}, {a.reshape({3, 1})}, "shape"));
  EXPECT_FALSE(outputs_equal({a}, {a.to(DType::i32)}, "dtype"));
  EXPECT_FALSE(outputs_equal({a}, {a, a}, "count"));
}

// Every list has cases, and every backend configuration is labelled distinctly.
TEST(ConformanceDriverSelf, ListsAndBackends) {
  for (const CaseList& l : case_lists()) EXPECT_FALSE(l.build().empty()) << l.name;
  std::vector<BackendConfig> cpu = cpu_backend_configs();
  EXPECT_GE(cpu.size(), 3u);
  for (size_t i = 0; i < cpu.size(); ++i)
    for (size_t j = i + 1; j < cpu.size(); ++j) EXPECT_NE(cpu[i].label(), cpu[j].label());
  EXPECT_EQ(cuda_backend_configs().size(), sizeof(kConformanceLaunchConfigs) / sizeof(kConformanceLaunchConfigs[0]));
}

}  // namespace
}  // namespace bl::conformance
