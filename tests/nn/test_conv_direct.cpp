// The direct stride-1 convolution kernels (kernels/conv_direct.h) against the patch-matrix
// GEMM they replace: forward, weight gradient and input gradient keep every bit, under every ISA
// variant this CPU runs, with more than one k leaf, ragged row tails, output channels that some
// variants do not take (the GEMM path then runs) and non-finite, signed-zero and subnormal values;
// and the SIMD tile max pooling against the tile_max kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "bitlearn/nn.h"
#include "core/isa.h"

namespace bl::nn {
namespace {

std::vector<float> values(int64_t count, uint64_t seed, bool specials) {
  std::vector<float> v(static_cast<size_t>(count));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& f : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    f = static_cast<float>(static_cast<int64_t>(s >> 40) - (int64_t{1} << 23)) / static_cast<float>(int64_t{1} << 23);
  }
  if (specials && count > 40) {
    v[3] = -0.0f;
    v[11] = 1e-41f;
    v[17] = -3e-39f;
    v[29] = std::numeric_limits<float>::infinity();
    v[37] = std::numeric_limits<float>::quiet_NaN();
  }
  return v;
}

struct Case {
  int64_t n, h, w, c, oc, kh, kw, ph, pw;
  bool specials;
};

struct Result {
  std::string y, dw, dx;
};

// The layer's conv2d (direct kernels where they fit) and its gradients for output gradient g.
Result layer(const Tensor& x, const Tensor& w, const Tensor& g, const Window2d& win) {
  ag::Var xv(x, true), wv(w, true);
  ag::Var y = conv2d(xv, wv, ag::Var(), win, 1);
  ag::backward(y, g);
  return {y.value().digest(), wv.grad().digest(), xv.grad().digest()};
}

// The same products as contract GEMMs over explicit patch matrices.
Result reference(const Case& k, const Tensor& x, const Tensor& w, const Tensor& g, const Window2d& win) {
  ag::NoGradGuard no_grad;
  const int64_t oh = win.out_h(k.h), ow = win.out_w(k.w), kt = k.kh * k.kw * k.c;
  Tensor cols = extract_patches(ag::Var(x), win, 0.0f).value().reshape({k.n * oh * ow, kt});
  Tensor y = matmul(cols, w.reshape({k.oc, kt}), false, true).reshape({k.n, oh, ow, k.oc});
  Tensor g2 = g.reshape({k.n * oh * ow, k.oc});
  Tensor dw = matmul(g2, cols, true, false).reshape(w.shape());
  Window2d back{k.kh, k.kw, 1, 1, k.kh - 1 - k.ph, k.kw - 1 - k.pw, 1, 1};
  Tensor gcols = extract_patches(ag::Var(g), back, 0.0f).value().reshape({k.n * k.h * k.w, k.kh * k.kw * k.oc});
  std::vector<float> wf = w.to_vector<float>(), rot(static_cast<size_t>(k.c * k.kh * k.kw * k.oc));
  for (int64_t ci = 0; ci < k.c; ++ci)
    for (int64_t ky = 0; ky < k.kh; ++ky)
      for (int64_t kx = 0; kx < k.kw; ++kx)
        for (int64_t o = 0; o < k.oc; ++o)
          rot[((ci * k.kh + ky) * k.kw + kx) * k.oc + o] =
              wf[((o * k.kh + k.kh - 1 - ky) * k.kw + k.kw - 1 - kx) * k.c + ci];
  Tensor r = Tensor::from_vector(rot, {k.c, k.kh * k.kw * k.oc});
  Tensor dx = matmul(gcols, r, false, true).reshape({k.n, k.h, k.w, k.c});
  return {y.digest(), dw.digest(), dx.digest()};
}

TEST(NnConvDirect, EveryProductKeepsTheGemmBits) {
  const std::vector<Case> cases = {
      {2, 7, 9, 1, 16, 3, 3, 1, 1, false},    // one input channel, a ragged row
      {2, 6, 13, 16, 16, 3, 3, 1, 1, true},   // the residual block's shape, smaller
      {1, 5, 17, 16, 32, 3, 3, 0, 0, true},   // no padding: the input gradient pads by 2
      {1, 6, 6, 32, 48, 3, 3, 1, 1, true},    // K = 288 and 432: two leaves each way
      {1, 4, 5, 64, 64, 3, 2, 1, 1, false},   // a 3 x 2 window, K = 384
      {2, 5, 7, 3, 8, 3, 3, 1, 1, true},      // 8 output channels: AVX-512 keeps the GEMM path
      {3, 14, 14, 16, 16, 3, 3, 1, 1, false}, // 588 pixels: three leaves of the weight gradient
      {1, 9, 30, 8, 16, 5, 5, 2, 2, true},    // a 5 x 5 window, 30-pixel rows
  };
  const Isa before = active_isa();
  int direct_variants = 0;
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    set_active_isa(isa);
    direct_variants += isa != Isa::scalar;
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& k = cases[i];
      SCOPED_TRACE(std::string(isa_name(isa)) + " case " + std::to_string(i));
      Window2d win{k.kh, k.kw, 1, 1, k.ph, k.pw, 1, 1};
      const int64_t oh = win.out_h(k.h), ow = win.out_w(k.w);
      Tensor x = Tensor::from_vector(values(k.n * k.h * k.w * k.c, 3 * i + 1, k.specials), {k.n, k.h, k.w, k.c});
      Tensor w = Tensor::from_vector(values(k.oc * k.kh * k.kw * k.c, 3 * i + 2, k.specials), {k.oc, k.kh, k.kw, k.c});
      Tensor g = Tensor::from_vector(values(k.n * oh * ow * k.oc, 3 * i + 3, false), {k.n, oh, ow, k.oc});
      Result got = layer(x, w, g, win), want = reference(k, x, w, g, win);
      EXPECT_EQ(got.y, want.y);
      EXPECT_EQ(got.dw, want.dw);
      EXPECT_EQ(got.dx, want.dx);
    }
  }
  set_active_isa(before);
  if (direct_variants == 0) GTEST_SKIP() << "no SIMD variant on this CPU: only the GEMM path ran";
}

// Max pooling over tiles: the SIMD rows (AVX2, AVX-512) against the tile_max kernel (the scalar
// variant runs it), with ties between equal values, +0 / -0, both infinities and NaNs in windows.
TEST(NnConvDirect, TileMaxPoolingKeepsItsBits) {
  const Isa before = active_isa();
  for (int64_t k : {2, 3}) {
    for (int64_t c : {16, 5, 80}) {
      const int64_t n = 2, h = 6 * k, w = 4 * k;
      std::vector<float> xs = values(n * h * w * c, 7 * k + c, false);
      for (size_t i = 0; i < xs.size(); ++i) {
        if (i % 7 == 0) xs[i] = 0.5f;  // ties
        if (i % 11 == 0) xs[i] = (i % 22 == 0) ? -0.0f : 0.0f;
        if (i % 97 == 0) xs[i] = std::numeric_limits<float>::quiet_NaN();
        if (i % 89 == 0) xs[i] = -std::numeric_limits<float>::quiet_NaN();
        if (i % 83 == 0) xs[i] = (i % 2) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
      }
      Tensor x = Tensor::from_vector(xs, {n, h, w, c});
      Tensor g = Tensor::from_vector(values(n * (h / k) * (w / k) * c, 5 * k + c, false), {n, h / k, w / k, c});
      std::vector<std::string> ys, dxs;
      for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
        if (!isa_supported(isa)) continue;
        set_active_isa(isa);
        MaxPool2d pool(k);
        ag::Var xv(x, true);
        ag::Var y = pool.forward(xv);
        ag::backward(y, g);
        ys.push_back(y.value().digest());
        dxs.push_back(xv.grad().digest());
      }
      for (size_t i = 1; i < ys.size(); ++i) {
        EXPECT_EQ(ys[i], ys[0]) << "k=" << k << " c=" << c << " variant " << i;
        EXPECT_EQ(dxs[i], dxs[0]) << "k=" << k << " c=" << c << " variant " << i;
      }
    }
  }
  set_active_isa(before);
}

}  // namespace
}  // namespace bl::nn
