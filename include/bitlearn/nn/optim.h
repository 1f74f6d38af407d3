// optim.h: optimizers, gradient clipping. Updates are Tensor ops on the parameters' device
// (identical everywhere); scalar hyper-parameters are binary32 and bias corrections are running
// binary32 products (beta^t by repeated multiplication), so no libm enters a step.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/nn/module.h"

namespace bl::nn {

class Optimizer {
 public:
  // params: ("name", Var) pairs, e.g. model.named_parameters().
  Optimizer(NamedVars params, float lr);
  virtual ~Optimizer() = default;
  // One update with the current gradients (a parameter without a gradient is left alone).
  void step();
  // Forgets every parameter's gradient.
  void zero_grad();
  void set_lr(float lr) { lr_ = lr; }
  float lr() const { return lr_; }
  // Number of completed steps.
  int64_t steps() const { return steps_; }
  // The optimizer's name ("sgd", "adam", ...), stored in checkpoints.
  virtual const char* name() const = 0;
  // Every state tensor as "<slot>.<param name>" (plus 0-d scalars such as "beta1_power"), for
  // checkpoints.
  std::map<std::string, Tensor> state() const;
  // Restores state() of an optimizer that took `steps` steps. Refused (bl::Error naming the entry,
  // nothing changed) when steps is negative, a slot is missing after steps > 0 or present at 0, a
  // slot has the wrong shape or dtype, a scalar differs from what `steps` steps give (Adam's
  // beta powers: beta^steps as step() multiplies it), or an entry belongs to no parameter.
  void load_state(const std::map<std::string, Tensor>& state, int64_t steps);
  const NamedVars& params() const { return params_; }

 protected:
  // Updates parameter i from gradient g; slots(i) holds its state tensors.
  virtual void update(size_t i, const Tensor& g) = 0;
  // Called once per step before the per-parameter updates.
  virtual void begin_step() {}
  // Slot names per parameter (e.g. {"m", "v"}); created lazily as zeros like the parameter.
  virtual std::vector<std::string> slot_names() const { return {}; }
  // The slots (index into slot_names(), shape) a parameter of this value holds after its first
  // update; default: every slot, shaped like the parameter.
  virtual std::vector<std::pair<size_t, Shape>> slot_layout(const Tensor& param) const;
  // The value of each scalar of scalars_ after `steps` steps, bit for bit; load_state refuses a
  // checkpoint that disagrees. Default: no scalar to check.
  virtual std::map<std::string, float> scalars_after(int64_t steps) const;
  // Per-step scalars kept as 0-d tensors (e.g. beta powers).
  std::map<std::string, float> scalars_;
  Tensor& slot(size_t i, size_t k);
  Tensor scalar(const Tensor& like, float v) const;

  NamedVars params_;
  float lr_;
  int64_t steps_ = 0;

 private:
  std::vector<std::vector<Tensor>> slots_;
};

// SGD with momentum (dampening 0), optional Nesterov and L2 weight decay (PyTorch semantics).
class SGD : public Optimizer {
 public:
  SGD(NamedVars params, float lr, float momentum = 0.0f, bool nesterov = false, float weight_decay = 0.0f);
  const char* name() const override { return "sgd"; }

 protected:
  void update(size_t i, const Tensor& g) override;
  std::vector<std::string> slot_names() const override;
  float momentum_, weight_decay_;
  bool nesterov_;
};

// Adam (L2 weight decay added to the gradient) and AdamW (decoupled decay p -= lr wd p):
// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps).
class Adam : public Optimizer {
 public:
  Adam(NamedVars params, float lr, float beta1 = 0.9f, float beta2 = 0.999f, float eps = 1e-8f,
       float weight_decay = 0.0f, bool decoupled = false);
  const char* name() const override { return decoupled_ ? "adamw" : "adam"; }
  // Parameters for which excluded(name, value) holds get no weight decay (norms, biases,
  // embeddings, as language-model training usually does).
  void exclude_from_weight_decay(const std::function<bool(const std::string&, const Tensor&)>& excluded);

 protected:
  void begin_step() override;
  void update(size_t i, const Tensor& g) override;
  std::vector<std::string> slot_names() const override { return {"m", "v"}; }
  std::map<std::string, float> scalars_after(int64_t steps) const override;
  float beta1_, beta2_, eps_, weight_decay_;
  bool decoupled_;
  std::vector<bool> no_decay_;  // empty: every parameter decays
};
class AdamW : public Adam {
 public:
  AdamW(NamedVars params, float lr, float beta1 = 0.9f, float beta2 = 0.999f, float eps = 1e-8f,
        float weight_decay = 0.01f)
      : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay, true) {}
};

// RMSprop: v = a v + (1-a) g^2; p -= lr g / (sqrt(v) + eps).
class RMSprop : public Optimizer {
 public:
  RMSprop(NamedVars params, float lr, float alpha = 0.99f, float eps = 1e-8f);
  const char* name() const override { return "rmsprop"; }

 protected:
  void update(size_t i, const Tensor& g) override;
  std::vector<std::string> slot_names() const override { return {"v"}; }
  float alpha_, eps_;
};

// Adagrad: s += g^2; p -= lr g / (sqrt(s) + eps).
class Adagrad : public Optimizer {
 public:
  Adagrad(NamedVars params, float lr, float eps = 1e-10f);
  const char* name() const override { return "adagrad"; }

 protected:
  void update(size_t i, const Tensor& g) override;
  std::vector<std::string> slot_names() const override { return {"s"}; }
  float eps_;
};

// Lion: c = b1 m + (1-b1) g; p -= lr (sign(c) + wd p); m = b2 m + (1-b2) g.
class Lion : public Optimizer {
 public:
  Lion(NamedVars params, float lr, float beta1 = 0.9f, float beta2 = 0.99f, float weight_decay = 0.0f);
  const char* name() const override { return "lion"; }

 protected:
  void update(size_t i, const Tensor& g) override;
  std::vector<std::string> slot_names() const override { return {"m"}; }
  float beta1_, beta2_, weight_decay_;
};

// Adafactor (no first moment, fixed decay beta2): 2-d parameters keep row and column means of
// g^2 + eps1 (v = r c^T / mean(r)); others a full v. The update u = g / sqrt(v) is scaled down to
// RMS <= clip, then p -= lr u.
class Adafactor : public Optimizer {
 public:
  Adafactor(NamedVars params, float lr, float beta2 = 0.999f, float eps1 = 1e-30f, float clip = 1.0f);
  const char* name() const override { return "adafactor"; }

 protected:
  void update(size_t i, const Tensor& g) override;
  std::vector<std::string> slot_names() const override { return {"row", "col", "v"}; }
  std::vector<std::pair<size_t, Shape>> slot_layout(const Tensor& param) const override;
  float beta2_, eps1_, clip_;
};

// LAMB: Adam's bias-corrected direction u = m^ / (sqrt(v^) + eps) + wd p, scaled by the trust
// ratio ||p|| / ||u|| (1 when either norm is 0): p -= lr ratio u.
class LAMB : public Adam {
 public:
  LAMB(NamedVars params, float lr, float beta1 = 0.9f, float beta2 = 0.999f, float eps = 1e-6f,
       float weight_decay = 0.0f)
      : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay, false) {}
  const char* name() const override { return "lamb"; }

 protected:
  void update(size_t i, const Tensor& g) override;
};

// Scales every gradient by min(1, max_norm / (norm + 1e-6)) where norm is the global L2 norm of
// all gradients (per-parameter l2_norm, then the l2_norm of those, in parameter order). Returns
// the norm before clipping as a 0-d tensor on the parameters' device.
Tensor clip_grad_norm(const NamedVars& params, float max_norm);
// The global L2 norm of the gradients as clip_grad_norm computes it (undefined when none has one).
Tensor grad_norm(const NamedVars& params);

}  // namespace bl::nn
