// Conformance of max pooling over k x k tiles (kernels/tile_max.h): tile_max_cpu and
// tile_max_backward_cpu equal the references bit for bit over many shapes (0, 1, primes, k = 1, 2,
// 3, 5) with special values (NaN of both signs, +-inf, +-0 ties, subnormals) at 1, 2 and 3 threads;
// the outputs equal bl::amax / bl::argmax over the window axis. Sabotage arm: taking the last
// instead of the first maximum among ties must be caught.
#include <gtest/gtest.h>

#include <vector>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/tile_max.h"

namespace bl::conformance {
namespace {

// Values with many exact ties (a few distinct levels) plus special values.
std::vector<float> tie_heavy(int64_t n, uint64_t seed) {
  std::vector<float> v = generate_floats(n, seed, 1.0f, 5);
  test_rng::SplitMix64 rng(seed ^ 0x5A5A);
  for (auto& x : v) {
    if (rng.next() % 3 == 0) x = static_cast<float>(static_cast<int>(rng.next() % 3)) - 1.0f;
    if (rng.next() % 11 == 0) x = (rng.next() & 1) ? 0.0f : -0.0f;
  }
  return v;
}

struct Result {
  std::vector<float> y, dx;
  std::vector<int32_t> arg;
};

Result run_reference(const std::vector<float>& x, const std::vector<float>& g, TileMaxShape s) {
  Result r{std::vector<float>(s.out_numel()), std::vector<float>(x.size()), std::vector<int32_t>(s.out_numel())};
  tile_max_reference(x.data(), s, r.y.data(), r.arg.data());
  tile_max_backward_reference(g.data(), r.arg.data(), s, r.dx.data());
  return r;
}

const std::vector<TileMaxShape> kShapes = {
    {0, 4, 4, 3, 2}, {1, 2, 2, 1, 2}, {2, 4, 6, 3, 2}, {3, 14, 14, 16, 2}, {1, 1, 1, 1, 1},
    {2, 3, 3, 7, 3}, {5, 10, 5, 2, 5}, {7, 6, 6, 13, 3}, {1, 28, 28, 8, 2}, {2, 4, 4, 0, 2},
    {64, 28, 28, 16, 2}, {3, 2, 34, 31, 2}, {2, 7, 7, 5, 7}, {1, 9, 3, 97, 3}};

TEST(TileMaxConformance, CpuEqualsReference) {
  int cases = 0;
  for (const TileMaxShape& s : kShapes) {
    const int64_t in = s.n * s.h * s.w * s.c;
    std::vector<float> x = tie_heavy(in, static_cast<uint64_t>(in * 7 + s.k));
    std::vector<float> g = generate_floats(s.out_numel(), static_cast<uint64_t>(in + 3), 2.0f, 7);
    Result ref = run_reference(x, g, s);
    for (int threads : kThreadCounts) {
      ThreadPool pool(threads);
      Result got{std::vector<float>(ref.y.size(), 7.0f), std::vector<float>(x.size(), 7.0f),
                 std::vector<int32_t>(ref.arg.size(), -1)};
      tile_max_cpu(x.data(), s, got.y.data(), got.arg.data(), pool);
      tile_max_backward_cpu(g.data(), got.arg.data(), s, got.dx.data(), pool);
      std::string ctx = "shape [" + std::to_string(s.n) + "," + std::to_string(s.h) + "," +
                        std::to_string(s.w) + "," + std::to_string(s.c) + "] k=" + std::to_string(s.k) +
                        " threads=" + std::to_string(threads);
      ASSERT_TRUE(bits_equal(ref.y, got.y, ctx + " y"));
      ASSERT_TRUE(bits_equal(ref.arg.data(), got.arg.data(), ref.arg.size(), 4, ctx + " arg"));
      ASSERT_TRUE(bits_equal(ref.dx, got.dx, ctx + " dx"));
      ++cases;
    }
  }
  EXPECT_EQ(cases, static_cast<int>(kShapes.size() * 3));
}

// The reference equals bl::amax and bl::argmax over the window axis of the [M, k*k, C] windows.
TEST(TileMaxConformance, ReferenceEqualsAmaxAndArgmaxOverWindows) {
  for (const TileMaxShape& s : kShapes) {
    const int64_t in = s.n * s.h * s.w * s.c;
    if (in == 0) continue;
    std::vector<float> x = tie_heavy(in, static_cast<uint64_t>(in * 13 + s.k));
    std::vector<float> g(static_cast<size_t>(s.out_numel()), 1.0f);
    Result ref = run_reference(x, g, s);
    const int64_t k = s.k;
    Tensor windows = Tensor::from_vector(x, {s.n, s.h / k, k, s.w / k, k, s.c})
                         .permute({0, 1, 3, 2, 4, 5})
                         .contiguous()
                         .reshape({s.out_numel() / s.c, k * k, s.c});
    std::vector<float> amax = bl::amax(windows, {1}).to_vector<float>();
    std::vector<int64_t> argmax = bl::argmax(windows, 1).to_vector<int64_t>();
    ASSERT_TRUE(bits_equal(amax, ref.y, "amax k=" + std::to_string(k)));
    for (size_t i = 0; i < argmax.size(); ++i) ASSERT_EQ(argmax[i], ref.arg[i]) << "element " << i;
  }
}

TEST(TileMaxConformance, SabotageLastMaximumIsCaught) {
  TileMaxShape s{2, 4, 4, 3, 2};
  std::vector<float> x(static_cast<size_t>(s.n * s.h * s.w * s.c), 1.0f);  // every window all ties
  std::vector<float> g(static_cast<size_t>(s.out_numel()), 1.0f);
  Result ref = run_reference(x, g, s);
  std::vector<int32_t> last(ref.arg.size(), static_cast<int32_t>(s.k * s.k - 1));
  std::vector<float> dx(x.size());
  tile_max_backward_reference(g.data(), last.data(), s, dx.data());
  EXPECT_FALSE(bits_equal(ref.dx, dx, "sabotage"));
}

TEST(TileMaxConformance, BadShapesGiveClearErrors) {
  ThreadPool pool(1);
  float y[4];
  int32_t arg[4];
  const float x[9] = {};
  EXPECT_THROW(tile_max_cpu(x, TileMaxShape{1, 3, 3, 1, 2}, y, arg, pool), Error);
  EXPECT_THROW(tile_max_cpu(x, TileMaxShape{1, 2, 2, 1, 0}, y, arg, pool), Error);
}

}  // namespace
}  // namespace bl::conformance
