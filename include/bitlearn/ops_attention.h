// ops_attention.h: causal scaled dot-product attention as one Tensor op (src/kernels/attention.h
// defines the numerics exactly).
//
// Every output row is a function of its own query, the keys and values it may see and their count,
// so a sequence gives the same bits alone or inside a padded batch of mixed lengths, and a
// KV-cache decode step gives the same bits as the same row of a full prefill, on every device.
#pragma once

#include <cstdint>
#include <utility>

#include "bitlearn/tensor.h"

namespace bl {

// q [B, Tq, H, D], k and v [B, Tk, G, D] (f32, H a multiple of G, last axis contiguous; other
// strides free, so slices of a KV cache are used in place), q_pos i64 [B, Tq] (the position of each
// query; < 0 marks padding, whose output is +0), kv_len i64 [B] (keys 0..kv_len-1 of each sequence
// are valid, key j at position j). Query at position p sees keys max(0, p - window + 1) (window > 0;
// else 0) through min(p, kv_len - 1). Returns a contiguous [B, Tq, H, D] on the operands' device.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& q_pos,
                        const Tensor& kv_len, float scale, int64_t window = 0);

// The backward through the probabilities of causal self-attention, for training. scores [..., R, T]
// holds raw q k^T scores (before scaling) whose row r is the query at position r % T over the T
// keys of its sequence; dprobs (same shape) the gradient of the probabilities. Returns {p, ds}:
// p = softmax(scores * scale + causal mask) and ds = p * (dprobs - sum(dprobs * p)) * scale along
// the last axis, each step rounded as the composed Tensor ops round it (kernels/attention_backward.h),
// in one pass per row. Masked keys: j > t, and j <= t - window when window > 0.
std::pair<Tensor, Tensor> causal_softmax_backward(const Tensor& scores, const Tensor& dprobs, float scale,
                                                  int64_t window = 0);

// The same for a block of consecutive queries: row i of every [rows, keys] matrix of scores is the
// query at position first_position + i (so a block of query rows with only the keys they may see,
// keys 0..n-1, gives the bits of those rows of the whole problem wherever the cut keys are masked).
std::pair<Tensor, Tensor> causal_softmax_backward(const Tensor& scores, const Tensor& dprobs, float scale,
                                                  int64_t window, int64_t first_position);

}  // namespace bl
