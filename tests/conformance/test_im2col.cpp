// Conformance of the convolution patch matrix (kernels/im2col.h): im2col_cpu equals the reference
// bit for bit over many shapes (0, 1, primes; kernel, stride, padding and dilation combinations)
// with special values in the data and as the pad value (NaN payloads, -inf, -0) at 1, 2 and 3
// threads; the reference equals the row gather of the input with a pad row appended (the former
// implementation, through bl::embedding). Sabotage arm: a window shifted by one pixel is caught.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/im2col.h"

namespace bl::conformance {
namespace {

std::vector<Im2colShape> shapes() {
  std::vector<Im2colShape> v;
  // n, h, w, c, kh, kw, sh, sw, ph, pw, dh, dw
  v.push_back({0, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1});
  v.push_back({1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1});
  v.push_back({2, 5, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1});
  v.push_back({3, 7, 7, 1, 3, 3, 1, 1, 1, 1, 1, 1});
  v.push_back({2, 6, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1});
  v.push_back({1, 9, 11, 5, 2, 3, 1, 2, 0, 1, 2, 1});
  v.push_back({2, 13, 7, 2, 5, 5, 1, 1, 2, 2, 1, 1});
  v.push_back({1, 3, 3, 7, 3, 3, 1, 1, 2, 2, 1, 1});
  v.push_back({4, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1});
  v.push_back({2, 28, 28, 1, 3, 3, 1, 1, 1, 1, 1, 1});
  v.push_back({1, 1, 31, 3, 1, 4, 1, 3, 0, 0, 1, 1});
  v.push_back({2, 4, 4, 0, 3, 3, 1, 1, 1, 1, 1, 1});
  return v;
}

std::string name(const Im2colShape& s) {
  return "x [" + std::to_string(s.n) + "," + std::to_string(s.h) + "," + std::to_string(s.w) + "," +
         std::to_string(s.c) + "] k " + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " s " +
         std::to_string(s.stride_h) + "," + std::to_string(s.stride_w) + " p " + std::to_string(s.pad_h) + "," +
         std::to_string(s.pad_w) + " d " + std::to_string(s.dilation_h) + "," + std::to_string(s.dilation_w);
}

const float kPads[] = {0.0f, -0.0f, float_of(0xFF800000u), float_of(0x7FC01234u)};

TEST(Im2colConformance, CpuEqualsReference) {
  int cases = 0;
  for (const Im2colShape& s : shapes()) {
    const int64_t in = s.n * s.h * s.w * s.c;
    std::vector<float> x = generate_floats(in, static_cast<uint64_t>(in * 3 + s.kernel_w), 1.0f, 5);
    for (float pad : kPads) {
      std::vector<float> ref(static_cast<size_t>(s.out_numel()));
      im2col_reference(x.data(), s, pad, ref.data());
      for (int threads : kThreadCounts) {
        ThreadPool pool(threads);
        std::vector<float> got(ref.size(), 7.0f);
        im2col_cpu(x.data(), s, pad, got.data(), pool);
        ASSERT_TRUE(bits_equal(ref, got, name(s) + " threads " + std::to_string(threads)));
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(shapes().size() * 4 * 3));
}

// The reference equals the gather of rows of [x as [N*H*W, C]; pad row] by patch index.
TEST(Im2colConformance, ReferenceEqualsRowGather) {
  for (const Im2colShape& s : shapes()) {
    const int64_t in = s.n * s.h * s.w * s.c;
    if (s.out_numel() == 0) continue;
    std::vector<float> x = generate_floats(in, static_cast<uint64_t>(in + 5), 1.0f, 4);
    const int64_t kk = s.kernel_h * s.kernel_w, pad_row = s.n * s.h * s.w;
    std::vector<int64_t> ids;
    for (int64_t m = 0; m < s.rows(); ++m)
      for (int64_t p = 0; p < kk; ++p) {
        int64_t src = im2col_source(s, m, p);
        ids.push_back(src < 0 ? pad_row : src / s.c);
      }
    Tensor id_tensor = Tensor::from_vector(ids, {static_cast<int64_t>(ids.size())});
    for (float pad : {0.0f, -0.0f, float_of(0xFF800000u)}) {
      std::vector<float> ref(static_cast<size_t>(s.out_numel()));
      im2col_reference(x.data(), s, pad, ref.data());
      Tensor source = bl::concat({Tensor::from_vector(x, {pad_row, s.c}), Tensor::full({1, s.c}, pad)}, 0);
      std::vector<float> gathered = bl::embedding(source, id_tensor).to_vector<float>();
      ASSERT_TRUE(bits_equal(gathered, ref, name(s)));
    }
  }
}

TEST(Im2colConformance, SabotageShiftedWindowIsCaught) {
  Im2colShape s{2, 5, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1};
  std::vector<float> x = generate_floats(s.n * s.h * s.w * s.c, 9);
  std::vector<float> ref(static_cast<size_t>(s.out_numel())), shifted(ref.size());
  im2col_reference(x.data(), s, 0.0f, ref.data());
  Im2colShape t = s;
  t.pad_w = 0;  // same output height, windows one pixel to the right, one column fewer
  t.w = s.w + 2;
  std::vector<float> xp;  // x padded on the right by two columns
  for (int64_t b = 0; b < s.n * s.h; ++b)
    for (int64_t j = 0; j < (s.w + 2) * s.c; ++j) xp.push_back(j < s.w * s.c ? x[b * s.w * s.c + j] : 0.0f);
  im2col_reference(xp.data(), t, 0.0f, shifted.data());
  EXPECT_FALSE(bits_equal(ref, shifted, "sabotage"));
}

TEST(Im2colConformance, BadShapesGiveClearErrors) {
  ThreadPool pool(1);
  float x[4] = {}, out[64];
  EXPECT_THROW(im2col_cpu(x, Im2colShape{1, 2, 2, 1, 3, 3, 1, 1, 0, 0, 1, 1}, 0.0f, out, pool), Error);
  EXPECT_THROW(im2col_cpu(x, Im2colShape{1, 2, 2, 1, 1, 1, 0, 1, 0, 0, 1, 1}, 0.0f, out, pool), Error);
}

}  // namespace
}  // namespace bl::conformance
