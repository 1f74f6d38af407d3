// The build must not contract a*b+c into fma(a, b, c) (docs/contract.md, "No contraction").
#include <gtest/gtest.h>

#include "contract/arith.h"
#include "core/fp_probe.h"
#include "core/isa.h"

namespace bl {
float sabotage_mul_add_contracted(float a, float b, float c);  // tests/contract/*_contracted.cpp
}

namespace {

volatile float g_a = bl::kProbeA, g_b = bl::kProbeB, g_c = bl::kProbeC;

TEST(Contraction, ProbeInputsSeparateTheTwoForms) {
  // The inputs were chosen so that one and two roundings differ; otherwise the test proves nothing.
  EXPECT_EQ(bl::fma(g_a, g_b, g_c), 0x1p-24f);
  EXPECT_EQ(bl::add(bl::mul(g_a, g_b), g_c), 0.0f);
}

TEST(Contraction, BaselineBuildKeepsMultiplyAndAddSeparate) {
  EXPECT_EQ(bl::probe_mul_add(g_a, g_b, g_c), 0.0f);
}

TEST(Contraction, Avx2FmaBuildKeepsMultiplyAndAddSeparate) {
  if (!bl::cpu_has_avx2_fma()) GTEST_SKIP() << "CPU has no AVX2+FMA";
  EXPECT_EQ(bl::probe_mul_add_avx2(g_a, g_b, g_c), 0.0f);
}

TEST(Contraction, Avx512BuildKeepsMultiplyAndAddSeparate) {
  if (!bl::isa_supported(bl::Isa::avx512)) GTEST_SKIP() << "CPU has no AVX-512F/BW/DQ/VL";
  EXPECT_EQ(bl::probe_mul_add_avx512(g_a, g_b, g_c), 0.0f);
}

// Sabotage arm: the same expression compiled with contraction on must be caught by the check above.
TEST(Contraction, SabotageContractedBuildIsDetected) {
#if defined(__x86_64__)
  if (!bl::cpu_has_avx2_fma()) GTEST_SKIP() << "CPU has no FMA to contract into";
#endif
  EXPECT_NE(bl::sabotage_mul_add_contracted(g_a, g_b, g_c), 0.0f)
      << "a TU built with -ffp-contract=fast did not fuse; the contraction probe cannot fail";
}

}  // namespace
