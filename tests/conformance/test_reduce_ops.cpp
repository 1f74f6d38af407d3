// Tensor-level wrappers of the reductions (bitlearn/ops_reduce.h): shapes, dimension handling and
// equality with the raw kernels' references.
#include <vector>

#include "bitlearn/ops.h"
#include "conformance/harness.h"
#include "core/error.h"
#include "kernels/cumsum.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"

namespace bl::conformance {
namespace {

Tensor make(const Shape& shape, uint64_t seed) {
  return Tensor::from_vector(generate_floats(shape_numel(shape), seed, 3.0f, 29), shape);
}

TEST(ReduceOps, SumOverSeveralDimsIsRowMajorOverThem) {
  Tensor x = make({3, 4, 5}, 1);
  Tensor s = sum(x, {0, 2});
  ASSERT_EQ(s.shape(), (Shape{4}));
  // Expected: for each j, the 15 elements x[i][j][k] in row-major (i, k) order, one reduction.
  auto xv = x.to_vector<float>();
  for (int64_t j = 0; j < 4; ++j) {
    std::vector<float> row;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k) row.push_back(xv[(i * 4 + j) * 5 + k]);
    float e = 0.0f;
    reduce_reference(ReduceOp::sum, row.data(), ReduceShape{1, 15, 1}, &e);
    EXPECT_EQ(bits_of(e), bits_of(s.to_vector<float>()[j])) << "j=" << j;
  }
  EXPECT_EQ(sum(x, {1}, true).shape(), (Shape{3, 1, 5}));
  EXPECT_EQ(mean(x).shape(), Shape{});
  EXPECT_EQ(var(x, {-1}, 1).shape(), (Shape{3, 4}));
}

TEST(ReduceOps, MiddleDimMatchesKernelReference) {
  Tensor x = make({6, 4099, 3}, 2);
  auto xv = x.to_vector<float>();
  const ReduceShape shape{6, 4099, 3};
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::var, ReduceOp::std, ReduceOp::max, ReduceOp::min,
                      ReduceOp::l1, ReduceOp::l2}) {
    std::vector<float> e(18);
    reduce_reference(op, xv.data(), shape, e.data(), 0);
    Tensor got;
    switch (op) {
      case ReduceOp::sum: got = sum(x, {1}); break;
      case ReduceOp::mean: got = mean(x, {1}); break;
      case ReduceOp::var: got = var(x, {1}); break;
      case ReduceOp::std: got = stddev(x, {1}); break;
      case ReduceOp::max: got = amax(x, {1}); break;
      case ReduceOp::min: got = amin(x, {1}); break;
      case ReduceOp::l1: got = l1_norm(x, {1}); break;
      case ReduceOp::l2: got = l2_norm(x, {1}); break;
    }
    ASSERT_TRUE(bits_equal(e, got.to_vector<float>(), reduce_op_name(op)));
  }
  std::vector<int64_t> ei(18);
  arg_reduce_reference(ArgReduceOp::argmax, xv.data(), shape, ei.data());
  EXPECT_EQ(argmax(x, 1).to_vector<int64_t>(), ei);
  std::vector<float> ec(xv.size());
  cumsum_reference(xv.data(), shape, ec.data());
  ASSERT_TRUE(bits_equal(ec, cumsum(x, 1).to_vector<float>(), "cumsum"));
}

TEST(ReduceOps, SoftmaxSortTopkAlongAnyDim) {
  Tensor x = make({5, 7}, 3);
  Tensor t = x.transpose(0, 1).contiguous();  // [7, 5]
  Tensor a = softmax(x, 0);
  Tensor b = softmax(t, 1).transpose(0, 1).contiguous();
  ASSERT_TRUE(bits_equal(a.to_vector<float>(), b.to_vector<float>(), "softmax dim 0"));
  ASSERT_TRUE(bits_equal(log_softmax(x, 0).to_vector<float>(),
                         log_softmax(t, -1).transpose(0, 1).contiguous().to_vector<float>(), "log_softmax"));
  SortResult s = sort(x, 0, true);
  EXPECT_EQ(s.values.shape(), (Shape{5, 7}));
  SortResult k = topk(x, 2, 0);
  EXPECT_EQ(k.values.shape(), (Shape{2, 7}));
  ASSERT_TRUE(bits_equal(k.values.to_vector<float>(), s.values.slice(0, 0, 2).contiguous().to_vector<float>(),
                         "topk = head of descending sort"));
  EXPECT_EQ(k.indices.to_vector<int64_t>(), s.indices.slice(0, 0, 2).contiguous().to_vector<int64_t>());
  Tensor g = Tensor::full({7}, 2.0, DType::f32);
  EXPECT_EQ(layer_norm(x, g, Tensor(), 1e-5f).shape(), (Shape{5, 7}));
  EXPECT_EQ(rms_norm(x, Tensor(), 1e-6f).shape(), (Shape{5, 7}));
}

TEST(ReduceOps, BadOperandsThrow) {
  Tensor x = make({3, 4}, 4);
  Tensor xi = Tensor::zeros({3, 4}, DType::i32);
  EXPECT_THROW(sum(xi), Error);
  EXPECT_THROW(sum(x, {2}), Error);
  EXPECT_THROW(sum(x, {1, 1}), Error);
  EXPECT_THROW(amax(Tensor::zeros({3, 0})), Error);
  EXPECT_THROW(topk(x, 5, 1), Error);
  EXPECT_THROW(layer_norm(x, Tensor::zeros({3}), Tensor(), 1e-5f), Error);
  EXPECT_THROW(argmax(Tensor::zeros({2, 0}), 1), Error);
}

}  // namespace
}  // namespace bl::conformance
