// cases_attention.h: the case list of causal attention (src/kernels/attention.h) through
// causal_attention: single rows, prefill with padding and mixed lengths, decode steps, grouped
// key/value heads, sliding windows, head sizes and key counts past the GEMM leaf of 256.
#pragma once

#include "conformance/case_util.h"
#include "bitlearn/ops_attention.h"
#include "kernels/attention.h"
#include "kernels/attention_backward.h"
#include "ops/dispatch.h"

namespace bl::conformance {

struct AttentionProblem {
  int64_t batch, q_len, kv_cap, heads, kv_heads, dim, window;
  bool decode;  // queries at the last position of each sequence (else positions 0.., padded)
};

// q_pos [B, Tq] and kv_len [B]: sequence b holds kv_cap - b keys (at least 1); a prefill query t
// sits at position t, or is padding (-1) past its sequence; a decode query at kv_len - 1.
inline Tensors attention_positions(const AttentionProblem& p) {
  std::vector<int64_t> pos(static_cast<size_t>(p.batch * p.q_len)), len(static_cast<size_t>(p.batch));
  for (int64_t b = 0; b < p.batch; ++b) {
    len[b] = p.kv_cap - b > 1 ? p.kv_cap - b : 1;
    for (int64_t t = 0; t < p.q_len; ++t)
      pos[b * p.q_len + t] = p.decode ? len[b] - 1 : (t < len[b] ? t : -1);
  }
  return {i64_tensor(pos, {p.batch, p.q_len}), i64_tensor(len, {p.batch})};
}

inline AttentionArgs attention_args(const AttentionProblem& p, float scale) {
  AttentionArgs a;
  a.batch = p.batch;
  a.q_len = p.q_len;
  a.n_heads = p.heads;
  a.n_kv_heads = p.kv_heads;
  a.head_dim = p.dim;
  a.kv_capacity = p.kv_cap;
  a.scale = scale;
  a.window = p.window;
  a.q_sh = a.o_sh = a.k_sh = a.v_sh = p.dim;
  a.q_st = a.o_st = p.heads * p.dim;
  a.q_sb = a.o_sb = p.q_len * p.heads * p.dim;
  a.k_st = a.v_st = p.kv_heads * p.dim;
  a.k_sb = a.v_sb = p.kv_cap * p.kv_heads * p.dim;
  return a;
}

inline std::vector<OpCase> attention_cases() {
  const AttentionProblem problems[] = {
      {1, 1, 1, 1, 1, 1, 0, false},    {2, 7, 7, 4, 2, 16, 0, false}, {3, 9, 9, 2, 2, 8, 4, false},
      {2, 1, 33, 4, 1, 32, 0, true},   {1, 3, 300, 2, 2, 5, 0, true}, {1, 2, 5, 1, 1, 257, 0, false},
      {2, 5, 6, 6, 3, 7, 2, true}};
  std::vector<OpCase> out;
  uint64_t seed = 700;
  for (const AttentionProblem& p : problems) {
    seed += 3;
    const float scale = 0.3f;  // not a power of two, so folding it into q rounds differently
    OpCase c;
    c.op = "causal_attention";
    c.label = "B=" + std::to_string(p.batch) + " Tq=" + std::to_string(p.q_len) + " Tk=" +
              std::to_string(p.kv_cap) + " H=" + std::to_string(p.heads) + "/" + std::to_string(p.kv_heads) +
              " D=" + std::to_string(p.dim) + (p.window ? " window=" + std::to_string(p.window) : "") +
              (p.decode ? " decode" : " prefill");
    c.inputs = [p, seed] {
      Tensors pos = attention_positions(p);
      return Tensors{plain_floats({p.batch, p.q_len, p.heads, p.dim}, seed, 2.0f),
                     plain_floats({p.batch, p.kv_cap, p.kv_heads, p.dim}, seed + 1, 2.0f),
                     plain_floats({p.batch, p.kv_cap, p.kv_heads, p.dim}, seed + 2, 1.0f, 61), pos[0], pos[1]};
    };
    auto reference = [p, scale](const Tensors& in, bool sabotaged) {
      std::vector<float> q = floats_of(in[0]), k = floats_of(in[1]), v = floats_of(in[2]), o(q.size());
      std::vector<int64_t> pos = raw_vector<int64_t>(in[3]), len = raw_vector<int64_t>(in[4]);
      float s = scale;
      if (sabotaged) {
        // Sabotage: the scale folded into q before the dot products (another rounding).
        for (float& x : q) x = canonicalize(mul(x, scale));
        s = 1.0f;
      }
      attention_reference(attention_args(p, s), q.data(), k.data(), v.data(), pos.data(), len.data(), o.data());
      return Tensors{f32_tensor(o, in[0].shape())};
    };
    c.reference = [reference](const Tensors& in) { return reference(in, false); };
    c.run = [p, scale](const Tensors& in) {
      return Tensors{causal_attention(in[0], in[1], in[2], in[3], in[4], scale, p.window)};
    };
    if (p.batch == 2 && p.q_len == 7) {
      c.sabotage_what = "scale folded into q";
      c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
    }
    out.push_back(c);
  }
  return out;
}

// The attention backward (kernels/attention_backward.h): rows of raw scores with special values
// (NaN, +-inf, +-0, subnormals) and their probability gradients, the causal mask with and without a
// window, rows past one sum-schedule leaf of 4096 keys, a single key, empty problems. Cases with
// offset 0 are whole problems; the others are blocks of query rows from position `offset` on.
struct AttentionBackwardProblem {
  int64_t batch, rows, n, offset, window;
};

inline std::vector<OpCase> attention_backward_cases() {
  const AttentionBackwardProblem problems[] = {{1, 1, 1, 0, 0},  {2, 21, 7, 0, 0},     {1, 18, 9, 0, 4},
                                               {1, 300, 300, 0, 0}, {1, 6, 4100, 4094, 0}, {1, 5, 4100, 4095, 300},
                                               {0, 4, 4, 0, 0},  {3, 64, 33, 0, 0},      {1, 40, 2048, 2008, 0}};
  std::vector<OpCase> out;
  uint64_t seed = 760;
  for (const AttentionBackwardProblem& pr : problems) {
    seed += 2;
    const float scale = 0.3f;
    const Shape shape = {pr.batch, pr.rows, pr.n};
    AttentionBackwardArgs a;
    a.rows = pr.batch * pr.rows;
    a.n = pr.n;
    a.period = pr.offset == 0 ? pr.n : pr.rows;
    a.offset = pr.offset;
    a.scale = scale;
    a.window = pr.window;
    OpCase c;
    c.op = "attention_backward";
    c.label = std::to_string(pr.batch) + "x" + std::to_string(pr.rows) + "x" + std::to_string(pr.n) +
              (pr.offset ? " from position " + std::to_string(pr.offset) : "") +
              (pr.window ? " window=" + std::to_string(pr.window) : "");
    const bool long_rows = pr.n >= 300;
    c.inputs = [shape, seed, long_rows] {
      // Short rows: the full special-value mix (most rows then hold a NaN or an infinity). Long
      // rows: plain scores with a special value in a few rows only, so that most sums stay finite
      // and the mask and the leaf fold show.
      if (!long_rows) return Tensors{special_floats(shape, seed), plain_floats(shape, seed + 1, 1.0f, 13)};
      // dp around 1, so that c is as large as dp and its rounding shows in ds.
      std::vector<float> dp = floats_of(plain_floats(shape, seed + 1));
      for (float& x : dp) x = add(x, 1.0f);
      return Tensors{plain_floats(shape, seed, 3.0f, 9001), f32_tensor(dp, shape)};
    };
    auto reference = [a, shape](const Tensors& in, bool sabotaged) {
      std::vector<float> s = floats_of(in[0]), dp = floats_of(in[1]), p(s.size()), ds(s.size());
      attention_backward_reference(a, s.data(), dp.data(), p.data(), ds.data());
      if (sabotaged && a.offset == 0) {
        // Sabotage: no key masked.
        AttentionBackwardArgs open = a;
        open.offset = a.n;
        attention_backward_reference(open, s.data(), dp.data(), p.data(), ds.data());
      } else if (sabotaged) {
        // Sabotage: c summed left to right instead of on the sum schedule.
        for (int64_t r = 0; r < a.rows; ++r) {
          float c = 0.0f;
          for (int64_t j = 0; j < a.n; ++j) c = add(c, canonicalize(mul(dp[r * a.n + j], p[r * a.n + j])));
          for (int64_t j = 0; j < a.n; ++j)
            ds[r * a.n + j] = attention_backward_grad(p[r * a.n + j], dp[r * a.n + j], canonicalize(c), a.scale);
        }
      }
      return Tensors{f32_tensor(p, shape), f32_tensor(ds, shape)};
    };
    c.reference = [reference](const Tensors& in) { return reference(in, false); };
    c.run = [pr, scale](const Tensors& in) {
      auto [p, ds] = pr.offset == 0 ? causal_softmax_backward(in[0], in[1], scale, pr.window)
                                     : causal_softmax_backward(in[0], in[1], scale, pr.window, pr.offset);
      return Tensors{p, ds};
    };
    if (pr.rows == 300 || pr.offset == 4094) {
      c.sabotage_what = pr.offset == 0 ? "the causal mask dropped" : "c summed left to right";
      c.sabotage = [reference](const Tensors& in) { return reference(in, true); };
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace bl::conformance
