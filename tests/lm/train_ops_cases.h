// train_ops_cases.h: cases of the language-model trainer's ops (src/lm/train_ops.h), shared by the
// CPU tests (threads, shard folds, finite differences) and the CUDA test (bits equal to the CPU's
// under every launch shape). Each case builds its inputs from Philox on the host, runs the op's
// forward and its backward seeded with a fixed random gradient, and returns the output followed by
// every input and parameter gradient, on the CPU.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bitlearn/autograd.h"
#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "lm/train_ops.h"

namespace bl::lm::testing {

// Values uniform in [-scale, scale) from (seed, stream); `special` puts NaN, +-inf, -0 and a
// subnormal in the first elements.
inline Tensor random_tensor(const Shape& shape, uint64_t stream, float scale = 1.0f, bool special = false) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = scale * (2.0f * uniform_co(random_u32_element(7, stream, i)) - 1.0f);
  if (special && v.size() >= 5) {
    v[0] = std::numeric_limits<float>::quiet_NaN();
    v[1] = std::numeric_limits<float>::infinity();
    v[2] = -std::numeric_limits<float>::infinity();
    v[3] = -0.0f;
    v[4] = 1e-40f;
  }
  return Tensor::from_vector(v, shape);
}

inline Tensor ids_tensor(int64_t n, int64_t vocab, uint64_t stream) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = random_u32_element(9, stream, i) % vocab;
  return Tensor::from_vector(v, {n});
}

struct TrainOpCase {
  std::string name;
  // Runs on device; `shards` overrides the case's shard count (0: the case's own).
  std::function<std::vector<Tensor>(Device device, int64_t shards)> run;
};

namespace detail {

inline ag::Var leaf(const Tensor& host, Device d) { return ag::Var(host.to(d), true); }

// Backward of out seeded with a random gradient; returns out, then the grads of vars (CPU).
inline std::vector<Tensor> finish(const ag::Var& out, const std::vector<ag::Var>& vars, uint64_t stream) {
  ag::backward(out, random_tensor(out.shape(), stream).to(out.device()));
  std::vector<Tensor> r{out.value().to(Device::cpu())};
  for (const ag::Var& v : vars)
    r.push_back(v.defined() && v.grad().defined() ? v.grad().to(Device::cpu()) : Tensor());
  return r;
}

}  // namespace detail

inline std::vector<TrainOpCase> train_op_cases() {
  using detail::finish;
  using detail::leaf;
  using train_ops::Shards;
  std::vector<TrainOpCase> cases;
  // Linear: [N, in] x [out, in]^T + b, and the GPT-2 layout [in, out]; odd sizes.
  for (bool in_out : {false, true}) {
    for (bool special : {false, true}) {
      cases.push_back({std::string("linear_") + (in_out ? "in_out" : "out_in") + (special ? "_special" : ""),
                       [in_out, special](Device d, int64_t s) {
                         const int64_t shards = s > 0 ? s : 3, total = 21, in = 37, out = 19;
                         ag::Var x = leaf(random_tensor({total, in}, 1, 1.0f, special), d);
                         ag::Var w = leaf(random_tensor(in_out ? Shape{in, out} : Shape{out, in}, 2, 0.3f), d);
                         ag::Var b = leaf(random_tensor({out}, 3), d);
                         ag::Var y = train_ops::linear(x, w, b, in_out, Shards{shards, total / shards});
                         return finish(y, {x, w, b}, 4);
                       }});
    }
  }
  for (bool ln : {false, true}) {
    cases.push_back({ln ? "layer_norm" : "rms_norm", [ln](Device d, int64_t s) {
                       const int64_t shards = s > 0 ? s : 3, total = 15, C = 33;
                       ag::Var x = leaf(random_tensor({total, C}, 5, 2.0f), d);
                       ag::Var w = leaf(random_tensor({C}, 6), d);
                       ag::Var b = ln ? leaf(random_tensor({C}, 7), d) : ag::Var();
                       ag::Var y = train_ops::norm(x, w, b, ln, 1e-5f, Shards{shards, total / shards});
                       return finish(y, {x, w, b}, 8);
                     }});
  }
  cases.push_back({"embedding", [](Device d, int64_t s) {
                     const int64_t shards = s > 0 ? s : 3, total = 33, V = 13, C = 9;
                     ag::Var w = leaf(random_tensor({V, C}, 9), d);
                     ag::Var y = train_ops::embedding(w, ids_tensor(total, V, 10).to(d), Shards{shards, total / shards});
                     return finish(y, {w}, 11);
                   }});
  cases.push_back({"gelu_tanh", [](Device d, int64_t) {
                     ag::Var x = leaf(random_tensor({97, 3}, 12, 6.0f, true), d);
                     return finish(train_ops::gelu_tanh(x), {x}, 13);
                   }});
  cases.push_back({"rope", [](Device d, int64_t) {
                     const int64_t N = 23, heads = 3, D = 8;
                     ag::Var x = leaf(random_tensor({N, heads * D}, 14, 1.0f, true), d);
                     ag::Var y = train_ops::rope(x, random_tensor({N, D}, 15).to(d), random_tensor({N, D}, 16).to(d), D);
                     return finish(y, {x}, 17);
                   }});
  for (int64_t window : {0, 4}) {
    cases.push_back({"attention_gqa" + std::string(window ? "_window" : ""), [window](Device d, int64_t) {
                       const int64_t B = 2, T = 9, H = 4, G = 2, D = 6;
                       ag::Var q = leaf(random_tensor({B * T, H * D}, 18), d);
                       ag::Var k = leaf(random_tensor({B * T, G * D}, 19), d);
                       ag::Var v = leaf(random_tensor({B * T, G * D}, 20), d);
                       ag::Var y = train_ops::causal_attention(q, k, v, B, T, H, G, D, 0.4f, window);
                       return finish(y, {q, k, v}, 21);
                     }});
  }
  // Long sequences: the backward runs in blocks of query rows (R == 1 with a short last block;
  // R == 2 with T a multiple of the block; R == 2 with T not, computed whole).
  struct LongAttention {
    const char* name;
    int64_t T, H, G, window;
  };
  for (const LongAttention& la : {LongAttention{"attention_blocks", 600, 1, 1, 0},
                                  LongAttention{"attention_blocks_gqa", 512, 2, 1, 0},
                                  LongAttention{"attention_blocks_gqa_window", 512, 2, 1, 300},
                                  LongAttention{"attention_whole_gqa", 300, 2, 1, 0}}) {
    cases.push_back({la.name, [la](Device d, int64_t) {
                       const int64_t B = 2, D = 5;
                       ag::Var q = leaf(random_tensor({B * la.T, la.H * D}, 25), d);
                       ag::Var k = leaf(random_tensor({B * la.T, la.G * D}, 26), d);
                       ag::Var v = leaf(random_tensor({B * la.T, la.G * D}, 27), d);
                       ag::Var y = train_ops::causal_attention(q, k, v, B, la.T, la.H, la.G, D, 0.4f, la.window);
                       return finish(y, {q, k, v}, 28);
                     }});
  }
  // Cross-entropy with shards longer than a loss chunk, so the chunk fold is exercised too; with
  // the logits recomputed by the backward and kept from the forward.
  for (bool keep : {false, true}) {
    cases.push_back({keep ? "cross_entropy_kept_logits" : "cross_entropy", [keep](Device d, int64_t s) {
                       const int64_t shards = s > 0 ? s : 2, total = 2 * (train_ops::kLossChunkRows + 37), V = 29,
                                     C = 7;
                       ag::Var h = leaf(random_tensor({total, C}, 22), d);
                       ag::Var w = leaf(random_tensor({V, C}, 23), d);
                       std::vector<Tensor> losses;
                       ag::Var root = train_ops::cross_entropy(h, w, ids_tensor(total, V, 24).to(d),
                                                               Shards{shards, total / shards}, 0.5f, &losses, keep);
                       ag::backward(root);
                       std::vector<Tensor> r{root.value().to(Device::cpu()), h.grad().to(Device::cpu()),
                                             w.grad().to(Device::cpu())};
                       for (const Tensor& l : losses) r.push_back(l.to(Device::cpu()));
                       return r;
                     }});
  }
  return cases;
}

}  // namespace bl::lm::testing
