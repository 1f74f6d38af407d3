// CUDA conformance of reduce, softmax, norms, cumsum, sort and top-k: the CUDA versions equal the
// scalar references bit for bit under every launch shape of kConformanceLaunchConfigs.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "conformance/harness.h"
#include "kernels/cumsum.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"

namespace bl::conformance {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  size_t count = 0;
  explicit DeviceBuffer(size_t n) : count(n) {
    if (n) EXPECT_EQ(cudaMalloc(&ptr, n * sizeof(T)), cudaSuccess);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    if (count) EXPECT_EQ(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  std::vector<T> to_host() const {
    std::vector<T> h(count);
    if (count) EXPECT_EQ(cudaMemcpy(h.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

std::string cfg_label(const LaunchConfig& c) {
  return " block=" + std::to_string(c.block) + " grid_cap=" + std::to_string(c.grid_cap);
}

std::vector<std::vector<float>> variants(int64_t n, uint64_t seed) {
  return {generate_floats(n, seed, 1.0f, 0), generate_floats(n, seed + 1, 100.0f, 37)};
}

const ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std,
                         ReduceOp::max, ReduceOp::min,  ReduceOp::l1,  ReduceOp::l2};

void check_reduce(ReduceShape s, const std::vector<float>& x) {
  const int64_t r = s.outer * s.inner;
  DeviceBuffer<float> dx(x);
  DeviceBuffer<float> dout(r);
  DeviceBuffer<int64_t> didx(r);
  const std::string shape = " (" + std::to_string(s.outer) + "," + std::to_string(s.n) + "," + std::to_string(s.inner) + ")";
  for (ReduceOp op : kOps) {
    if ((op == ReduceOp::max || op == ReduceOp::min) && s.n == 0) continue;
    std::vector<float> expected(r);
    reduce_reference(op, x.data(), s, expected.data(), 1);
    for (const LaunchConfig& c : kConformanceLaunchConfigs) {
      reduce_cuda(op, dx.ptr, s, dout.ptr, 1, c);
      ASSERT_TRUE(bits_equal(expected, dout.to_host(), std::string(reduce_op_name(op)) + shape + cfg_label(c)));
    }
  }
  if (s.n == 0) return;
  for (ArgReduceOp op : {ArgReduceOp::argmax, ArgReduceOp::argmin}) {
    std::vector<int64_t> expected(r);
    arg_reduce_reference(op, x.data(), s, expected.data());
    for (const LaunchConfig& c : kConformanceLaunchConfigs) {
      arg_reduce_cuda(op, dx.ptr, s, didx.ptr, c);
      auto got = didx.to_host();
      ASSERT_TRUE(bits_equal(expected.data(), got.data(), r, sizeof(int64_t), "arg" + shape + cfg_label(c)));
    }
  }
}

TEST(ReduceCuda, AllLengthsAndShapes) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (int64_t n : interesting_lengths())
    for (const auto& x : variants(n, 100 + n)) check_reduce(ReduceShape{1, n, 1}, x);
  const ReduceShape shapes[] = {{3, 4097, 1}, {1000, 7, 1}, {2, 33, 17}, {3, 8193, 5}, {5, 0, 2}, {1, 300000, 3},
                                {1, 50177, 16}, {2, 4100, 33}, {1, 9000, 100}, {3, 31, 40}, {1, 12289, 2}};
  for (ReduceShape s : shapes)
    for (const auto& x : variants(s.outer * s.n * s.inner, 7 + s.n)) check_reduce(s, x);
}

TEST(ReduceCuda, SoftmaxAndNorms) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t shapes[][2] = {{1, 1}, {1, 4097}, {1, 1000003}, {1000, 7}, {5, 12289}, {64, 768}, {3, 0}};
  for (auto& sh : shapes) {
    const int64_t rows = sh[0], n = sh[1];
    for (const auto& x : variants(rows * n, 300 + n)) {
      auto gamma = generate_floats(n, 9, 2.0f), beta = generate_floats(n, 10, 1.0f);
      DeviceBuffer<float> dx(x), dy(x.size()), dg(gamma), db(beta), dm(rows), dr(rows);
      const std::string shape = " rows=" + std::to_string(rows) + " n=" + std::to_string(n);
      for (bool log_form : {false, true}) {
        std::vector<float> expected(x.size());
        softmax_reference(x.data(), rows, n, expected.data(), log_form);
        for (const LaunchConfig& c : kConformanceLaunchConfigs) {
          softmax_cuda(dx.ptr, rows, n, dy.ptr, log_form, c);
          ASSERT_TRUE(bits_equal(expected, dy.to_host(), std::string(log_form ? "log_softmax" : "softmax") + shape + cfg_label(c)));
        }
      }
      std::vector<float> ey(x.size()), em(rows), er(rows);
      layer_norm_reference(x.data(), rows, n, gamma.data(), beta.data(), 1e-5f, ey.data(), em.data(), er.data());
      for (const LaunchConfig& c : kConformanceLaunchConfigs) {
        layer_norm_cuda(dx.ptr, rows, n, dg.ptr, db.ptr, 1e-5f, dy.ptr, dm.ptr, dr.ptr, c);
        ASSERT_TRUE(bits_equal(ey, dy.to_host(), "layer_norm y" + shape + cfg_label(c)));
        ASSERT_TRUE(bits_equal(em, dm.to_host(), "layer_norm mean" + shape + cfg_label(c)));
        ASSERT_TRUE(bits_equal(er, dr.to_host(), "layer_norm rstd" + shape + cfg_label(c)));
      }
      layer_norm_reference(x.data(), rows, n, nullptr, nullptr, 1e-5f, ey.data(), nullptr, nullptr);
      layer_norm_cuda(dx.ptr, rows, n, nullptr, nullptr, 1e-5f, dy.ptr, nullptr, nullptr, LaunchConfig());
      ASSERT_TRUE(bits_equal(ey, dy.to_host(), "layer_norm plain" + shape));
      for (bool with_gamma : {false, true}) {
        rms_norm_reference(x.data(), rows, n, with_gamma ? gamma.data() : nullptr, 1e-6f, ey.data(), er.data());
        for (const LaunchConfig& c : kConformanceLaunchConfigs) {
          rms_norm_cuda(dx.ptr, rows, n, with_gamma ? dg.ptr : nullptr, 1e-6f, dy.ptr, dr.ptr, c);
          ASSERT_TRUE(bits_equal(ey, dy.to_host(), "rms_norm y" + shape + cfg_label(c)));
          ASSERT_TRUE(bits_equal(er, dr.to_host(), "rms_norm rstd" + shape + cfg_label(c)));
        }
      }
    }
  }
}

// A row alone gives the same bits on the GPU as inside a batch (and as the CPU reference).
TEST(ReduceCuda, BatchInvariance) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 9, n = 8191;
  auto batch = generate_floats(rows * n, 77, 20.0f, 53);
  std::vector<float> row(batch.begin() + 4 * n, batch.begin() + 5 * n);
  DeviceBuffer<float> db(batch), dyb(batch.size()), dr(row), dyr(n);
  softmax_cuda(db.ptr, rows, n, dyb.ptr, false);
  softmax_cuda(dr.ptr, 1, n, dyr.ptr, false, LaunchConfig{64, 1, 0});
  auto yb = dyb.to_host(), yr = dyr.to_host();
  ASSERT_TRUE(bits_equal(yb.data() + 4 * n, yr.data(), n, sizeof(float), "softmax row in batch"));
  rms_norm_cuda(db.ptr, rows, n, nullptr, 1e-6f, dyb.ptr, nullptr);
  rms_norm_cuda(dr.ptr, 1, n, nullptr, 1e-6f, dyr.ptr, nullptr, LaunchConfig{1024, 3, 0});
  yb = dyb.to_host();
  yr = dyr.to_host();
  ASSERT_TRUE(bits_equal(yb.data() + 4 * n, yr.data(), n, sizeof(float), "rms_norm row in batch"));
}

TEST(ReduceCuda, Cumsum) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<ReduceShape> shapes;
  for (int64_t n : interesting_lengths()) shapes.push_back(ReduceShape{1, n, 1});
  shapes.push_back(ReduceShape{3, 1025, 1});
  shapes.push_back(ReduceShape{2, 513, 17});
  shapes.push_back(ReduceShape{3, 2049, 5});
  for (ReduceShape s : shapes) {
    for (const auto& x : variants(s.outer * s.n * s.inner, 600 + s.n)) {
      std::vector<float> expected(x.size());
      cumsum_reference(x.data(), s, expected.data());
      DeviceBuffer<float> dx(x), dy(x.size());
      for (const LaunchConfig& c : kConformanceLaunchConfigs) {
        cumsum_cuda(dx.ptr, s, dy.ptr, c);
        ASSERT_TRUE(bits_equal(expected, dy.to_host(), "cumsum n=" + std::to_string(s.n) + cfg_label(c)));
      }
    }
  }
}

TEST(ReduceCuda, SortAndTopk) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t shapes[][2] = {{1, 1}, {1, 97}, {1, 4097}, {1, 65537}, {1, 1000003}, {100, 33}, {3, 4097}};
  for (auto& sh : shapes) {
    const int64_t rows = sh[0], n = sh[1];
    auto x = generate_floats(rows * n, 700 + n, 1.0f, 13);
    for (int64_t i = 0; i < rows * n; i += 3) x[i] = static_cast<float>(static_cast<int>(x[i] * 4.0f));  // ties
    DeviceBuffer<float> dx(x), dv(x.size());
    DeviceBuffer<int64_t> di(x.size());
    const std::string shape = " rows=" + std::to_string(rows) + " n=" + std::to_string(n);
    for (bool desc : {false, true}) {
      std::vector<float> ev(x.size());
      std::vector<int64_t> ei(x.size());
      sort_reference(x.data(), rows, n, desc, ev.data(), ei.data());
      for (const LaunchConfig& c : kConformanceLaunchConfigs) {
        sort_cuda(dx.ptr, rows, n, desc, dv.ptr, di.ptr, c);
        ASSERT_TRUE(bits_equal(ev, dv.to_host(), "sort values" + shape + cfg_label(c)));
        auto gi = di.to_host();
        ASSERT_TRUE(bits_equal(ei.data(), gi.data(), ei.size(), sizeof(int64_t), "sort indices" + shape + cfg_label(c)));
      }
    }
    for (int64_t k : {int64_t{1}, (n + 2) / 3, n}) {
      std::vector<float> ev(rows * k);
      std::vector<int64_t> ei(rows * k);
      topk_reference(x.data(), rows, n, k, ev.data(), ei.data());
      DeviceBuffer<float> tv(rows * k);
      DeviceBuffer<int64_t> ti(rows * k);
      for (const LaunchConfig& c : kConformanceLaunchConfigs) {
        topk_cuda(dx.ptr, rows, n, k, tv.ptr, ti.ptr, c);
        ASSERT_TRUE(bits_equal(ev, tv.to_host(), "topk values k=" + std::to_string(k) + shape + cfg_label(c)));
        auto gi = ti.to_host();
        ASSERT_TRUE(bits_equal(ei.data(), gi.data(), ei.size(), sizeof(int64_t), "topk indices" + shape + cfg_label(c)));
      }
    }
  }
}

// Long sums take several five-level tree passes (8.4 M values: 2050 leaves -> 65 -> 3 -> 1); every
// launch shape must still give the reference bits.
TEST(ReduceCuda, LongSumsAndMultiPassTree) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 2049 * kReduceLeaf + 7;
  auto x = generate_floats(n, 515, 1.0f, 41);
  DeviceBuffer<float> dx(x), dout(2);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::var, ReduceOp::max, ReduceOp::l2}) {
    float expected = 0.0f;
    reduce_reference(op, x.data(), ReduceShape{1, n, 1}, &expected, 1);
    for (const LaunchConfig& c : kConformanceLaunchConfigs) {
      reduce_cuda(op, dx.ptr, ReduceShape{1, n, 1}, dout.ptr, 1, c);
      auto got = dout.to_host();
      ASSERT_TRUE(bits_equal(&expected, got.data(), 1, sizeof(float), std::string(reduce_op_name(op)) + " long" + cfg_label(c)));
    }
  }
  // Two rows of odd length: leaf starts are not 16-byte aligned, so the scalar-load path runs.
  const int64_t m = (n - 1) / 2;
  std::vector<float> expected(2);
  reduce_reference(ReduceOp::sum, x.data() + 1, ReduceShape{2, m, 1}, expected.data());
  for (const LaunchConfig& c : kConformanceLaunchConfigs) {
    reduce_cuda(ReduceOp::sum, dx.ptr + 1, ReduceShape{2, m, 1}, dout.ptr, 0, c);
    ASSERT_TRUE(bits_equal(expected, dout.to_host(), "sum unaligned rows" + cfg_label(c)));
  }
}

// Softmax in place (y == x) and on unaligned rows gives the reference bits.
TEST(ReduceCuda, SoftmaxInPlaceAndUnaligned) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 6, n = 4100;
  auto x = generate_floats(rows * n + 1, 808, 30.0f, 29);
  for (int64_t offset : {0, 1}) {
    std::vector<float> expected(rows * n);
    softmax_reference(x.data() + offset, rows, n, expected.data(), false);
    for (const LaunchConfig& c : kConformanceLaunchConfigs) {
      DeviceBuffer<float> dx(x);
      softmax_cuda(dx.ptr + offset, rows, n, dx.ptr + offset, false, c);
      auto got = dx.to_host();
      ASSERT_TRUE(bits_equal(expected.data(), got.data() + offset, rows * n, sizeof(float),
                             "softmax in place offset=" + std::to_string(offset) + cfg_label(c)));
    }
  }
}

// Sabotage arm: a GPU leaf that folds its 32 lanes in the other order (s = 1, 2, 4, 8, 16) must be
// caught by the same comparison with the reference.
__global__ void sabotage_leaf_sum_kernel(const float* x, int64_t n, float* p) {
  const int64_t leaves = (n + kReduceLeaf - 1) / kReduceLeaf;
  const int lane = threadIdx.x & 31;
  for (int64_t l = blockIdx.x; l < leaves; l += gridDim.x) {
    const int64_t start = l * kReduceLeaf;
    const int64_t len = n - start < kReduceLeaf ? n - start : kReduceLeaf;
    float acc = 0.0f;
    for (int64_t i = lane; i < len; i += 32) acc = add(acc, x[start + i]);
    for (int s = 1; s <= 16; s <<= 1) {
      float other = __shfl_xor_sync(0xFFFFFFFFu, acc, s, 32);
      acc = add(acc, other);
    }
    if (lane == 0) p[l] = acc;
  }
}

TEST(ReduceCuda, SabotageOtherFoldOrderIsCaught) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const int64_t n = 1000003;
  auto x = generate_floats(n, 4242);
  float expected = 0.0f;
  reduce_reference(ReduceOp::sum, x.data(), ReduceShape{1, n, 1}, &expected);
  const int64_t leaves = reduce_leaf_count(n);
  DeviceBuffer<float> dx(x), dp(leaves), dout(1);
  sabotage_leaf_sum_kernel<<<64, 32>>>(dx.ptr, n, dp.ptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto p = dp.to_host();
  float sabotaged = canonicalize(fold_leaves(p.data(), leaves));
  EXPECT_FALSE(bits_equal(&expected, &sabotaged, 1, sizeof(float), "ascending fold"));
  reduce_cuda(ReduceOp::sum, dx.ptr, ReduceShape{1, n, 1}, dout.ptr, 0);
  auto got = dout.to_host();
  EXPECT_TRUE(bits_equal(&expected, got.data(), 1, sizeof(float), "library"));
}

}  // namespace
}  // namespace bl::conformance
