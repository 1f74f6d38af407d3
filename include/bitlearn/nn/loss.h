// loss.h: loss functions (mean over the batch). Each is one tape node whose backward is a fixed
// sequence of ops.
#pragma once

#include "bitlearn/autograd.h"

namespace bl::nn {

// Cross-entropy of logits [N, C] against integer labels [N] (i32/i64 in [0, C)), with label
// smoothing eps: target (1 - eps) one-hot + eps / C. Labels out of range: bl::Error.
ag::Var cross_entropy(const ag::Var& logits, const Tensor& labels, float label_smoothing = 0.0f);
// Negative log-likelihood of log-probabilities [N, C] at labels [N].
ag::Var nll_loss(const ag::Var& log_probs, const Tensor& labels);
// Mean squared error, mean absolute error and Huber (quadratic below delta, linear above).
ag::Var mse_loss(const ag::Var& prediction, const ag::Var& target);
ag::Var l1_loss(const ag::Var& prediction, const ag::Var& target);
ag::Var huber_loss(const ag::Var& prediction, const ag::Var& target, float delta = 1.0f);
// Binary cross-entropy of logits against targets in [0, 1], in the stable form
// max(x, 0) - x y + log1p(exp(-|x|)).
ag::Var bce_with_logits(const ag::Var& logits, const ag::Var& target);

// Throws bl::Error "<what>: loss is NaN/infinite at step S" when loss is not finite.
void check_finite_loss(double loss, uint64_t step, const char* what = "training");

}  // namespace bl::nn
