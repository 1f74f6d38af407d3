// layers.cpp: Linear, normalizations, dropout, embedding, activations, Flatten, Sequential.
#include "bitlearn/nn/layers.h"

#include <string>

#include "bitlearn/nn/init.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"

namespace bl::nn {

namespace {

float inv_sqrt_fan(int64_t fan_in) {
  BL_CHECK(fan_in > 0, "layer: fan-in must be > 0, got ", fan_in);
  return bl::div(1.0f, bl::sqrt(static_cast<float>(fan_in)));
}

Tensor scalar_on(const Tensor& like, float v) { return Tensor::scalar(v, DType::f32, like.device()); }

void check_last_dim(const ag::Var& x, int64_t features, const char* layer) {
  BL_CHECK(x.value().ndim() >= 1 && x.value().dim(-1) == features, layer, ": input ",
           x.value().str(), " must have last dimension ", features);
}

}  // namespace

// ---- Linear ----

Linear::Linear(int64_t in, int64_t out, InitStream& init, bool with_bias)
    : in_features(in), out_features(out) {
  BL_CHECK(in > 0 && out > 0, "Linear: features must be > 0, got in=", in, " out=", out);
  float bound = inv_sqrt_fan(in);
  weight = register_parameter("weight", init::uniform({out, in}, bl::neg(bound), bound, init.seed, init.take()));
  if (with_bias)
    bias = register_parameter("bias", init::uniform({out}, bl::neg(bound), bound, init.seed, init.take()));
}

ag::Var Linear::forward(const ag::Var& x) {
  check_last_dim(x, in_features, "Linear");
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  ag::Var x2 = x.value().ndim() == 2 ? x : ag::reshape(x, {-1, in_features});
  ag::Var y = ag::matmul(x2, weight, false, true);
  if (bias.defined()) y = ag::add(y, bias);
  return x.value().ndim() == 2 ? y : ag::reshape(y, out_shape);
}

// ---- BatchNorm ----

BatchNorm::BatchNorm(int64_t f, float e, float m) : features(f), eps(e), momentum(m) {
  BL_CHECK(f > 0, "BatchNorm: features must be > 0, got ", f);
  gamma = register_parameter("weight", Tensor::full({f}, 1.0));
  beta = register_parameter("bias", Tensor::zeros({f}));
  running_mean = register_buffer("running_mean", Tensor::zeros({f}));
  running_var = register_buffer("running_var", Tensor::full({f}, 1.0));
}

ag::Var BatchNorm::forward(const ag::Var& x) {
  check_last_dim(x, features, "BatchNorm");
  Shape shape = x.shape();
  ag::Var x2 = ag::reshape(x, {-1, features});
  int64_t m = x2.dim(0);
  ag::Var y;
  if (is_training()) {
    BL_CHECK(m > 1, "BatchNorm: training needs more than one value per feature, got input ",
             x.value().str());
    ag::Var mu = ag::mean(x2, {0}, true);
    ag::Var xc = ag::sub(x2, mu);
    ag::Var var = ag::mean(ag::square(xc), {0}, true);
    ag::Var inv = ag::rsqrt(ag::add_scalar(var, eps));
    y = ag::add(ag::mul(ag::mul(xc, inv), gamma), beta);
    // Running statistics: r = (1 - momentum) r + momentum * batch (variance unbiased).
    ag::NoGradGuard no_grad;
    const Tensor& xv = x2.value();
    Tensor keep = scalar_on(xv, bl::sub(1.0f, momentum));
    Tensor mom = scalar_on(xv, momentum);
    Tensor unbias = scalar_on(xv, bl::div(static_cast<float>(m), static_cast<float>(m - 1)));
    Tensor bm = mu.value().reshape({features});
    Tensor bv = bl::mul(var.value().reshape({features}), unbias);
    running_mean.set_value(bl::add(bl::mul(running_mean.value(), keep), bl::mul(bm, mom)));
    running_var.set_value(bl::add(bl::mul(running_var.value(), keep), bl::mul(bv, mom)));
  } else {
    Tensor inv = bl::rsqrt(bl::add(running_var.value(), scalar_on(running_var.value(), eps)));
    ag::Var xc = ag::sub(x2, running_mean);
    y = ag::add(ag::mul(ag::mul_constant(xc, inv), gamma), beta);
  }
  return ag::reshape(y, shape);
}

// ---- LayerNorm / RMSNorm ----

LayerNorm::LayerNorm(int64_t f, float e) : eps(e) {
  BL_CHECK(f > 0, "LayerNorm: features must be > 0, got ", f);
  gamma = register_parameter("weight", Tensor::full({f}, 1.0));
  beta = register_parameter("bias", Tensor::zeros({f}));
}

ag::Var LayerNorm::forward(const ag::Var& x) {
  check_last_dim(x, gamma.dim(0), "LayerNorm");
  ag::Var mu = ag::mean(x, {-1}, true);
  ag::Var xc = ag::sub(x, mu);
  ag::Var var = ag::mean(ag::square(xc), {-1}, true);
  ag::Var inv = ag::rsqrt(ag::add_scalar(var, eps));
  return ag::add(ag::mul(ag::mul(xc, inv), gamma), beta);
}

RMSNorm::RMSNorm(int64_t f, float e) : eps(e) {
  BL_CHECK(f > 0, "RMSNorm: features must be > 0, got ", f);
  gamma = register_parameter("weight", Tensor::full({f}, 1.0));
}

ag::Var RMSNorm::forward(const ag::Var& x) {
  check_last_dim(x, gamma.dim(0), "RMSNorm");
  ag::Var ms = ag::mean(ag::square(x), {-1}, true);
  return ag::mul(ag::mul(x, ag::rsqrt(ag::add_scalar(ms, eps))), gamma);
}

// ---- Dropout ----

Dropout::Dropout(float prob, uint64_t s, uint32_t l) : p(prob), seed(s), layer(l) {
  BL_CHECK(prob >= 0.0f && prob < 1.0f, "Dropout: p must be in [0, 1), got ", prob);
  BL_CHECK(l < 65536u, "Dropout: layer id must be < 65536, got ", l);
}

ag::Var Dropout::forward(const ag::Var& x) {
  if (!is_training() || p == 0.0f) return x;
  int64_t n = x.value().numel();
  Tensor mask = Tensor::empty(x.shape());
  float* mp = mask.data<float>();
  float keep_scale = bl::div(1.0f, bl::sub(1.0f, p));
  uint64_t stream = (step() << 16) | layer;
  for (int64_t i = 0; i < n; ++i)
    mp[i] = uniform_element(seed, stream, static_cast<uint64_t>(i)) >= p ? keep_scale : 0.0f;
  return ag::mul_constant(x, mask.to(x.device()));
}

// ---- Embedding ----

Embedding::Embedding(int64_t num, int64_t dim, InitStream& init) {
  BL_CHECK(num > 0 && dim > 0, "Embedding: sizes must be > 0, got ", num, " x ", dim);
  weight = register_parameter("weight", init::normal({num, dim}, 0.0f, 1.0f, init.seed, init.take()));
}

ag::Var Embedding::forward(const ag::Var& ids) { return ag::embedding(weight, ids.value()); }

// ---- parameter-free layers ----

ag::Var ReLU::forward(const ag::Var& x) { return ag::relu(x); }
ag::Var GELU::forward(const ag::Var& x) { return ag::gelu(x); }
ag::Var SiLU::forward(const ag::Var& x) { return ag::silu(x); }
ag::Var Tanh::forward(const ag::Var& x) { return ag::tanh(x); }
ag::Var Sigmoid::forward(const ag::Var& x) { return ag::sigmoid(x); }
ag::Var Softmax::forward(const ag::Var& x) { return ag::softmax(x, -1); }
ag::Var Flatten::forward(const ag::Var& x) {
  BL_CHECK(x.value().ndim() >= 1, "Flatten: input must have a batch dimension, got ", x.value().str());
  return ag::reshape(x, {x.dim(0), -1});
}

Sequential& Sequential::add(std::shared_ptr<Module> layer) {
  BL_CHECK(layer != nullptr, "Sequential::add: null layer");
  register_module(std::to_string(layers_.size()), layer);
  layers_.push_back(std::move(layer));
  return *this;
}

ag::Var Sequential::forward(const ag::Var& x) {
  ag::Var y = x;
  for (auto& layer : layers_) y = layer->forward(y);
  return y;
}

}  // namespace bl::nn
