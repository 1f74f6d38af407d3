// train_ops.cpp: forward and backward rules of the language-model trainer's ops (train_ops.h).
#include "lm/train_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bitlearn/ops.h"
#include "bitlearn/ops_attention.h"
#include "contract/schedule.h"
#include "core/error.h"

namespace bl::lm::train_ops {

namespace {

Tensor scalar_on(const Tensor& like, double v) { return Tensor::scalar(v, DType::f32, like.device()); }

void check_shards(const Tensor& x, Shards sh, const char* op) {
  BL_CHECK(sh.count >= 1 && sh.rows >= 1 && x.dim(0) == sh.count * sh.rows, op, ": ", x.dim(0),
           " rows are not ", sh.count, " shards of ", sh.rows, " rows");
}

Tensor rows_of(const Tensor& t, Shards sh, int64_t s) { return t.slice(0, s * sh.rows, (s + 1) * sh.rows); }

// [count * rows, C] -> [count, rows, C]: one batch entry per shard.
Tensor by_shard(const Tensor& t, Shards sh) { return t.contiguous().reshape({sh.count, sh.rows, t.dim(1)}); }

// Attention layouts: q rows [batch*T, G*R*D] <-> [batch*G, R*T, D]; k/v rows [batch*T, G*D] <->
// [batch*G, T, D].
Tensor q_to_heads(const Tensor& q, int64_t B, int64_t T, int64_t G, int64_t R, int64_t D) {
  return q.reshape({B, T, G, R, D}).permute({0, 2, 3, 1, 4}).contiguous().reshape({B * G, R * T, D});
}
Tensor q_from_heads(const Tensor& o, int64_t B, int64_t T, int64_t G, int64_t R, int64_t D) {
  return o.reshape({B, G, R, T, D}).permute({0, 3, 1, 2, 4}).contiguous().reshape({B * T, G * R * D});
}
Tensor kv_to_heads(const Tensor& k, int64_t B, int64_t T, int64_t G, int64_t D) {
  return k.reshape({B, T, G, D}).permute({0, 2, 1, 3}).contiguous().reshape({B * G, T, D});
}
Tensor kv_from_heads(const Tensor& k, int64_t B, int64_t T, int64_t G, int64_t D) {
  return k.reshape({B, G, T, D}).permute({0, 2, 1, 3}).contiguous().reshape({B * T, G * D});
}

// Query positions 0..T-1 of every sequence and key counts T, built once per (B, T, device).
std::pair<Tensor, Tensor> self_positions(int64_t B, int64_t T, Device dev) {
  static std::mutex mu;
  // Never destroyed: device tensors must not outlive the device allocator at exit.
  static auto& cache = *new std::map<std::tuple<int64_t, int64_t, std::string>, std::pair<Tensor, Tensor>>();
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_tuple(B, T, dev.str());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 16) cache.clear();
  std::vector<int64_t> pos(static_cast<size_t>(B * T));
  for (int64_t i = 0; i < B * T; ++i) pos[static_cast<size_t>(i)] = i % T;
  std::pair<Tensor, Tensor> t{Tensor::from_vector(pos, {B, T}, dev),
                              Tensor::from_vector(std::vector<int64_t>(static_cast<size_t>(B), T), {B}, dev)};
  cache.emplace(key, t);
  return t;
}

// softmax(q k^T scale + causal mask) v of rows q [B*T, H*D], k and v [B*T, G*D]: the fused op.
Tensor self_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int64_t B, int64_t T, int64_t H,
                              int64_t G, int64_t D, float scale, int64_t window) {
  const auto pos = self_positions(B, T, q.device());
  const Tensor o = bl::causal_attention(q.reshape({B, T, H, D}), k.reshape({B, T, G, D}), v.reshape({B, T, G, D}),
                                        pos.first, pos.second, scale, window);
  return o.reshape({B * T, H * D});
}

// Per-row mean negative log-likelihood pieces of one chunk: logits and the label column.
Tensor chunk_logits(const Tensor& h, const Tensor& w) { return matmul(h, w, false, true); }

}  // namespace

void fold_grad(const ag::Var& leaf, const Tensor& g) {
  ag::Var handle = leaf;
  if (!leaf.grad().defined())
    handle.set_grad(g.contiguous());
  else
    handle.set_grad(add(leaf.grad(), g));
}

namespace {

// fold_grad of per_shard[0], per_shard[1], ... (per_shard [count, ...leaf's shape]) in that order.
void fold_shards(const ag::Var& leaf, const Tensor& per_shard) {
  for (int64_t s = 0; s < per_shard.dim(0); ++s) fold_grad(leaf, per_shard.slice(0, s, s + 1).reshape(leaf.value().shape()));
}

}  // namespace

ag::Var linear(const ag::Var& x, const ag::Var& w, const ag::Var& b, bool w_in_out, Shards sh) {
  check_shards(x.value(), sh, "lm linear");
  const Tensor& wv = w.value();
  Tensor y = matmul(x.value(), wv, false, !w_in_out);
  if (b.defined()) y = add(y, b.value());
  std::vector<ag::Var> inputs{x, w};
  if (b.defined()) inputs.push_back(b);
  const Tensor xv = x.value();
  const bool has_b = b.defined();
  return ag::record("lm_linear", y, inputs, [xv, w, b, has_b, w_in_out, sh](const Tensor& g) {
    std::vector<Tensor> out(has_b ? 3 : 2);
    const Tensor& wv = w.value();
    out[0] = matmul(g, wv, false, w_in_out);
    if (w.requires_grad()) {
      // All shards' products in one batched call (each entry is exactly its shard's matmul), folded
      // in shard order.
      const Tensor g3 = by_shard(g, sh), x3 = by_shard(xv, sh);
      fold_shards(w, w_in_out ? bmm(x3, g3, true, false) : bmm(g3, x3, true, false));
    }
    if (has_b && b.requires_grad()) fold_shards(b, sum(by_shard(g, sh), {1}));
    return out;
  });
}

ag::Var norm(const ag::Var& x, const ag::Var& w, const ag::Var& b, bool is_layer_norm, float eps, Shards sh) {
  check_shards(x.value(), sh, "lm norm");
  const Tensor xv = x.value();
  Tensor y = is_layer_norm ? layer_norm(xv, w.value(), b.value(), eps) : rms_norm(xv, w.value(), eps);
  std::vector<ag::Var> inputs{x, w};
  if (b.defined()) inputs.push_back(b);
  const bool has_b = b.defined();
  return ag::record("lm_norm", y, inputs, [xv, w, b, has_b, is_layer_norm, eps, sh](const Tensor& g) {
    std::vector<Tensor> out(has_b ? 3 : 2);
    // The fused backward: the bits of the composed ops (bitlearn/ops_train.h).
    auto [dx, g_xhat] = norm_backward(xv, g, w.value(), eps, is_layer_norm);
    out[0] = dx;
    if (w.requires_grad()) fold_shards(w, sum(by_shard(g_xhat, sh), {1}));
    if (has_b && b.requires_grad()) fold_shards(b, sum(by_shard(g, sh), {1}));
    return out;
  });
}

ag::Var embedding(const ag::Var& w, const Tensor& ids, Shards sh) {
  check_shards(ids, sh, "lm embedding");
  Tensor y = bl::embedding(w.value(), ids);
  const int64_t V = w.dim(0);
  return ag::record("lm_embedding", y, {w}, [w, ids, V, sh](const Tensor& g) {
    for (int64_t s = 0; s < sh.count; ++s)
      fold_grad(w, embedding_backward(rows_of(g, sh, s), rows_of(ids, sh, s), V));
    return std::vector<Tensor>{Tensor()};
  });
}

ag::Var gelu_tanh(const ag::Var& x) {
  const Tensor xv = x.value();
  return ag::record("lm_gelu_tanh", bl::gelu_tanh(xv), {x}, [xv](const Tensor& g) {
    return std::vector<Tensor>{gelu_tanh_backward(xv, g)};
  });
}

ag::Var swiglu(const ag::Var& a, const ag::Var& b) {
  const Tensor av = a.value(), bv = b.value();
  return ag::record("lm_swiglu", bl::swiglu(av, bv), {a, b}, [av, bv](const Tensor& g) {
    auto [da, db] = swiglu_backward(av, bv, g);
    return std::vector<Tensor>{da, db};
  });
}

ag::Var rope(const ag::Var& x, const Tensor& cos_rows, const Tensor& sin_rows, int64_t D) {
  const Tensor xv = x.value();
  const int64_t heads = xv.dim(1) / D;
  BL_CHECK(heads * D == xv.dim(1) && D % 2 == 0, "lm rope: width ", xv.dim(1), " is not heads x ", D);
  return ag::record("lm_rope", bl::rope(xv, cos_rows, sin_rows, D), {x}, [cos_rows, sin_rows, D](const Tensor& g) {
    return std::vector<Tensor>{bl::rope(g, cos_rows, sin_rows, D, true)};
  });
}

std::tuple<Tensor, Tensor, Tensor> attention_backward_products(const Tensor& q3, const Tensor& k3, const Tensor& v3,
                                                               const Tensor& g3, int64_t T, float scale,
                                                               int64_t window) {
  const int64_t rows = q3.dim(1), R = rows / T;
  if (rows == 0 || (R != 1 && T % kGemmKLeaf != 0)) {
    const auto [p, ds] = causal_softmax_backward(bmm(q3, k3, false, true), bmm(g3, v3, false, true), scale, window);
    return {bmm(ds, k3), bmm(ds, q3, true, false), bmm(p, g3, true, false)};
  }
  const Tensor zero = scalar_on(q3, 0.0);
  // acc <- acc + part over the first n keys, in place. The first block starts acc (its leaf, and +0
  // for the keys it cannot see). A key past n that an earlier block reached gets the +0 leaf
  // (adding +0 turns a -0 into +0): only with R > 1, where a block of a later query head sees
  // fewer keys than the blocks before it.
  auto fold = [&](Tensor& acc, const Tensor& part, int64_t n) {
    if (!acc.defined()) {
      if (n == T) {
        acc = part;
        return;
      }
      acc = Tensor::zeros({part.dim(0), T, part.dim(2)}, DType::f32, part.device());
      Tensor head = acc.slice(1, 0, n);
      copy_into(head, part);
      return;
    }
    Tensor head = acc.slice(1, 0, n);
    copy_into(head, add(head, part));
    if (n < T && R > 1) {
      Tensor tail = acc.slice(1, n, T);
      copy_into(tail, add(tail, zero));
    }
  };
  std::vector<Tensor> dq_blocks;
  Tensor dk, dv;
  for (int64_t a = 0; a < rows; a += kGemmKLeaf) {
    const int64_t len = std::min(kGemmKLeaf, rows - a), first = a % T;
    const int64_t n = std::min(T, (first + len + kGemmKLeaf - 1) / kGemmKLeaf * kGemmKLeaf);
    const Tensor qb = q3.slice(1, a, a + len), gb = g3.slice(1, a, a + len);
    const Tensor kb = k3.slice(1, 0, n), vb = v3.slice(1, 0, n);
    const auto [p, ds] = causal_softmax_backward(bmm(qb, kb, false, true), bmm(gb, vb, false, true), scale, window,
                                                 first);
    const Tensor dq = bmm(ds, kb);
    dq_blocks.push_back(n < T ? add(dq, zero) : dq);
    fold(dk, bmm(ds, qb, true, false), n);
    fold(dv, bmm(p, gb, true, false), n);
  }
  return {concat(dq_blocks, 1), dk, dv};
}

ag::Var causal_attention(const ag::Var& q, const ag::Var& k, const ag::Var& v, int64_t B, int64_t T,
                         int64_t H, int64_t G, int64_t D, float scale, int64_t window) {
  BL_CHECK(G >= 1 && H % G == 0, "lm attention: ", H, " heads are not a multiple of ", G, " key/value heads");
  const int64_t R = H / G;
  // The forward is the contract's fused attention op (the inference kernel): no [T, T] scores are
  // held, and a trained model's logits are the bits inference gives.
  const Tensor o = self_attention_forward(q.value(), k.value(), v.value(), B, T, H, G, D, scale, window);
  const Tensor qv = q.value(), kv = k.value(), vv = v.value();
  return ag::record("lm_attention", o, {q, k, v}, [qv, kv, vv, window, scale, B, T, G, R, D](const Tensor& g) {
    const Tensor q3 = q_to_heads(qv, B, T, G, R, D);
    const Tensor k3 = kv_to_heads(kv, B, T, G, D);
    const Tensor v3 = kv_to_heads(vv, B, T, G, D);
    const Tensor g3 = q_to_heads(g, B, T, G, R, D);
    const auto [dq, dk, dv] = attention_backward_products(q3, k3, v3, g3, T, scale, window);
    return std::vector<Tensor>{q_from_heads(dq, B, T, G, R, D), kv_from_heads(dk, B, T, G, D),
                               kv_from_heads(dv, B, T, G, D)};
  });
}

namespace {

// Sum of the negative log-likelihoods of the rows of one chunk's logits.
Tensor chunk_nll_sum(const Tensor& logits, const Tensor& labels) {
  Tensor lp = log_softmax(logits, -1);
  return neg(sum(gather(lp, 1, labels.reshape({labels.dim(0), 1}))));
}

// Calls fn(s, begin, end) for every loss chunk of every shard, in order.
template <typename Fn>
void for_each_chunk(Shards sh, Fn fn) {
  for (int64_t s = 0; s < sh.count; ++s)
    for (int64_t begin = s * sh.rows; begin < (s + 1) * sh.rows; begin += kLossChunkRows)
      fn(s, begin, std::min(begin + kLossChunkRows, (s + 1) * sh.rows));
}

}  // namespace

namespace {

// Each shard's mean loss; the chunks' logits are appended to kept when it is given.
std::vector<Tensor> shard_losses_of(const Tensor& h, const Tensor& w, const Tensor& labels, Shards sh,
                                    std::vector<Tensor>* kept) {
  check_shards(h, sh, "lm cross_entropy");
  BL_CHECK(labels.dim(0) == h.dim(0), "lm cross_entropy: ", labels.dim(0), " labels for ", h.dim(0), " rows");
  std::vector<Tensor> sums(static_cast<size_t>(sh.count));
  for_each_chunk(sh, [&](int64_t s, int64_t b, int64_t e) {
    Tensor logits = chunk_logits(h.slice(0, b, e), w);
    Tensor part = chunk_nll_sum(logits, labels.slice(0, b, e));
    sums[s] = sums[s].defined() ? add(sums[s], part) : part;
    if (kept != nullptr) kept->push_back(logits);
  });
  const Tensor inv_rows = scalar_on(h, 1.0 / static_cast<double>(sh.rows));
  for (Tensor& t : sums) t = mul(t, inv_rows);
  return sums;
}

}  // namespace

std::vector<Tensor> cross_entropy_values(const Tensor& h, const Tensor& w, const Tensor& labels, Shards sh) {
  return shard_losses_of(h, w, labels, sh, nullptr);
}

ag::Var cross_entropy(const ag::Var& h, const ag::Var& w, const Tensor& labels, Shards sh, float coef,
                      std::vector<Tensor>* shard_losses, bool keep_logits) {
  // The kept logits are released chunk by chunk as the backward consumes them.
  auto kept = std::make_shared<std::vector<Tensor>>();
  std::vector<Tensor> losses = shard_losses_of(h.value(), w.value(), labels, sh, keep_logits ? kept.get() : nullptr);
  const Tensor c = scalar_on(h.value(), coef);
  Tensor total;
  for (const Tensor& l : losses) total = total.defined() ? add(total, mul(l, c)) : mul(l, c);
  if (shard_losses != nullptr) *shard_losses = losses;
  const Tensor hv = h.value();
  // With the logits kept (memory to spare), the input gradient's GEMM runs over several chunks'
  // rows at once: its rows are independent, so the grouping changes no bit, and a taller product
  // keeps more of the device busy.
  const int64_t group_rows = keep_logits ? kLossInputGradRows : kLossChunkRows;
  return ag::record("lm_cross_entropy", total, {h, w}, [hv, w, labels, sh, c, kept, group_rows](const Tensor& g) {
    // d loss_s / d logits = (softmax - onehot) / rows, times coef and the incoming gradient.
    const Tensor scale = mul(mul(g, c), scalar_on(hv, 1.0 / static_cast<double>(sh.rows)));
    std::vector<Tensor> dh, pending;
    int64_t pending_rows = 0;
    auto flush = [&] {
      if (pending.empty()) return;
      dh.push_back(matmul(pending.size() == 1 ? pending[0] : concat(pending, 0), w.value()));
      pending.clear();
      pending_rows = 0;
    };
    size_t chunk = 0;
    for_each_chunk(sh, [&](int64_t, int64_t b, int64_t e) {
      const Tensor hc = hv.slice(0, b, e);
      const Tensor lc = labels.slice(0, b, e).reshape({e - b, 1});
      Tensor logits;
      if (chunk < kept->size()) std::swap(logits, (*kept)[chunk]);
      ++chunk;
      Tensor p = softmax(logits.defined() ? logits : chunk_logits(hc, w.value()), -1);
      logits = Tensor();
      scatter_into(p, 1, lc, sub(gather(p, 1, lc), scalar_on(p, 1.0)));  // p is this chunk's own
      p = mul(p, scale);
      if (w.requires_grad()) fold_grad(w, matmul(p, hc, true, false));
      if (pending_rows + (e - b) > group_rows) flush();
      pending.push_back(p);
      pending_rows += e - b;
    });
    flush();
    return std::vector<Tensor>{concat(dh, 0), Tensor()};
  });
}

ag::Var recompute(const ag::Var& x, std::function<ag::Var(const ag::Var&)> fn) {
  Tensor y;
  {
    ag::NoGradGuard no_grad;
    y = fn(ag::Var(x.value())).value();
  }
  const Tensor xv = x.value();
  return ag::record("lm_recompute", y, {x}, [xv, fn](const Tensor& g) {
    ag::Var inner(xv, true);
    ag::Var out = fn(inner);
    ag::backward(out, g);
    return std::vector<Tensor>{inner.grad()};
  });
}

}  // namespace bl::lm::train_ops
