// CUDA conformance of the kernels of the training layers: max pooling over k x k tiles
// (kernels/tile_max.h: tile_max_cuda, tile_max_backward_cuda) and the convolution patch matrix
// (kernels/im2col.h: im2col_cuda) equal their references bit for bit under every launch shape of
// kConformanceLaunchConfigs, with ties, +-0 and NaN in the data. Sabotage arms: a perturbed
// gradient, and a patch matrix of another padding, must differ.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "kernels/im2col.h"
#include "kernels/launch.h"
#include "kernels/tile_max.h"

namespace bl {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(1, h.size()) * sizeof(T)), cudaSuccess);
  if (!h.empty()) EXPECT_EQ(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

template <class T>
std::vector<T> to_host(const T* p, size_t n) {
  std::vector<T> h(n);
  if (n) EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

std::vector<float> data(int64_t n, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, float_of(0x7FC00000u), float_of(0xFFC00001u),
                            float_of(0x7F800000u), float_of(0xFF800000u)};
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    uint64_t r = rng.next();
    x = r % 4 == 0 ? specials[(r >> 8) % 8] : rng.uniform_pm1();
  }
  return v;
}

TEST(TileMaxCuda, EqualsReferenceUnderEveryLaunchShape) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const TileMaxShape shapes[] = {{0, 4, 4, 3, 2}, {1, 2, 2, 1, 2}, {3, 14, 14, 16, 2}, {2, 3, 3, 7, 3},
                                 {5, 10, 5, 2, 5}, {64, 28, 28, 16, 2}, {3, 2, 34, 31, 2}};
  for (const TileMaxShape& s : shapes) {
    const int64_t in = s.n * s.h * s.w * s.c, out = s.out_numel();
    std::vector<float> x = data(in, static_cast<uint64_t>(in + s.k));
    std::vector<float> g = data(out, static_cast<uint64_t>(in * 3 + 1));
    std::vector<float> ref_y(out), ref_dx(in);
    std::vector<int32_t> ref_arg(out);
    tile_max_reference(x.data(), s, ref_y.data(), ref_arg.data());
    tile_max_backward_reference(g.data(), ref_arg.data(), s, ref_dx.data());
    float* dx_in = to_device(x);
    float* dg = to_device(g);
    float* dy = to_device(std::vector<float>(out));
    int32_t* darg = to_device(std::vector<int32_t>(out));
    float* ddx = to_device(std::vector<float>(in));
    for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
      tile_max_cuda(dx_in, s, dy, darg, cfg);
      tile_max_backward_cuda(dg, darg, s, ddx, cfg);
      std::vector<float> y = to_host(dy, out), dx = to_host(ddx, in);
      std::vector<int32_t> arg = to_host(darg, out);
      EXPECT_EQ(std::memcmp(y.data(), ref_y.data(), out * 4), 0) << "y, n=" << s.n << " k=" << s.k << " block " << cfg.block;
      EXPECT_EQ(std::memcmp(arg.data(), ref_arg.data(), out * 4), 0) << "arg, n=" << s.n << " block " << cfg.block;
      EXPECT_EQ(std::memcmp(dx.data(), ref_dx.data(), in * 4), 0) << "dx, n=" << s.n << " block " << cfg.block;
    }
    if (out > 0) {  // sabotage arm: every g element lands in dx once, so a changed g[0] must show
      std::vector<float> g2 = g;
      g2[0] = g2[0] == 1.0f ? 2.0f : 1.0f;
      float* dg2 = to_device(g2);
      tile_max_backward_cuda(dg2, darg, s, ddx);
      std::vector<float> dx2 = to_host(ddx, in);
      EXPECT_NE(std::memcmp(dx2.data(), ref_dx.data(), in * 4), 0) << "sabotage arm not caught";
      cudaFree(dg2);
    }
    cudaFree(dx_in);
    cudaFree(dg);
    cudaFree(dy);
    cudaFree(darg);
    cudaFree(ddx);
  }
}

TEST(Im2colCuda, EqualsReferenceUnderEveryLaunchShape) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  // n, h, w, c, kh, kw, sh, sw, ph, pw, dh, dw
  const Im2colShape shapes[] = {{0, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1},
                                {2, 5, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1}, {2, 6, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1},
                                {1, 9, 11, 5, 2, 3, 1, 2, 0, 1, 2, 1}, {64, 28, 28, 1, 3, 3, 1, 1, 1, 1, 1, 1},
                                {16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1}};
  const float pads[] = {0.0f, -0.0f, float_of(0xFF800000u), float_of(0x7FC01234u)};
  for (const Im2colShape& s : shapes) {
    const int64_t in = s.n * s.h * s.w * s.c, out = s.out_numel();
    std::vector<float> x = data(in, static_cast<uint64_t>(in + 17));
    float* dx = to_device(x);
    float* dout = to_device(std::vector<float>(out));
    for (float pad : pads) {
      std::vector<float> ref(out);
      im2col_reference(x.data(), s, pad, ref.data());
      for (const LaunchConfig& cfg : kConformanceLaunchConfigs) {
        im2col_cuda(dx, s, pad, dout, cfg);
        std::vector<float> got = to_host(dout, out);
        EXPECT_EQ(std::memcmp(got.data(), ref.data(), out * 4), 0) << "n=" << s.n << " c=" << s.c << " block " << cfg.block;
      }
    }
    if (out > 0 && s.pad_h > 0) {  // sabotage arm: a patch matrix with another pad value differs
      std::vector<float> other(out);
      im2col_reference(x.data(), s, 1.0f, other.data());
      im2col_cuda(dx, s, 0.0f, dout);
      std::vector<float> got = to_host(dout, out);
      EXPECT_NE(std::memcmp(got.data(), other.data(), out * 4), 0) << "sabotage arm not caught";
    }
    cudaFree(dx);
    cudaFree(dout);
  }
}

}  // namespace
}  // namespace bl
