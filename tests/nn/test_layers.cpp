// Layer behaviour not covered by the gradient checks: dropout masks, evaluation modes, shapes of
// multi-layer recurrent stacks, depthwise convolution, parameter naming and errors.
#include <gtest/gtest.h>

#include "bitlearn/nn.h"
#include "contract/arith.h"
#include "core/error.h"

namespace bl::nn {
namespace {

TEST(NnLayers, DropoutMaskIsAPureFunctionOfSeedStepLayerAndElement) {
  Dropout d(0.25f, 42, 3);
  ag::Var x(Tensor::full({4, 256}, 1.0));
  d.set_step(7);
  Tensor a = d.forward(x).value();
  Tensor b = d.forward(x).value();
  EXPECT_EQ(a.digest(), b.digest());
  d.set_step(8);
  EXPECT_NE(a.digest(), d.forward(x).value().digest());
  Dropout other_layer(0.25f, 42, 4);
  other_layer.set_step(7);
  EXPECT_NE(a.digest(), other_layer.forward(x).value().digest());
  std::vector<float> v = a.to_vector<float>();
  int kept = 0;
  for (float f : v) {
    ASSERT_TRUE(f == 0.0f || f == bl::div(1.0f, 0.75f)) << f;
    kept += f != 0.0f;
  }
  EXPECT_NEAR(kept / 1024.0, 0.75, 0.05);
  d.eval();
  EXPECT_EQ(d.forward(x).value().digest(), x.value().digest());
}

TEST(NnLayers, BatchNormEvalUsesRunningStatistics) {
  BatchNorm bn(2, 1e-5f, 0.5f);
  ag::Var x(Tensor::from_vector(std::vector<float>{1, 10, 3, 30}, {2, 2}));
  bn.forward(x);
  // running_mean = 0.5 * 0 + 0.5 * batch mean; running_var = 0.5 * 1 + 0.5 * unbiased variance.
  std::vector<float> rm = bn.running_mean.value().to_vector<float>();
  std::vector<float> rv = bn.running_var.value().to_vector<float>();
  EXPECT_FLOAT_EQ(rm[0], 1.0f);
  EXPECT_FLOAT_EQ(rm[1], 10.0f);
  EXPECT_FLOAT_EQ(rv[0], 1.5f);
  EXPECT_FLOAT_EQ(rv[1], 100.5f);
  bn.eval();
  std::vector<float> y = bn.forward(x).value().to_vector<float>();
  EXPECT_NEAR(y[0], 0.0, 1e-6);
  EXPECT_NEAR(y[1], 0.0, 1e-6);
}

TEST(NnLayers, RecurrentStacksHaveTheRightShapesAndNames) {
  InitStream init(1);
  GRU gru(5, 4, init, 2, true);
  ag::Var x(Tensor::zeros({3, 6, 5}));
  EXPECT_EQ(gru.forward(x).shape(), (Shape{3, 6, 8}));
  auto names = gru.named_parameters();
  ASSERT_EQ(names.size(), 16u);
  EXPECT_EQ(names[0].first, "weight_ih_l0");
  EXPECT_EQ(names[4].first, "weight_ih_l0_reverse");
  EXPECT_EQ(names[8].second.shape(), (Shape{12, 8}));  // layer 1 reads both directions
  RNN rnn(5, 4, init);
  EXPECT_EQ(rnn.forward(x).shape(), (Shape{3, 6, 4}));
  EXPECT_THROW(rnn.forward(ag::Var(Tensor::zeros({3, 6, 4}))), Error);
}

TEST(NnLayers, DepthwiseConvolutionIsPerChannel) {
  InitStream init(2);
  Conv2dOptions o;
  o.kernel = 3;
  o.padding = 1;
  o.groups = 4;
  o.bias = false;
  Conv2d conv(4, 4, o, init);
  EXPECT_EQ(conv.weight.shape(), (Shape{4, 3, 3, 1}));
  // Input with only channel 2 non-zero: only output channel 2 can be non-zero.
  Tensor xin = Tensor::zeros({1, 5, 5, 4});
  for (int i = 0; i < 25; ++i) xin.data<float>()[i * 4 + 2] = 1.0f;
  std::vector<float> y = conv.forward(ag::Var(xin)).value().to_vector<float>();
  for (int i = 0; i < 25; ++i)
    for (int c = 0; c < 4; ++c)
      if (c != 2) ASSERT_EQ(y[i * 4 + c], 0.0f);
  EXPECT_NE(y[12 * 4 + 2], 0.0f);
  EXPECT_THROW(Conv2d(4, 6, o, init), Error);  // groups must divide the channels
  EXPECT_THROW(conv.forward(ag::Var(Tensor::zeros({1, 5, 5, 3}))), Error);
}

TEST(NnLayers, EmbeddingAndSequentialNames) {
  InitStream init(3);
  Embedding emb(10, 4, init);
  ag::Var ids(Tensor::from_vector(std::vector<int64_t>{1, 9, 1}, {3}));
  EXPECT_EQ(emb.forward(ids).shape(), (Shape{3, 4}));
  EXPECT_THROW(emb.forward(ag::Var(Tensor::from_vector(std::vector<int64_t>{10}, {1}))), Error);
  auto mlp = make_mlp(6, {5}, 3, 1);
  auto names = mlp->named_parameters();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0].first, "0.weight");
  EXPECT_EQ(names[3].first, "2.bias");
  EXPECT_EQ(mlp->num_parameters(), 6 * 5 + 5 + 5 * 3 + 3);
}

}  // namespace
}  // namespace bl::nn
