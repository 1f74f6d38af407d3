// test_train_ops.cpp: the trainer's ops (src/lm/train_ops.h) give the same bits at every thread
// count, fold parameter gradients shard by shard in shard order (and the fold is observable: one
// fold over all rows gives other bits), and their gradients agree with finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bitlearn/ops.h"
#include "bitlearn/ops_attention.h"
#include "core/thread_pool.h"
#include "lm/train_ops_cases.h"

namespace bl::lm {
namespace {

using testing::random_tensor;
using testing::train_op_cases;

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.raw_data(), cb.raw_data(), static_cast<size_t>(ca.numel()) * ca.element_size()) == 0;
}

void expect_same(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], b[i])) << what << ", result " << i;
}

// The fused attention backward gives the bits of the separate ops it replaces: the scaled,
// masked softmax, then p * (dp - sum(dp * p)) * scale.
TEST(LmTrainOps, FusedSoftmaxBackwardEqualsTheComposedOps) {
  const int64_t BG = 2, R = 3, T = 37;
  for (int64_t window : {0, 5}) {
    const Tensor s = random_tensor({BG, R * T, T}, 11 + window, 3.0f), dp = random_tensor({BG, R * T, T}, 12, 1.0f);
    const float scale = 0.125f * 1.3f;
    std::vector<float> m(static_cast<size_t>(R * T * T), 0.0f);
    for (int64_t i = 0; i < R * T; ++i)
      for (int64_t j = 0; j < T; ++j)
        if (j > i % T || (window > 0 && j <= i % T - window)) m[static_cast<size_t>(i * T + j)] = -INFINITY;
    const Tensor mask = Tensor::from_vector(m, {R * T, T});
    const Tensor sc = Tensor::scalar(scale, DType::f32);
    const Tensor p = softmax(add(mul(s, sc), mask), -1);
    const Tensor ds = mul(mul(p, sub(dp, sum(mul(dp, p), {-1}, true))), sc);
    const auto [fp, fds] = causal_softmax_backward(s, dp, scale, window);
    EXPECT_TRUE(same_bits(fp, p)) << "window " << window;
    EXPECT_TRUE(same_bits(fds, ds)) << "window " << window;
  }
}

// A block of query rows over only the keys it may see gives the bits of those rows of the whole
// problem (first_position names the block's first query).
// The fused norm backward, rotary embedding, SwiGLU and GELU-tanh backward (bitlearn/ops_train.h)
// give the bits of the composed Tensor ops they replace, special values included; the composed
// forms below are the trainer's earlier op sequences.
TEST(LmTrainOps, FusedTrainingOpsEqualTheComposedOps) {
  const int64_t N = 37, D = 8, heads = 3;
  for (bool special : {false, true}) {
    const Tensor x = random_tensor({N, 96}, 31, 3.0f, special), g = random_tensor({N, 96}, 32, 1.0f, special);
    const Tensor w = random_tensor({96}, 33, 2.0f, special);
    for (bool layer : {false, true}) {
      const float eps = 1e-5f;
      const Tensor e = Tensor::scalar(eps, DType::f32);
      const Tensor c = layer ? sub(x, mean(x, {-1}, true)) : x;
      const Tensor r = rsqrt(add(mean(square(c), {-1}, true), e));
      const Tensor xhat = mul(c, r), d = mul(g, w);
      Tensor inner = sub(d, mul(xhat, mean(mul(d, xhat), {-1}, true)));
      if (layer) inner = sub(inner, mean(d, {-1}, true));
      auto [dx, gx] = norm_backward(x, g, w, eps, layer);
      EXPECT_TRUE(same_bits(dx, mul(r, inner))) << "norm dx, layer " << layer << " special " << special;
      EXPECT_TRUE(same_bits(gx, mul(g, xhat))) << "norm g*xhat, layer " << layer << " special " << special;
    }
    const Tensor q = random_tensor({N, heads * D}, 34, 2.0f, special);
    const Tensor co = random_tensor({N, D}, 35, 1.0f, special), si = random_tensor({N, D}, 36, 1.0f, special);
    const Tensor c3 = co.reshape({N, 1, D}), s3 = si.reshape({N, 1, D});
    const Tensor q3 = q.reshape({N, heads, D});
    const Tensor rot = concat({neg(q3.slice(2, D / 2, D)), q3.slice(2, 0, D / 2)}, 2);
    EXPECT_TRUE(same_bits(rope(q, co, si, D), add(mul(q3, c3), mul(rot, s3)).reshape({N, heads * D}))) << special;
    const Tensor z3 = mul(q3, s3);
    const Tensor rot_t = concat({z3.slice(2, D / 2, D), neg(z3.slice(2, 0, D / 2))}, 2);
    EXPECT_TRUE(same_bits(rope(q, co, si, D, true), add(mul(q3, c3), rot_t).reshape({N, heads * D}))) << special;
    const Tensor a = random_tensor({N, 96}, 37, 6.0f, special), b = random_tensor({N, 96}, 38, 2.0f, special);
    EXPECT_TRUE(same_bits(swiglu(a, b), mul(silu(a), b))) << special;
    const Tensor one = Tensor::scalar(1.0, DType::f32);
    const Tensor s = sigmoid(a), dsilu = mul(s, add(one, mul(a, sub(one, s))));
    auto [da, db] = swiglu_backward(a, b, g);
    EXPECT_TRUE(same_bits(da, mul(mul(g, b), dsilu))) << special;
    EXPECT_TRUE(same_bits(db, mul(g, silu(a)))) << special;
    const Tensor k = Tensor::scalar(0.7978845608028654, DType::f32), qc = Tensor::scalar(0.044715, DType::f32);
    const Tensor half = Tensor::scalar(0.5, DType::f32), three_q = Tensor::scalar(3 * 0.044715, DType::f32);
    const Tensor x2 = square(a), t = tanh(mul(k, add(a, mul(qc, mul(x2, a)))));
    const Tensor left = mul(half, add(one, t));
    const Tensor right = mul(mul(half, a), mul(sub(one, square(t)), mul(k, add(one, mul(three_q, x2)))));
    EXPECT_TRUE(same_bits(gelu_tanh_backward(a, g), mul(g, add(left, right)))) << special;
  }
}

TEST(LmTrainOps, SoftmaxBackwardOfABlockEqualsThoseRowsOfTheWhole) {
  const int64_t BG = 2, T = 600;
  for (int64_t window : {0, 100}) {
    const Tensor s = random_tensor({BG, T, T}, 61, 3.0f), dp = random_tensor({BG, T, T}, 62);
    const auto [p, ds] = causal_softmax_backward(s, dp, 0.3f, window);
    for (int64_t first : {int64_t{0}, int64_t{256}, int64_t{512}}) {
      const int64_t rows = std::min<int64_t>(256, T - first), keys = std::min<int64_t>(T, first + 256);
      const auto [bp, bds] = causal_softmax_backward(s.slice(1, first, first + rows).slice(2, 0, keys),
                                                     dp.slice(1, first, first + rows).slice(2, 0, keys), 0.3f,
                                                     window, first);
      EXPECT_TRUE(same_bits(bp, p.slice(1, first, first + rows).slice(2, 0, keys))) << first;
      EXPECT_TRUE(same_bits(bds, ds.slice(1, first, first + rows).slice(2, 0, keys))) << first;
    }
  }
}

// The attention backward computed in blocks of query rows (train_ops.h) gives the bits of the
// whole [R*T, T] products; the sabotage arm folds the blocks' dv leaves from the last block to
// the first and must differ.
TEST(LmTrainOps, AttentionBackwardBlocksEqualTheWholeProducts) {
  struct Shape3 {
    int64_t R, T, window;
  };
  for (const Shape3 sh : {Shape3{1, 600, 0}, Shape3{2, 512, 0}, Shape3{2, 512, 200}, Shape3{1, 256, 0}}) {
    const int64_t BG = 2, D = 7, rows = sh.R * sh.T;
    const float scale = 0.35f;
    const Tensor q3 = random_tensor({BG, rows, D}, 63), g3 = random_tensor({BG, rows, D}, 64);
    const Tensor k3 = random_tensor({BG, sh.T, D}, 65), v3 = random_tensor({BG, sh.T, D}, 66);
    const auto [dq, dk, dv] = train_ops::attention_backward_products(q3, k3, v3, g3, sh.T, scale, sh.window);
    const auto [p, ds] = causal_softmax_backward(bmm(q3, k3, false, true), bmm(g3, v3, false, true), scale, sh.window);
    const std::string what = "R " + std::to_string(sh.R) + " T " + std::to_string(sh.T);
    EXPECT_TRUE(same_bits(dq, bmm(ds, k3))) << what;
    EXPECT_TRUE(same_bits(dk, bmm(ds, q3, true, false))) << what;
    EXPECT_TRUE(same_bits(dv, bmm(p, g3, true, false))) << what;
    if (rows > 256) {
      Tensor reversed;
      for (int64_t a = (rows - 1) / 256 * 256; a >= 0; a -= 256) {
        const int64_t e = std::min(rows, a + 256);
        const Tensor part = bmm(p.slice(1, a, e), g3.slice(1, a, e), true, false);
        reversed = reversed.defined() ? add(reversed, part) : part;
      }
      EXPECT_FALSE(same_bits(dv, reversed)) << what << ": the block fold order leaves no trace";
    }
  }
}

// The loss gives the same bits whether its logits are kept from the forward or recomputed.
TEST(LmTrainOps, KeptLogitsGiveTheSameBits) {
  std::vector<Tensor> recomputed, kept;
  for (const auto& c : train_op_cases()) {
    if (c.name == "cross_entropy") recomputed = c.run(Device::cpu(), 0);
    if (c.name == "cross_entropy_kept_logits") kept = c.run(Device::cpu(), 0);
  }
  ASSERT_FALSE(recomputed.empty());
  expect_same(kept, recomputed, "kept logits");
}

TEST(LmTrainOps, EveryThreadCountGivesTheSameBits) {
  const int saved = num_threads();
  for (const auto& c : train_op_cases()) {
    set_num_threads(1);
    const std::vector<Tensor> ref = c.run(Device::cpu(), 0);
    for (int t : {2, 3}) {
      set_num_threads(t);
      expect_same(c.run(Device::cpu(), 0), ref, c.name + " at " + std::to_string(t) + " threads");
    }
  }
  set_num_threads(saved);
}

// The weight gradient of a linear layer is ((x_0^T g_0) + x_1^T g_1) + x_2^T g_2 over its shards,
// computed here from plain ops; and (the sabotage arm) one product over all rows differs.
TEST(LmTrainOps, LinearFoldsShardGradientsInShardOrder) {
  const int64_t shards = 3, rows = 64, in = 48, out = 40;
  const Tensor x = random_tensor({shards * rows, in}, 31), w = random_tensor({out, in}, 32, 0.2f);
  const Tensor g = random_tensor({shards * rows, out}, 33);
  ag::Var xv(x, true), wv(w, true);
  ag::backward(train_ops::linear(xv, wv, ag::Var(), false, {shards, rows}), g);
  Tensor expected;
  for (int64_t s = 0; s < shards; ++s) {
    Tensor part = matmul(g.slice(0, s * rows, (s + 1) * rows), x.slice(0, s * rows, (s + 1) * rows), true, false);
    expected = expected.defined() ? add(expected, part) : part;
  }
  EXPECT_TRUE(same_bits(wv.grad(), expected));
  EXPECT_FALSE(same_bits(wv.grad(), matmul(g, x, true, false))) << "one product over all rows has the same bits";
}

TEST(LmTrainOps, SabotageShardCountChangesParameterGradients) {
  for (const auto& c : train_op_cases()) {
    if (c.name != "linear_out_in" && c.name != "layer_norm" && c.name != "embedding" && c.name != "cross_entropy")
      continue;
    const std::vector<Tensor> a = c.run(Device::cpu(), 0), b = c.run(Device::cpu(), 1);
    bool all_same = true;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) all_same = all_same && same_bits(a[i], b[i]);
    EXPECT_FALSE(all_same) << c.name << ": the shard fold leaves no trace";
  }
}

// d/dx <f(x), R> along a random direction against central differences.
void check_fd(const std::string& name, const Tensor& x0, const std::function<ag::Var(const ag::Var&)>& f) {
  ag::Var x(x0, true);
  const ag::Var y = f(x);
  const Tensor r = random_tensor(y.shape(), 41);
  ag::backward(y, r);
  const Tensor dir = random_tensor(x0.shape(), 42);
  const double analytic = sum(mul(x.grad(), dir)).item();
  const float eps = 1e-3f;
  auto at = [&](float sgn) {
    ag::NoGradGuard no_grad;
    return sum(mul(f(ag::Var(add(x0, mul(dir, Tensor::scalar(sgn * eps))))).value(), r)).item();
  };
  const double numeric = (at(1) - at(-1)) / (2 * eps);
  EXPECT_NEAR(analytic, numeric, 0.01 * std::abs(numeric) + 1e-3) << name;
}

TEST(LmTrainOps, GradientsAgreeWithFiniteDifferences) {
  using train_ops::Shards;
  const Tensor w = random_tensor({24}, 43), b = random_tensor({24}, 44);
  check_fd("rms_norm", random_tensor({10, 24}, 45, 2.0f),
           [&](const ag::Var& x) { return train_ops::norm(x, ag::Var(w), ag::Var(), false, 1e-5f, Shards{2, 5}); });
  check_fd("layer_norm", random_tensor({10, 24}, 46, 2.0f),
           [&](const ag::Var& x) { return train_ops::norm(x, ag::Var(w), ag::Var(b), true, 1e-5f, Shards{2, 5}); });
  check_fd("gelu_tanh", random_tensor({50}, 47, 3.0f), [](const ag::Var& x) { return train_ops::gelu_tanh(x); });
  const Tensor cs = random_tensor({6, 8}, 48), sn = random_tensor({6, 8}, 49);
  check_fd("rope", random_tensor({6, 16}, 50), [&](const ag::Var& x) { return train_ops::rope(x, cs, sn, 8); });
  const Tensor k = random_tensor({2 * 7, 2 * 4}, 51), v = random_tensor({2 * 7, 2 * 4}, 52);
  check_fd("attention q", random_tensor({2 * 7, 4 * 4}, 53), [&](const ag::Var& q) {
    return train_ops::causal_attention(q, ag::Var(k), ag::Var(v), 2, 7, 4, 2, 4, 0.5f, 0);
  });
  const Tensor q = random_tensor({2 * 7, 4 * 4}, 54);
  check_fd("attention k", k, [&](const ag::Var& kk) {
    return train_ops::causal_attention(ag::Var(q), kk, ag::Var(v), 2, 7, 4, 2, 4, 0.5f, 3);
  });
  check_fd("attention v", v, [&](const ag::Var& vv) {
    return train_ops::causal_attention(ag::Var(q), ag::Var(k), vv, 2, 7, 4, 2, 4, 0.5f, 0);
  });
  const Tensor hw = random_tensor({11, 6}, 55);
  const Tensor labels = testing::ids_tensor(20, 11, 56);
  check_fd("cross_entropy h", random_tensor({20, 6}, 57), [&](const ag::Var& h) {
    return train_ops::cross_entropy(h, ag::Var(hw), labels, Shards{2, 10}, 0.5f, nullptr, false);
  });
}

}  // namespace
}  // namespace bl::lm
