// test_selective_scan_cuda.cu: the CUDA selective scan equals selective_scan_reference bit for bit
// (outputs and final states) under every LaunchConfig of kConformanceLaunchConfigs, over the shapes
// of scan_cases.h with and without special values, with the decay factors computed in the kernel or
// given; a sabotaged reference (separate multiply and add in the state update) differs from the
// CUDA result. Skips without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "bitlearn/tensor.h"
#include "conformance/scan_cases.h"
#include "kernels/selective_scan.h"

namespace bl {
namespace {

#define BL_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device"

const Device kGpu = Device::cuda(0);

// The decay factors exp(dt * A[h, n]) of a case, [B, T, H, N], by plain contract calls.
std::vector<float> decay_of(const conformance::ScanCase& c) {
  const int64_t rows = c.shape.batch * c.shape.steps, H = c.shape.heads, N = c.shape.state;
  std::vector<float> d(static_cast<size_t>(rows * H * N));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n) d[(r * H + h) * N + n] = exp(mul(c.dt[r * H + h], c.A[h * N + n]));
  return d;
}

// Runs the CUDA scan on the case's inputs under cfg (with the decay factors given when
// with_decay); returns y and the final state (host).
void run_cuda(const conformance::ScanCase& c, const LaunchConfig& cfg, std::vector<float>* y, std::vector<float>* state,
              bool with_decay = false) {
  auto dev = [](const std::vector<float>& v) {
    return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, kGpu);
  };
  const Tensor x = dev(c.x), dt = dev(c.dt), A = dev(c.A), Bm = dev(c.Bm), Cm = dev(c.Cm), D = dev(c.D);
  const Tensor decay = dev(with_decay ? decay_of(c) : std::vector<float>{0.0f});
  const Tensor len = Tensor::from_vector(c.lengths, {static_cast<int64_t>(c.lengths.size())}, kGpu);
  Tensor st = dev(c.state0);
  Tensor out = Tensor::full({static_cast<int64_t>(c.y_ref.size())}, 3.0, DType::f32, kGpu);
  ScanArgs a;
  a.shape = c.shape;
  a.x = static_cast<const float*>(x.raw_data());
  a.dt = static_cast<const float*>(dt.raw_data());
  a.A = static_cast<const float*>(A.raw_data());
  a.Bm = static_cast<const float*>(Bm.raw_data());
  a.Cm = static_cast<const float*>(Cm.raw_data());
  a.D = c.with_d ? static_cast<const float*>(D.raw_data()) : nullptr;
  a.lengths = static_cast<const int64_t*>(len.raw_data());
  a.state = static_cast<float*>(st.raw_data());
  a.y = static_cast<float*>(out.raw_data());
  if (with_decay) a.decay = static_cast<const float*>(decay.raw_data());
  selective_scan_cuda(a, cfg);
  *y = out.to(Device::cpu()).to_vector<float>();
  *state = st.to(Device::cpu()).to_vector<float>();
}

TEST(SelectiveScanCuda, MatchesReferenceUnderEveryLaunchConfig) {
  BL_REQUIRE_GPU();
  uint64_t seed = 500;
  for (const ScanShape& s : conformance::scan_shapes()) {
    if (s.batch * s.heads * s.head_dim == 0) continue;  // nothing to launch; the CPU test covers it
    for (int special_every : {0, 13}) {
      for (bool with_d : {true, false}) {
        const conformance::ScanCase c = conformance::make_scan_case(s, seed += 10, special_every, with_d);
        for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
          std::vector<float> y, state;
          run_cuda(c, cfg, &y, &state);
          const std::string label = c.label + " block " + std::to_string(cfg.block) + " grid cap " +
                                    std::to_string(cfg.grid_cap);
          ASSERT_TRUE(conformance::bits_equal(c.y_ref, y, label + " y"));
          ASSERT_TRUE(conformance::bits_equal(c.state_ref, state, label + " state"));
          run_cuda(c, cfg, &y, &state, true);
          ASSERT_TRUE(conformance::bits_equal(c.y_ref, y, label + " y, decay given"));
          ASSERT_TRUE(conformance::bits_equal(c.state_ref, state, label + " state, decay given"));
        }
      }
    }
  }
}

TEST(SelectiveScanCuda, SabotagedReferenceDiffers) {
  BL_REQUIRE_GPU();
  conformance::ScanCase c = conformance::make_scan_case({1, 64, 4, 8, 16, 1}, 31, 0, true);
  // Sabotage: the state update as a separate multiply and add (two roundings instead of one fma).
  std::vector<float> sabotaged(c.y_ref.size()), st = c.state0;
  const int64_t T = 64, H = 4, P = 8, N = 16;
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t p = 0; p < P; ++p) {
      float* s = st.data() + (h * P + p) * N;
      for (int64_t t = 0; t < T; ++t) {
        const float dt = c.dt[t * H + h], x = c.x[(t * H + h) * P + p], u = mul(dt, x);
        float acc = 0.0f;
        for (int64_t n = 0; n < N; ++n) {
          s[n] = add(mul(exp(mul(dt, c.A[h * N + n])), s[n]), mul(u, c.Bm[t * N + n]));
          acc = n == 0 ? mul(s[0], c.Cm[t * N]) : fma(s[n], c.Cm[t * N + n], acc);
        }
        sabotaged[(t * H + h) * P + p] = fma(c.D[h], x, acc);
      }
    }
  }
  std::vector<float> y, state;
  run_cuda(c, LaunchConfig(), &y, &state);
  EXPECT_TRUE(conformance::bits_equal(c.y_ref, y, "cuda"));
  EXPECT_FALSE(conformance::bits_equal(sabotaged, y, "sabotage"));
}

}  // namespace
}  // namespace bl
