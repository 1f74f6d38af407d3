// loss.cpp: losses as single tape nodes (or compositions of differentiable ops).
#include "bitlearn/nn/loss.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace bl::nn {

namespace {

Tensor sc(const Tensor& like, double v) { return Tensor::scalar(v, DType::f32, like.device()); }

// Validates logits [N, C] and integer labels [N] with values in [0, C).
void check_class_inputs(const Tensor& scores, const Tensor& labels, const char* op) {
  BL_CHECK(scores.dtype() == DType::f32 && scores.ndim() == 2, op,
           ": input must be f32 [N, C], got ", scores.str());
  BL_CHECK((labels.dtype() == DType::i64 || labels.dtype() == DType::i32) && labels.ndim() == 1, op,
           ": labels must be i32/i64 [N], got ", labels.str());
  BL_CHECK(labels.dim(0) == scores.dim(0), op, ": labels ", labels.str(), " do not match input ",
           scores.str(), " (batch sizes differ)");
  BL_CHECK(labels.device() == scores.device(), op, ": labels on ", labels.device().str(),
           " but input on ", scores.device().str());
  int64_t classes = scores.dim(1);
  if (labels.numel() == 0) return;
  Tensor lf = bl::cast(labels, DType::f32);
  double lo = bl::amin(lf).item(), hi = bl::amax(lf).item();
  BL_CHECK(lo >= 0 && hi < static_cast<double>(classes), op, ": labels must lie in [0, ", classes,
           "), got values from ", lo, " to ", hi);
}

Tensor one_hot(const Tensor& labels, int64_t classes, Device device) {
  Tensor ar = Tensor::arange(classes, DType::i64, device).reshape({1, classes});
  Tensor lab = bl::cast(labels, DType::i64).reshape({labels.dim(0), 1});
  return bl::cast(bl::eq(ar, lab), DType::f32);
}

void check_same_shape(const ag::Var& a, const ag::Var& b, const char* op) {
  BL_CHECK(a.shape() == b.shape(), op, ": prediction ", a.value().str(), " and target ",
           b.value().str(), " must have the same shape");
}

}  // namespace

ag::Var cross_entropy(const ag::Var& logits, const Tensor& labels, float eps) {
  const Tensor& z = logits.value();
  check_class_inputs(z, labels, "cross_entropy");
  BL_CHECK(eps >= 0.0f && eps <= 1.0f, "cross_entropy: label_smoothing must be in [0, 1], got ", eps);
  int64_t n = z.dim(0), c = z.dim(1);
  BL_CHECK(n > 0, "cross_entropy: empty batch");
  Tensor ls = bl::log_softmax(z, 1);
  Tensor lab = bl::cast(labels, DType::i64).reshape({n, 1});
  Tensor nll = bl::neg(bl::gather(ls, 1, lab)).reshape({n});
  Tensor per_row = nll;
  if (eps > 0.0f) {
    Tensor smooth = bl::neg(bl::mean(ls, {1}));
    per_row = bl::add(bl::mul(nll, sc(z, 1.0 - static_cast<double>(eps))), bl::mul(smooth, sc(z, eps)));
  }
  Tensor loss = bl::mean(per_row);
  Device dev = z.device();
  return ag::record("cross_entropy", loss, {logits}, [z, labels, eps, n, c, dev](const Tensor& g) {
    Tensor p = bl::softmax(z, 1);
    Tensor target = one_hot(labels, c, dev);
    if (eps > 0.0f)
      target = bl::add(bl::mul(target, sc(z, 1.0 - static_cast<double>(eps))),
                       sc(z, static_cast<double>(eps) / static_cast<double>(c)));
    Tensor gn = bl::div(g, sc(z, static_cast<double>(n)));
    return std::vector<Tensor>{bl::mul(bl::sub(p, target), gn)};
  });
}

ag::Var nll_loss(const ag::Var& log_probs, const Tensor& labels) {
  const Tensor& lp = log_probs.value();
  check_class_inputs(lp, labels, "nll_loss");
  int64_t n = lp.dim(0), c = lp.dim(1);
  BL_CHECK(n > 0, "nll_loss: empty batch");
  Tensor lab = bl::cast(labels, DType::i64).reshape({n, 1});
  Tensor loss = bl::neg(bl::mean(bl::gather(lp, 1, lab)));
  Device dev = lp.device();
  return ag::record("nll_loss", loss, {log_probs}, [labels, n, c, dev, lp](const Tensor& g) {
    Tensor gn = bl::neg(bl::div(g, sc(lp, static_cast<double>(n))));
    return std::vector<Tensor>{bl::mul(one_hot(labels, c, dev), gn)};
  });
}

ag::Var mse_loss(const ag::Var& prediction, const ag::Var& target) {
  check_same_shape(prediction, target, "mse_loss");
  return ag::mean(ag::square(ag::sub(prediction, target)));
}

ag::Var l1_loss(const ag::Var& prediction, const ag::Var& target) {
  check_same_shape(prediction, target, "l1_loss");
  return ag::mean(ag::abs(ag::sub(prediction, target)));
}

ag::Var huber_loss(const ag::Var& prediction, const ag::Var& target, float delta) {
  check_same_shape(prediction, target, "huber_loss");
  BL_CHECK(delta > 0.0f, "huber_loss: delta must be > 0, got ", delta);
  ag::Var d = ag::sub(prediction, target);
  const Tensor& dv = d.value();
  Tensor a = bl::abs(dv);
  Tensor dl = sc(dv, delta);
  Tensor quad = bl::mul(bl::square(dv), sc(dv, 0.5));
  Tensor lin = bl::mul(dl, bl::sub(a, sc(dv, 0.5 * static_cast<double>(delta))));
  Tensor loss = bl::mean(bl::where(bl::le(a, dl), quad, lin));
  double n = static_cast<double>(dv.numel());
  ag::Var out = ag::record("huber_loss", loss, {d}, [dv, dl, n](const Tensor& g) {
    Tensor clipped = bl::minimum(bl::maximum(dv, bl::neg(dl)), dl);
    return std::vector<Tensor>{bl::mul(clipped, bl::div(g, sc(dv, n)))};
  });
  return out;
}

ag::Var bce_with_logits(const ag::Var& logits, const ag::Var& target) {
  check_same_shape(logits, target, "bce_with_logits");
  const Tensor& x = logits.value();
  const Tensor& y = target.value();
  BL_CHECK(x.numel() > 0, "bce_with_logits: empty input");
  Tensor per = bl::add(bl::sub(bl::relu(x), bl::mul(x, y)), bl::log1p(bl::exp(bl::neg(bl::abs(x)))));
  Tensor loss = bl::mean(per);
  double n = static_cast<double>(x.numel());
  return ag::record("bce_with_logits", loss, {logits, target}, [x, y, n](const Tensor& g) {
    Tensor gn = bl::div(g, sc(x, n));
    return std::vector<Tensor>{bl::mul(bl::sub(bl::sigmoid(x), y), gn),
                               bl::mul(bl::neg(x), gn)};
  });
}

void check_finite_loss(double loss, uint64_t step, const char* what) {
  if (std::isnan(loss)) throw Error(detail::concat(what, ": loss is NaN at step ", step, "; training stopped"));
  if (std::isinf(loss))
    throw Error(detail::concat(what, ": loss is infinite at step ", step, "; training stopped"));
}

}  // namespace bl::nn
