// layers.h: feed-forward layers. Images are channels-last: [N, H, W, C].
//
// Every layer takes an InitStream for its initial weights (PyTorch's default initializations:
// Linear and Conv2d weights and biases uniform in +-1/sqrt(fan_in), norms at 1 and 0).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bitlearn/nn/module.h"

namespace bl::nn {

// y = x W^T + b with W [out, in], b [out]. Input [N, in] (or [..., in]) -> [..., out].
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, InitStream& init, bool bias = true);
  ag::Var forward(const ag::Var& x) override;
  ag::Var weight, bias;
  int64_t in_features, out_features;
};

// 2-d convolution on [N, H, W, C_in] -> [N, H_out, W_out, C_out] with weight
// [C_out, kH, kW, C_in / groups] and bias [C_out]. The input patches are gathered by an index
// (im2col as bl::embedding on rows of the input plus one zero row for padding), multiplied by the
// weight with the contract GEMM; the input gradient is bl::embedding_backward (no atomics).
struct Conv2dOptions {
  int64_t kernel = 3, stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
};
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Conv2dOptions options, InitStream& init);
  ag::Var forward(const ag::Var& x) override;
  ag::Var weight, bias;
  int64_t in_channels, out_channels;
  Conv2dOptions options;
};

// 1-d convolution on [N, L, C_in] -> [N, L_out, C_out] with weight [C_out, 1, k, C_in / groups]
// (the 2-d convolution with a 1 x k window).
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, Conv2dOptions options, InitStream& init);
  ag::Var forward(const ag::Var& x) override;
  ag::Var weight, bias;
  int64_t in_channels, out_channels;
  Conv2dOptions options;
};

// Max and average pooling over k x k windows of [N, H, W, C] (padding: -inf for max, zeros counted
// in the divisor for average, as PyTorch's count_include_pad). stride 0 means stride = kernel.
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);
  ag::Var forward(const ag::Var& x) override;
  int64_t kernel, stride, padding;
};
class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(int64_t kernel, int64_t stride = 0, int64_t padding = 0);
  ag::Var forward(const ag::Var& x) override;
  int64_t kernel, stride, padding;
};
// Mean over H and W: [N, H, W, C] -> [N, C].
class GlobalAvgPool2d : public Module {
 public:
  ag::Var forward(const ag::Var& x) override;
};

// Batch normalization over the last dimension (features / channels): [N, F] (BatchNorm1d) or
// [N, H, W, C] (BatchNorm2d). Training uses the batch mean and biased variance (two-pass) and
// updates running_mean / running_var (unbiased) with momentum; evaluation uses the running values.
class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t features, float eps = 1e-5f, float momentum = 0.1f);
  ag::Var forward(const ag::Var& x) override;
  ag::Var gamma, beta, running_mean, running_var;
  int64_t features;
  float eps, momentum;
};
using BatchNorm1d = BatchNorm;
using BatchNorm2d = BatchNorm;

// Layer normalization and RMS normalization over the last dimension, with a learned scale
// (and shift for LayerNorm).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t features, float eps = 1e-5f);
  ag::Var forward(const ag::Var& x) override;
  ag::Var gamma, beta;
  float eps;
};
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t features, float eps = 1e-6f);
  ag::Var forward(const ag::Var& x) override;
  ag::Var gamma;
  float eps;
};

// Dropout with probability p: in training, element i is kept (and scaled by 1 / (1 - p)) when the
// Philox uniform of (seed, stream = step * 2^16 + layer, i) is >= p: a pure function of seed, step,
// layer and element. Identity in evaluation mode.
class Dropout : public Module {
 public:
  Dropout(float p, uint64_t seed, uint32_t layer);
  ag::Var forward(const ag::Var& x) override;
  float p;
  uint64_t seed;
  uint32_t layer;
};

// Rows of weight [num_embeddings, dim] for integer ids (a Var holding i32/i64): ids.shape + [dim].
// Weights start as standard normals.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, InitStream& init);
  ag::Var forward(const ag::Var& ids) override;
  ag::Var weight;
};

// Parameter-free layers.
class ReLU : public Module { public: ag::Var forward(const ag::Var& x) override; };
class GELU : public Module { public: ag::Var forward(const ag::Var& x) override; };
class SiLU : public Module { public: ag::Var forward(const ag::Var& x) override; };
class Tanh : public Module { public: ag::Var forward(const ag::Var& x) override; };
class Sigmoid : public Module { public: ag::Var forward(const ag::Var& x) override; };
class Softmax : public Module { public: ag::Var forward(const ag::Var& x) override; };
// [N, ...] -> [N, product of the rest].
class Flatten : public Module { public: ag::Var forward(const ag::Var& x) override; };

// Applies its children in order.
class Sequential : public Module {
 public:
  // Appends a layer (named by its position: "0", "1", ...); returns *this for chaining.
  Sequential& add(std::shared_ptr<Module> layer);
  ag::Var forward(const ag::Var& x) override;
  size_t size() const { return layers_.size(); }

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};

// Residual block: relu(x + bn2(conv2(relu(bn1(conv1(x)))))) with 3x3 convolutions keeping the
// channel count and the spatial size.
class ResidualBlock : public Module {
 public:
  ResidualBlock(int64_t channels, InitStream& init);
  ag::Var forward(const ag::Var& x) override;
  std::shared_ptr<Conv2d> conv1, conv2;
  std::shared_ptr<BatchNorm> bn1, bn2;
};

}  // namespace bl::nn
