// CUDA backend: the library's kernels must keep a*b+c unfused (--fmad=false).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "core/fp_probe.h"

namespace bl {
float sabotage_mul_add_contracted_cuda(float a, float b, float c);  // *_contracted.cu
}

namespace {
bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(ContractionCuda, KernelKeepsMultiplyAndAddSeparate) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(bl::probe_mul_add_cuda(bl::kProbeA, bl::kProbeB, bl::kProbeC), 0.0f);
}

TEST(ContractionCuda, SabotageFmadBuildIsDetected) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(bl::sabotage_mul_add_contracted_cuda(bl::kProbeA, bl::kProbeB, bl::kProbeC), 0x1p-24f);
}
}  // namespace
