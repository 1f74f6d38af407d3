// optim.cpp: the optimizers of bitlearn/nn/optim.h as Tensor ops.
#include "bitlearn/nn/optim.h"

#include "bitlearn/ops_optim.h"
#include "contract/arith.h"
#include "core/error.h"

namespace bl::nn {

// ---- Optimizer ----

Optimizer::Optimizer(NamedVars params, float lr) : params_(std::move(params)), lr_(lr) {
  for (auto& [name, v] : params_)
    BL_CHECK(v.requires_grad(), "optimizer: parameter '", name, "' does not require a gradient");
  slots_.resize(params_.size());
}

Tensor Optimizer::scalar(const Tensor& like, float v) const {
  return Tensor::scalar(v, DType::f32, like.device());
}

Tensor& Optimizer::slot(size_t i, size_t k) {
  std::vector<Tensor>& s = slots_[i];
  if (s.empty()) {
    std::vector<std::string> names = slot_names();
    s.resize(names.size());
  }
  BL_CHECK(k < s.size(), "optimizer: slot ", k, " out of range");
  if (!s[k].defined()) {
    const Tensor& p = params_[i].second.value();
    s[k] = Tensor::zeros(p.shape(), DType::f32, p.device());
  }
  return s[k];
}

void Optimizer::step() {
  ag::NoGradGuard no_grad;
  begin_step();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& g = params_[i].second.grad();
    if (!g.defined()) continue;
    update(i, g);
  }
  ++steps_;
}

void Optimizer::zero_grad() {
  for (auto& [name, v] : params_) v.zero_grad();
}

std::map<std::string, Tensor> Optimizer::state() const {
  std::map<std::string, Tensor> out;
  std::vector<std::string> names = slot_names();
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t k = 0; k < slots_[i].size(); ++k)
      if (slots_[i][k].defined()) out[names[k] + "." + params_[i].first] = slots_[i][k];
  for (const auto& [name, value] : scalars_) out[name] = Tensor::scalar(value);
  return out;
}

std::vector<std::pair<size_t, Shape>> Optimizer::slot_layout(const Tensor& param) const {
  std::vector<std::pair<size_t, Shape>> out;
  const size_t n = slot_names().size();
  for (size_t k = 0; k < n; ++k) out.emplace_back(k, param.shape());
  return out;
}

std::map<std::string, float> Optimizer::scalars_after(int64_t) const { return {}; }

void Optimizer::load_state(const std::map<std::string, Tensor>& state, int64_t steps) {
  BL_CHECK(steps >= 0, "optimizer state: optimizer.steps ", steps, " is negative");
  const std::vector<std::string> names = slot_names();
  // Everything is checked into these first, so a refused state leaves the optimizer untouched.
  std::vector<std::vector<Tensor>> slots(params_.size());
  std::map<std::string, float> scalars = scalars_;
  size_t used = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    slots[i].assign(names.size(), Tensor());
    const Tensor& p = params_[i].second.value();
    for (const auto& [k, shape] : slot_layout(p)) {
      const std::string key = names[k] + "." + params_[i].first;
      auto it = state.find(key);
      // Every parameter receives a gradient each step, so after one step each has its slots.
      if (it == state.end()) {
        BL_CHECK(steps == 0, "optimizer state: entry '", key, "' is missing, but optimizer.steps is ", steps,
                 " (every parameter has it after the first step)");
        continue;
      }
      BL_CHECK(steps > 0, "optimizer state: entry '", key,
               "' is present, but optimizer.steps is 0 (no step has made it)");
      BL_CHECK(it->second.dtype() == DType::f32, "optimizer state: entry '", key, "' must be f32, got ",
               it->second.str());
      BL_CHECK(it->second.shape() == shape, "optimizer state: entry '", key, "' has shape ",
               shape_str(it->second.shape()), " but parameter '", params_[i].first, "' needs ", shape_str(shape));
      slots[i][k] = it->second.to(p.device()).clone();
      ++used;
    }
  }
  const std::map<std::string, float> expected = scalars_after(steps);
  for (auto& [name, value] : scalars) {
    auto it = state.find(name);
    BL_CHECK(it != state.end(), "optimizer state: missing scalar '", name, "'");
    BL_CHECK(it->second.dtype() == DType::f32 && it->second.numel() == 1, "optimizer state: entry '", name,
             "' must be one f32 value, got ", it->second.str());
    value = static_cast<float>(it->second.item());
    auto e = expected.find(name);
    if (e != expected.end()) {
      BL_CHECK(value >= 0.0f && value <= 1.0f, "optimizer state: entry '", name, "' = ", value,
               " is not a power of a beta in [0, 1)");
      BL_CHECK(steps == 0 || value < 1.0f, "optimizer state: entry '", name, "' = ", value,
               " must lie in [0, 1) after optimizer.steps ", steps);
      BL_CHECK(bits_of(value) == bits_of(e->second), "optimizer state: entry '", name,
               "' = ", value, " disagrees with optimizer.steps ", steps, ", which gives ", e->second,
               " (a checkpoint of another run or optimizer setting?)");
    }
    ++used;
  }
  BL_CHECK(used == state.size(), "optimizer state: ", state.size() - used,
           " entries do not belong to this optimizer and its parameters");
  slots_ = std::move(slots);
  scalars_ = std::move(scalars);
  steps_ = steps;
}

// ---- SGD ----

SGD::SGD(NamedVars params, float lr, float momentum, bool nesterov, float weight_decay)
    : Optimizer(std::move(params), lr), momentum_(momentum), weight_decay_(weight_decay), nesterov_(nesterov) {
  BL_CHECK(lr >= 0.0f && momentum >= 0.0f && weight_decay >= 0.0f,
           "SGD: lr, momentum and weight_decay must be >= 0");
  BL_CHECK(!nesterov || momentum > 0.0f, "SGD: Nesterov needs momentum > 0");
}

std::vector<std::string> SGD::slot_names() const {
  if (momentum_ > 0.0f) return {"momentum"};
  return {};
}

void SGD::update(size_t i, const Tensor& grad) {
  ag::Var& p = params_[i].second;
  Tensor g = grad;
  if (weight_decay_ > 0.0f) g = bl::add(g, bl::mul(p.value(), scalar(g, weight_decay_)));
  if (momentum_ > 0.0f) {
    Tensor& buf = slot(i, 0);
    // The first step starts the buffer at g (PyTorch); later: buf = momentum buf + g.
    buf = steps_ == 0 ? g.contiguous() : bl::add(bl::mul(buf, scalar(g, momentum_)), g);
    g = nesterov_ ? bl::add(g, bl::mul(buf, scalar(g, momentum_))) : buf;
  }
  p.set_value(bl::sub(p.value(), bl::mul(g, scalar(g, lr_))));
}

// ---- Adam / AdamW ----

Adam::Adam(NamedVars params, float lr, float beta1, float beta2, float eps, float weight_decay, bool decoupled)
    : Optimizer(std::move(params), lr), beta1_(beta1), beta2_(beta2), eps_(eps),
      weight_decay_(weight_decay), decoupled_(decoupled) {
  BL_CHECK(lr >= 0.0f && eps >= 0.0f && weight_decay >= 0.0f, "Adam: lr, eps, weight_decay must be >= 0");
  BL_CHECK(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
           "Adam: betas must lie in [0, 1), got ", beta1, ", ", beta2);
  scalars_["beta1_power"] = 1.0f;
  scalars_["beta2_power"] = 1.0f;
}

namespace {

// beta^steps as begin_step multiplies it: repeated binary32 products. A product that no longer
// changes the power (0, or a subnormal that beta rounds back to itself) ends the loop early.
float power_after(float beta, int64_t steps) {
  float p = 1.0f;
  for (int64_t s = 0; s < steps; ++s) {
    const float next = bl::mul(p, beta);
    if (bits_of(next) == bits_of(p)) break;
    p = next;
  }
  return p;
}

}  // namespace

std::map<std::string, float> Adam::scalars_after(int64_t steps) const {
  return {{"beta1_power", power_after(beta1_, steps)}, {"beta2_power", power_after(beta2_, steps)}};
}

void Adam::begin_step() {
  scalars_["beta1_power"] = bl::mul(scalars_["beta1_power"], beta1_);
  scalars_["beta2_power"] = bl::mul(scalars_["beta2_power"], beta2_);
}

void Adam::update(size_t i, const Tensor& grad) {
  ag::Var& p = params_[i].second;
  // One fused pass (bitlearn/ops_optim.h) with the bits of the separate steps:
  //   decay, m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
  //   p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps).
  AdamStepScalars s;
  s.beta1 = beta1_;
  s.beta2 = beta2_;
  s.eps = eps_;
  s.step_size = bl::div(lr_, bl::sub(1.0f, scalars_["beta1_power"]));
  s.bc2_sqrt = bl::sqrt(bl::sub(1.0f, scalars_["beta2_power"]));
  if (weight_decay_ > 0.0f && (no_decay_.empty() || !no_decay_[i])) {
    s.decay_kind = decoupled_ ? AdamDecayKind::decoupled : AdamDecayKind::l2;
    s.decay = decoupled_ ? bl::sub(1.0f, bl::mul(lr_, weight_decay_)) : weight_decay_;
  }
  Tensor& m = slot(i, 0);
  Tensor& v = slot(i, 1);
  std::array<Tensor, 3> next = adam_update(p.value(), m, v, grad, s);
  m = next[1];
  v = next[2];
  p.set_value(next[0]);
}

// ---- LAMB ----

void LAMB::update(size_t i, const Tensor& grad) {
  ag::Var& p = params_[i].second;
  const Tensor& g = grad;
  Tensor pv = p.value();
  Tensor& m = slot(i, 0);
  Tensor& v = slot(i, 1);
  m = bl::add(bl::mul(m, scalar(g, beta1_)), bl::mul(g, scalar(g, bl::sub(1.0f, beta1_))));
  v = bl::add(bl::mul(v, scalar(g, beta2_)), bl::mul(bl::square(g), scalar(g, bl::sub(1.0f, beta2_))));
  Tensor mhat = bl::div(m, scalar(g, bl::sub(1.0f, scalars_["beta1_power"])));
  Tensor vhat = bl::div(v, scalar(g, bl::sub(1.0f, scalars_["beta2_power"])));
  Tensor u = bl::div(mhat, bl::add(bl::sqrt(vhat), scalar(g, eps_)));
  if (weight_decay_ > 0.0f) u = bl::add(u, bl::mul(pv, scalar(g, weight_decay_)));
  Tensor pn = bl::l2_norm(pv);
  Tensor un = bl::l2_norm(u);
  Tensor zero = scalar(g, 0.0f), one = scalar(g, 1.0f);
  Tensor un_positive = bl::gt(un, zero);
  Tensor safe_un = bl::where(un_positive, un, one);
  Tensor ratio = bl::where(bl::gt(pn, zero), bl::where(un_positive, bl::div(pn, safe_un), one), one);
  p.set_value(bl::sub(pv, bl::mul(u, bl::mul(ratio, scalar(g, lr_)))));
}

// ---- RMSprop / Adagrad ----

RMSprop::RMSprop(NamedVars params, float lr, float alpha, float eps)
    : Optimizer(std::move(params), lr), alpha_(alpha), eps_(eps) {
  BL_CHECK(alpha >= 0.0f && alpha < 1.0f, "RMSprop: alpha must lie in [0, 1), got ", alpha);
}

void RMSprop::update(size_t i, const Tensor& g) {
  ag::Var& p = params_[i].second;
  Tensor& v = slot(i, 0);
  v = bl::add(bl::mul(v, scalar(g, alpha_)), bl::mul(bl::square(g), scalar(g, bl::sub(1.0f, alpha_))));
  Tensor denom = bl::add(bl::sqrt(v), scalar(g, eps_));
  p.set_value(bl::sub(p.value(), bl::mul(bl::div(g, denom), scalar(g, lr_))));
}

Adagrad::Adagrad(NamedVars params, float lr, float eps) : Optimizer(std::move(params), lr), eps_(eps) {}

void Adagrad::update(size_t i, const Tensor& g) {
  ag::Var& p = params_[i].second;
  Tensor& s = slot(i, 0);
  s = bl::add(s, bl::square(g));
  Tensor denom = bl::add(bl::sqrt(s), scalar(g, eps_));
  p.set_value(bl::sub(p.value(), bl::mul(bl::div(g, denom), scalar(g, lr_))));
}

// ---- Lion ----

Lion::Lion(NamedVars params, float lr, float beta1, float beta2, float weight_decay)
    : Optimizer(std::move(params), lr), beta1_(beta1), beta2_(beta2), weight_decay_(weight_decay) {}

void Lion::update(size_t i, const Tensor& g) {
  ag::Var& p = params_[i].second;
  Tensor& m = slot(i, 0);
  Tensor c = bl::add(bl::mul(m, scalar(g, beta1_)), bl::mul(g, scalar(g, bl::sub(1.0f, beta1_))));
  Tensor u = bl::sign(c);
  Tensor pv = p.value();
  if (weight_decay_ > 0.0f) u = bl::add(u, bl::mul(pv, scalar(g, weight_decay_)));
  p.set_value(bl::sub(pv, bl::mul(u, scalar(g, lr_))));
  m = bl::add(bl::mul(m, scalar(g, beta2_)), bl::mul(g, scalar(g, bl::sub(1.0f, beta2_))));
}

// ---- Adafactor ----

Adafactor::Adafactor(NamedVars params, float lr, float beta2, float eps1, float clip)
    : Optimizer(std::move(params), lr), beta2_(beta2), eps1_(eps1), clip_(clip) {}

std::vector<std::pair<size_t, Shape>> Adafactor::slot_layout(const Tensor& param) const {
  if (param.ndim() == 2) return {{0, {param.dim(0)}}, {1, {param.dim(1)}}};
  return {{2, param.shape()}};
}

void Adafactor::update(size_t i, const Tensor& g) {
  ag::Var& p = params_[i].second;
  Tensor g2 = bl::add(bl::square(g), scalar(g, eps1_));
  Tensor keep = scalar(g, beta2_), take = scalar(g, bl::sub(1.0f, beta2_));
  Tensor v;
  if (g.ndim() == 2) {
    Tensor& row = slot(i, 0);
    Tensor& col = slot(i, 1);
    if (row.ndim() != 1) {  // first use: the factored slots have their own shapes
      row = Tensor::zeros({g.dim(0)}, DType::f32, g.device());
      col = Tensor::zeros({g.dim(1)}, DType::f32, g.device());
    }
    row = bl::add(bl::mul(row, keep), bl::mul(bl::mean(g2, {1}), take));
    col = bl::add(bl::mul(col, keep), bl::mul(bl::mean(g2, {0}), take));
    Tensor outer = bl::mul(row.reshape({g.dim(0), 1}), col.reshape({1, g.dim(1)}));
    v = bl::div(outer, bl::mean(row));
  } else {
    Tensor& full = slot(i, 2);
    full = bl::add(bl::mul(full, keep), bl::mul(g2, take));
    v = full;
  }
  Tensor u = bl::mul(g, bl::rsqrt(v));
  Tensor rms = bl::sqrt(bl::mean(bl::square(u)));
  Tensor scale = bl::maximum(scalar(g, 1.0f), bl::div(rms, scalar(g, clip_)));
  p.set_value(bl::sub(p.value(), bl::mul(bl::div(u, scale), scalar(g, lr_))));
}

// ---- clipping ----

void Adam::exclude_from_weight_decay(const std::function<bool(const std::string&, const Tensor&)>& excluded) {
  no_decay_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i) no_decay_[i] = excluded(params_[i].first, params_[i].second.value());
}

Tensor grad_norm(const NamedVars& params) {
  ag::NoGradGuard no_grad;
  std::vector<Tensor> norms;
  for (const auto& [name, v] : params)
    if (v.grad().defined()) norms.push_back(bl::l2_norm(v.grad()).reshape({1}));
  if (norms.empty()) return Tensor();
  return bl::l2_norm(bl::concat(norms, 0));
}

Tensor clip_grad_norm(const NamedVars& params, float max_norm) {
  BL_CHECK(max_norm > 0.0f, "clip_grad_norm: max_norm must be > 0, got ", max_norm);
  ag::NoGradGuard no_grad;
  Tensor total = grad_norm(params);
  if (!total.defined()) return Tensor::scalar(0.0);
  Device dev = total.device();
  Tensor one = Tensor::scalar(1.0, DType::f32, dev);
  Tensor scale = bl::minimum(one, bl::div(Tensor::scalar(max_norm, DType::f32, dev),
                                          bl::add(total, Tensor::scalar(1e-6, DType::f32, dev))));
  for (const auto& [name, v] : params) {
    if (!v.grad().defined()) continue;
    ag::Var handle = v;
    handle.set_grad(bl::mul(v.grad(), scale));
  }
  return total;
}

}  // namespace bl::nn
