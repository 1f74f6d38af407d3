// nn_test_util.h: small synthetic data sets and training runs shared by the nn tests.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/nn.h"
#include "contract/rng.h"

namespace bl::nn::testing {

// n images of side x side pixels uniform in [0, 1) from Philox; the label of an image is the
// index of the brightest of `classes` fixed pixel groups (learnable, deterministic).
inline Dataset synthetic_images(int64_t n, int64_t side, int64_t classes, uint64_t seed) {
  int64_t d = side * side;
  std::vector<float> px(static_cast<size_t>(n * d));
  std::vector<int64_t> lab(static_cast<size_t>(n));
  for (int64_t i = 0; i < n * d; ++i) px[i] = uniform_element(seed, 7, static_cast<uint64_t>(i));
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    float best_v = -1;
    for (int64_t c = 0; c < classes; ++c) {
      float s = 0;
      for (int64_t k = c; k < d; k += classes) s += px[i * d + k];
      if (s > best_v) {
        best_v = s;
        best = c;
      }
    }
    lab[i] = best;
  }
  Dataset ds;
  ds.images = Tensor::from_vector(px, {n, d});
  ds.labels = Tensor::from_vector(lab, {n});
  ds.height = side;
  ds.width = side;
  return ds;
}

enum class ModelKind { mlp, cnn, lstm };

inline const char* model_name(ModelKind kind) {
  return kind == ModelKind::mlp ? "mlp" : kind == ModelKind::cnn ? "cnn" : "lstm";
}

// Test-name suffix for parameterized tests over ModelKind (".../mlp", ".../cnn", ".../lstm").
struct ModelKindName {
  template <typename Info>
  std::string operator()(const Info& info) const {
    return model_name(info.param);
  }
};

struct Built {
  std::shared_ptr<Module> model;
  Shape input_shape;
};

inline Built build_model(ModelKind kind, int64_t side, int64_t classes, uint64_t seed) {
  switch (kind) {
    case ModelKind::mlp:
      return {make_mlp(side * side, {32, 16}, classes, seed), {-1, side * side}};
    case ModelKind::cnn:
      return {make_cnn(4, classes, seed, side), {-1, side, side, 1}};
    default:
      return {std::make_shared<LstmClassifier>(side, 12, classes, seed), {-1, side, side}};
  }
}

// The SHA-256 digests of every parameter and buffer, "name=digest;" in order.
inline std::string model_digest(const Module& m) {
  std::string s;
  for (auto& [name, v] : m.named_parameters()) s += name + "=" + v.value().digest() + ";";
  for (auto& [name, v] : m.named_buffers()) s += name + "=" + v.value().digest() + ";";
  return s;
}

inline std::vector<uint32_t> loss_bits(const std::vector<float>& losses) {
  std::vector<uint32_t> bits(losses.size());
  if (!losses.empty()) std::memcpy(bits.data(), losses.data(), losses.size() * 4);
  return bits;
}

}  // namespace bl::nn::testing
