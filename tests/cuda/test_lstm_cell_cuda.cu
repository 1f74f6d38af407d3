// CUDA conformance of the fused LSTM cell step (kernels/lstm_cell.h: lstm_cell_forward_cuda,
// lstm_cell_backward_cuda): equal to the references bit for bit under every launch shape of
// kConformanceLaunchConfigs, over shapes with N or H = 0, 1, odd and large, strided operands and
// special values (NaN, +-inf, +-0), with and without the next step's gradients, the dx copy (plain
// and with +0) and dc_prev. Sabotage arm: a shifted c_prev must change the outputs.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "kernels/launch.h"
#include "kernels/lstm_cell.h"

namespace bl {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// A host vector and its device copy.
struct Buf {
  std::vector<float> host;
  float* dev = nullptr;
  explicit Buf(std::vector<float> h) : host(std::move(h)) {
    EXPECT_EQ(cudaMalloc(&dev, std::max<size_t>(1, host.size()) * sizeof(float)), cudaSuccess);
    upload();
  }
  ~Buf() { cudaFree(dev); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  void upload() {
    if (!host.empty())
      EXPECT_EQ(cudaMemcpy(dev, host.data(), host.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<float> download() const {
    std::vector<float> h(host.size());
    if (!h.empty()) EXPECT_EQ(cudaMemcpy(h.data(), dev, h.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

std::vector<float> data(int64_t n, uint64_t seed, float scale) {
  test_rng::SplitMix64 rng(seed);
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, float_of(0x7FC00000u), float_of(0xFFC00001u),
                            float_of(0x7F800000u), float_of(0xFF800000u), float_of(0x00000001u), 1e30f};
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    uint64_t r = rng.next();
    x = r % 5 == 0 ? specials[(r >> 8) % 10] : rng.uniform_pm1() * scale;
  }
  return v;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

struct Shape2 {
  int64_t n, h;
};
const Shape2 kShapes[] = {{0, 5}, {3, 0}, {1, 1}, {2, 3}, {7, 13}, {64, 64}, {33, 100}, {128, 256}, {5, 1031}};

TEST(LstmCellCuda, ForwardEqualsReferenceUnderEveryLaunchShape) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (const Shape2& s : kShapes) {
    const int64_t xs = 4 * s.h * 3 + 5, ss = s.h * 3 + 2, seed = s.n * 31 + s.h;
    Buf x(data(s.n * xs, seed, 4.0f)), hw(data(s.n * 4 * s.h, seed + 1, 4.0f)),
        bias(data(4 * s.h, seed + 2, 1.0f)), cp(data(s.n * s.h, seed + 3, 3.0f));
    std::vector<float> acts(s.n * 4 * s.h, 7.0f), c(s.n * s.h, 7.0f), seq(s.n * ss, 7.0f);
    std::vector<float> tc = c, h = c;
    LstmCellForward r;
    r.n = s.n;
    r.h = s.h;
    r.x = x.host.data();
    r.x_stride = xs;
    r.hw = hw.host.data();
    r.bias = bias.host.data();
    r.c_prev = cp.host.data();
    r.acts = acts.data();
    r.c = c.data();
    r.tc = tc.data();
    r.h_out = h.data();
    r.seq = seq.data();
    r.seq_stride = ss;
    lstm_cell_forward_reference(r);
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      Buf d_acts(std::vector<float>(acts.size(), 7.0f)), d_c(std::vector<float>(c.size(), 7.0f)),
          d_tc(std::vector<float>(c.size(), 7.0f)), d_h(std::vector<float>(c.size(), 7.0f)),
          d_seq(std::vector<float>(seq.size(), 7.0f));
      LstmCellForward a = r;
      a.x = x.dev;
      a.hw = hw.dev;
      a.bias = bias.dev;
      a.c_prev = cp.dev;
      a.acts = d_acts.dev;
      a.c = d_c.dev;
      a.tc = d_tc.dev;
      a.h_out = d_h.dev;
      a.seq = d_seq.dev;
      lstm_cell_forward_cuda(a, cfg);
      EXPECT_TRUE(same(d_acts.download(), acts)) << "acts N=" << s.n << " H=" << s.h << " block " << cfg.block;
      EXPECT_TRUE(same(d_c.download(), c)) << "c N=" << s.n << " H=" << s.h << " block " << cfg.block;
      EXPECT_TRUE(same(d_tc.download(), tc)) << "tc N=" << s.n << " H=" << s.h << " block " << cfg.block;
      EXPECT_TRUE(same(d_h.download(), h)) << "h N=" << s.n << " H=" << s.h << " block " << cfg.block;
      EXPECT_TRUE(same(d_seq.download(), seq)) << "seq N=" << s.n << " H=" << s.h << " block " << cfg.block;
      if (s.n * s.h >= 64 && cfg.block == 256) {  // sabotage arm: c_prev + 0.5 everywhere changes c
        for (float& v : cp.host) v = v + 0.5f;
        cp.upload();
        lstm_cell_forward_cuda(a, cfg);
        EXPECT_FALSE(same(d_c.download(), c)) << "sabotage arm not caught";
        cp.host = data(s.n * s.h, seed + 3, 3.0f);
        cp.upload();
      }
    }
  }
}

TEST(LstmCellCuda, BackwardEqualsReferenceUnderEveryLaunchShape) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (const Shape2& s : kShapes) {
    for (int variant = 0; variant < 8; ++variant) {
      const bool has_next = variant & 1, with_dx = variant & 2, add_zero = variant & 4, with_dc = variant != 0;
      const int64_t ds = s.h * 2 + 1, xs = 4 * s.h * 2 + 3, seed = s.n * 97 + s.h * 5 + variant;
      Buf dh(data(s.n * ds, seed, 2.0f)), dsn(data(s.n * s.h, seed + 1, 2.0f)), dcn(data(s.n * s.h, seed + 2, 2.0f)),
          acts(data(s.n * 4 * s.h, seed + 3, 1.0f)), tc(data(s.n * s.h, seed + 4, 1.0f)),
          cp(data(s.n * s.h, seed + 5, 3.0f));
      std::vector<float> dg(s.n * 4 * s.h, 7.0f), dx(s.n * xs, 7.0f), dcp(s.n * s.h, 7.0f);
      LstmCellBackward r;
      r.n = s.n;
      r.h = s.h;
      r.dh_out = dh.host.data();
      r.dh_out_stride = ds;
      r.dstate_next = has_next ? dsn.host.data() : nullptr;
      r.dc_next = has_next ? dcn.host.data() : nullptr;
      r.acts = acts.host.data();
      r.tc = tc.host.data();
      r.c_prev = cp.host.data();
      r.dgates = dg.data();
      r.dx = with_dx ? dx.data() : nullptr;
      r.dx_stride = xs;
      r.dx_add_zero = add_zero;
      r.dc_prev = with_dc ? dcp.data() : nullptr;
      lstm_cell_backward_reference(r);
      for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
        Buf d_dg(std::vector<float>(dg.size(), 7.0f)), d_dx(std::vector<float>(dx.size(), 7.0f)),
            d_dcp(std::vector<float>(dcp.size(), 7.0f));
        LstmCellBackward a = r;
        a.dh_out = dh.dev;
        a.dstate_next = has_next ? dsn.dev : nullptr;
        a.dc_next = has_next ? dcn.dev : nullptr;
        a.acts = acts.dev;
        a.tc = tc.dev;
        a.c_prev = cp.dev;
        a.dgates = d_dg.dev;
        a.dx = with_dx ? d_dx.dev : nullptr;
        a.dc_prev = with_dc ? d_dcp.dev : nullptr;
        lstm_cell_backward_cuda(a, cfg);
        EXPECT_TRUE(same(d_dg.download(), dg)) << "dgates N=" << s.n << " H=" << s.h << " v" << variant << " block " << cfg.block;
        EXPECT_TRUE(same(d_dx.download(), dx)) << "dx N=" << s.n << " H=" << s.h << " v" << variant << " block " << cfg.block;
        EXPECT_TRUE(same(d_dcp.download(), dcp)) << "dc_prev N=" << s.n << " H=" << s.h << " v" << variant << " block " << cfg.block;
      }
    }
  }
}

}  // namespace
}  // namespace bl
