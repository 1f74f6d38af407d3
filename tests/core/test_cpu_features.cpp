// CPU feature detection and the floating-point control state check (core/cpu_features.h).
#include <gtest/gtest.h>

#include <cfenv>
#include <string>

#include "core/cpu_features.h"
#include "core/device_info.h"
#include "core/fp_probe.h"

namespace {

// Restores the FP control register on scope exit, so a failing assertion cannot leak a bad state
// into later tests.
struct FpControlGuard {
  uint64_t saved = bl::fp_control_word();
  ~FpControlGuard() { bl::set_fp_control_word(saved); }
};

TEST(CpuFeatures, DetectsTheArchitecture) {
  bl::CpuFeatures f = bl::detect_cpu_features();
#if defined(__x86_64__)
  EXPECT_EQ(f.arch, "x86_64");
  EXPECT_FALSE(f.vendor.empty());
  EXPECT_TRUE(f.has("sse2"));  // part of the x86-64 base
  // Agrees with the compiler's own check used for the AVX2 kernels.
  EXPECT_EQ(f.has("avx2") && f.has("fma"), bl::cpu_has_avx2_fma());
  if (f.has("avx512f")) EXPECT_TRUE(f.has("avx2"));
#elif defined(__aarch64__)
  EXPECT_EQ(f.arch, "aarch64");
  EXPECT_TRUE(f.has("neon"));
#endif
  EXPECT_FALSE(f.has("no-such-feature"));
}

TEST(FpState, OkInTheTestProcess) {
  std::string message;
  EXPECT_TRUE(bl::fp_state_ok(&message)) << message;
  bl::FpState s = bl::read_fp_state();
  EXPECT_TRUE(s.ok()) << s.describe();
#if defined(__x86_64__) || defined(__aarch64__)
  EXPECT_TRUE(s.known);
  EXPECT_EQ(s.rounding, "nearest");
  EXPECT_FALSE(s.flush_to_zero);
  EXPECT_FALSE(s.denormals_are_zero);
#endif
}

// Sabotage arm: set flush-to-zero (and denormals-are-zero on x86) for a moment: the check must
// report it, and subnormal arithmetic must visibly change, then everything is restored.
TEST(FpState, SabotageFlushToZeroIsReported) {
#if defined(__x86_64__) || defined(__aarch64__)
  FpControlGuard guard;
#if defined(__x86_64__)
  const uint64_t ftz = 1u << 15, daz = 1u << 6;
#else
  const uint64_t ftz = 1u << 24, daz = 0;
#endif
  bl::set_fp_control_word(guard.saved | ftz);
  volatile float tiny = 0x1p-126f;
  volatile float half = 0.5f;
  float flushed = tiny * half;  // 2^-127 is subnormal: becomes 0 under FTZ
  std::string message;
  bool ok = bl::fp_state_ok(&message);
  bl::FpState s = bl::read_fp_state();
  bl::set_fp_control_word(guard.saved);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(s.flush_to_zero);
  EXPECT_TRUE(message.find("FTZ") != std::string::npos || message.find("FZ") != std::string::npos)
      << message;
  EXPECT_EQ(flushed, 0.0f) << "FTZ did not flush; the sabotage arm tests nothing";
  EXPECT_EQ(tiny * half, 0x1p-127f) << "subnormal lost after restoring the control word";
  if (daz != 0) {
    bl::set_fp_control_word(guard.saved | daz);
    bool ok_daz = bl::fp_state_ok(&message);
    bl::FpState sd = bl::read_fp_state();
    bl::set_fp_control_word(guard.saved);
    EXPECT_FALSE(ok_daz);
    EXPECT_TRUE(sd.denormals_are_zero);
    EXPECT_NE(message.find("DAZ"), std::string::npos) << message;
  }
  EXPECT_TRUE(bl::fp_state_ok(&message)) << message;
#else
  GTEST_SKIP() << "no readable FP control register on this architecture";
#endif
}

// Sabotage arm: a rounding mode other than nearest-even must be reported.
TEST(FpState, SabotageRoundingModeIsReported) {
#if defined(__x86_64__) || defined(__aarch64__)
  FpControlGuard guard;
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    std::string message;
    bool ok = bl::fp_state_ok(&message);
    bl::FpState s = bl::read_fp_state();
    std::fesetround(FE_TONEAREST);
    EXPECT_FALSE(ok);
    EXPECT_NE(s.rounding, "nearest");
    EXPECT_NE(message.find("rounding mode"), std::string::npos) << message;
  }
  EXPECT_TRUE(bl::read_fp_state().ok());
#else
  GTEST_SKIP() << "no readable FP control register on this architecture";
#endif
}

// The CUDA listing reports how the library was built, and never throws.
TEST(DeviceInfo, CudaStatusMatchesTheBuild) {
  bl::CudaStatus s = bl::cuda_status();
#if defined(BITLEARN_HAS_CUDA)
  EXPECT_TRUE(s.built);
  EXPECT_GT(s.runtime_version, 0);
  if (s.devices.empty()) EXPECT_FALSE(s.error.empty());
  for (const bl::CudaDeviceInfo& d : s.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.cc_major, 0);
    EXPECT_GT(d.total_memory_bytes, 0u);
  }
#else
  EXPECT_FALSE(s.built);
  EXPECT_TRUE(s.devices.empty());
#endif
}

}  // namespace
