// train_ops.h: the differentiable pieces of the language-model trainer (bitlearn/lm.h).
//
// Every op here works on the rows of a micro-batch: a whole number of logical shards, each shard
// `rows` consecutive rows (its sequences' tokens). Parameter gradients never mix shards: each op
// computes the gradient of a parameter shard by shard and folds it into the parameter's .grad in
// shard order (grad = g_0, then grad + g_1, ...), as its backward runs. Each parameter has exactly
// one consuming op, so the gradient of a step is the same ordered fold of per-shard gradients
// whether its shards run one per micro-batch, two, or all at once. Activation gradients are
// row-local (every row's bits are independent of the row count by the contract GEMM), so they are
// the same too. Every forward and backward is a fixed sequence of bitlearn ops: identical on every
// device and thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

#include "bitlearn/autograd.h"

namespace bl::lm::train_ops {

// The shard layout of a micro-batch: count shards of rows rows each.
struct Shards {
  int64_t count = 1;
  int64_t rows = 0;
};

// Rows of the loss computed per chunk (logits of at most this many rows live at once); a fixed
// constant of the contract, since the head's gradient is folded chunk by chunk.
constexpr int64_t kLossChunkRows = 1024;
// Rows of the loss's input-gradient GEMM at once when the logits are kept (row-local: not a
// constant of the contract, any grouping gives the same bits).
constexpr int64_t kLossInputGradRows = 8192;

// leaf.grad = g when it has none yet, else leaf.grad + g.
void fold_grad(const ag::Var& leaf, const Tensor& g);

// x [N, in] times the weight (+ bias [out] when defined). w_in_out: w is [in, out] (GPT-2 Conv1D),
// else [out, in] (a Hugging Face Linear).
ag::Var linear(const ag::Var& x, const ag::Var& w, const ag::Var& b, bool w_in_out, Shards sh);

// LayerNorm (with bias b) or RMSNorm (b undefined) over the last dim of x [N, C], weight w [C].
ag::Var norm(const ag::Var& x, const ag::Var& w, const ag::Var& b, bool layer_norm, float eps, Shards sh);

// Rows of w [V, C] at ids (i64 [N]): [N, C]; the weight gradient is bl::embedding_backward per shard.
ag::Var embedding(const ag::Var& w, const Tensor& ids, Shards sh);

// GELU with the tanh approximation (forward bl::gelu_tanh, backward bl::gelu_tanh_backward).
ag::Var gelu_tanh(const ag::Var& x);

// SwiGLU silu(a) * b as one node (bl::swiglu, bl::swiglu_backward): the bits of ag::mul(ag::silu(a), b).
ag::Var swiglu(const ag::Var& a, const ag::Var& b);

// Rotary embedding of x [N, heads * D] with per-row tables cos, sin [N, D] (constants):
// x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1) per head (bl::rope, both directions).
ag::Var rope(const ag::Var& x, const Tensor& cos_rows, const Tensor& sin_rows, int64_t head_dim);

// The backward products of causal self-attention from q3, g3 [BG, R*T, D] (query heads of a
// key/value head stacked: row r * T + t is head r's query at position t) and k3, v3 [BG, T, D]:
// {dq, dk, dv}. The probabilities are recomputed from the scores; the fused op gives the bits of
// softmax(s * scale + mask) and p * (dp - sum(dp * p)) * scale as separate ops would. The products are those of the whole [R*T, T] problem,
//   p, ds = causal_softmax_backward(q k^T, g v^T);  dq = ds k;  dk = ds^T q;  dv = p^T g,
// computed one block of kGemmKLeaf query rows at a time over only the keys the block may see
// (rounded up to whole GEMM leaves): no [T, T] tensor is held and the masked half is not
// multiplied. Each piece has the bits of the whole computation wherever the inputs are finite:
//  - a block's p and ds are the whole rows' values on the kept keys (the cut keys are masked, so
//    they only add +0 to the row's sums, in the same lanes);
//  - dq of a block is the whole product less trailing leaves of masked (zero) terms, which are +0:
//    adding +0 once (it turns a -0 into +0) gives the whole product's bits;
//  - a block is exactly one GEMM k-leaf of dk = ds^T q and dv = p^T g, so the running sums over
//    blocks are the GEMM's leaf fold in its order; a key the block cannot see gets the +0 leaf it
//    would have added.
// Blocks must not straddle two query heads' rows, so the blocked form needs R == 1 or T a multiple
// of kGemmKLeaf; otherwise the whole problem is computed at once (the same bits).
std::tuple<Tensor, Tensor, Tensor> attention_backward_products(const Tensor& q3, const Tensor& k3, const Tensor& v3,
                                                               const Tensor& g3, int64_t T, float scale,
                                                               int64_t window);

// Causal self-attention of `batch` sequences of T tokens: q [batch*T, H*D], k and v [batch*T, G*D]
// (G divides H; query head h reads key/value head h / (H/G)). softmax(q k^T scale + mask) v with
// the causal mask (and a sliding window of `window` keys when > 0); out [batch*T, H*D]. The
// backward recomputes the probabilities instead of keeping them.
ag::Var causal_attention(const ag::Var& q, const ag::Var& k, const ag::Var& v, int64_t batch, int64_t T,
                         int64_t H, int64_t G, int64_t D, float scale, int64_t window);

// Mean next-token cross-entropy of each shard: logits = h [N, C] times w^T (w [V, C]), computed
// kLossChunkRows rows at a time. labels i64 [N]. The node's value is sum over shards of loss_s *
// coef (coef = 1 / the step's shard count); shard_losses receives each shard's mean loss (0-d
// tensors on the device). keep_logits: the forward keeps every chunk's logits ([N, V] in all) for
// the backward, which frees each as it is used; otherwise the backward recomputes each chunk's
// logits and they are never held whole. The bits are the same either way.
ag::Var cross_entropy(const ag::Var& h, const ag::Var& w, const Tensor& labels, Shards sh, float coef,
                      std::vector<Tensor>* shard_losses, bool keep_logits);

// The same losses without gradients (evaluation): each shard's mean loss.
std::vector<Tensor> cross_entropy_values(const Tensor& h, const Tensor& w, const Tensor& labels, Shards sh);

// fn(x) with activation recomputation: the forward runs without recording, the backward runs fn
// again with recording and backpropagates through it. Same bits as fn(x) recorded directly, when
// x feeds nothing but fn and fn's parameters are consumed nowhere else.
ag::Var recompute(const ag::Var& x, std::function<ag::Var(const ag::Var&)> fn);

}  // namespace bl::lm::train_ops
