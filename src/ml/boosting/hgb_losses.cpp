// hgb_losses.cpp: regression losses, early-stopping scores and the validation split of histogram
// boosting (see hgb_losses.h).
#include "ml/boosting/hgb_losses.h"

#include <algorithm>
#include <cmath>

#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "kernels/math_map.h"
#include "ml/boosting/boost_chunks.h"
#include "ml/host_math.h"
#include "ops/dispatch.h"

namespace bl::ml {

namespace {

constexpr uint64_t kValidationStreamTag = uint64_t{5} << 60;

// sum over rows of fn(i), per fixed chunk in row order, the chunks added in chunk order.
template <typename Fn>
double chunked_sum(int64_t n, Fn fn) {
  std::vector<double> part(static_cast<size_t>((n + kBoostRowChunk - 1) / kBoostRowChunk), 0.0);
  for_chunk_ranges(n, [&](int64_t c, int64_t begin, int64_t end) {
    double s = 0.0;
    for (int64_t i = begin; i < end; ++i) s += fn(i);
    part[c] = s;
  });
  double s = 0.0;
  for (double v : part) s += v;
  return s;
}

// log(1 + e^x) in binary64, without overflow.
double softplus64(double x) {
  const double a = x > 0.0 ? -x : x;
  return (x > 0.0 ? x : 0.0) + log64(1.0 + exp64(a));
}

// The half loss of one regression row at raw r.
double regression_loss(const BoostParams& p, double y, double r) {
  switch (p.loss) {
    case BoostLoss::squared_error: return 0.5 * (y - r) * (y - r);
    case BoostLoss::absolute_error: return y >= r ? y - r : r - y;
    case BoostLoss::quantile: return y >= r ? p.quantile * (y - r) : (1.0 - p.quantile) * (r - y);
    case BoostLoss::poisson: return exp64(r) - y * r;
    case BoostLoss::gamma: return r + y * exp64(-r);
    case BoostLoss::huber: {
      const double a = y >= r ? y - r : r - y;
      return a <= p.alpha ? 0.5 * a * a : p.alpha * (a - 0.5 * p.alpha);
    }
    case BoostLoss::tweedie: {
      if (p.power == 1.0) return exp64(r) - y * r;
      const double a = 1.0 - p.power, b = 2.0 - p.power;
      return exp64(b * r) / b - y * exp64(a * r) / a;
    }
    default: return 0.0;
  }
}

}  // namespace

bool boost_log_link(BoostLoss loss) {
  return loss == BoostLoss::poisson || loss == BoostLoss::gamma || loss == BoostLoss::tweedie;
}

bool boost_updates_leaves(BoostLoss loss) {
  return loss == BoostLoss::absolute_error || loss == BoostLoss::quantile;
}

void check_boost_targets(const BoostParams& p, const float* y, int64_t n, const std::string& est) {
  if (p.loss == BoostLoss::gamma) {
    for (int64_t i = 0; i < n; ++i) BL_CHECK(y[i] > 0.0f, est, ": loss=gamma needs y > 0 (y[", i, "] = ", y[i], ")");
  }
  if (p.loss == BoostLoss::poisson || p.loss == BoostLoss::tweedie) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      BL_CHECK(y[i] >= 0.0f, est, ": loss=", p.loss == BoostLoss::poisson ? "poisson" : "tweedie",
               " needs y >= 0 (y[", i, "] = ", y[i], ")");
      s += y[i];
    }
    BL_CHECK(s > 0.0, est, ": loss=", p.loss == BoostLoss::poisson ? "poisson" : "tweedie",
             " needs a positive sum of y");
  }
}

double residual_quantile(std::vector<std::pair<float, int32_t>>& values, const float* weight, double q) {
  std::sort(values.begin(), values.end());
  const size_t m = values.size();
  if (m == 0) return 0.0;
  if (!weight) {
    const double h = q * static_cast<double>(m - 1);
    const size_t lo = static_cast<size_t>(h);
    const double frac = h - static_cast<double>(lo);
    const double a = values[lo].first;
    if (lo + 1 >= m || frac == 0.0) return a;
    return a + (static_cast<double>(values[lo + 1].first) - a) * frac;
  }
  double total = 0.0;
  for (const auto& v : values) total += weight[v.second];
  const double target = q * total;
  double cum = 0.0;
  for (const auto& v : values) {
    cum += weight[v.second];
    if (cum >= target && weight[v.second] > 0.0f) return v.first;
  }
  return values.back().first;
}

float regression_initial_score(const BoostParams& p, const float* y, const float* weight, int64_t n) {
  if (boost_updates_leaves(p.loss)) {
    std::vector<std::pair<float, int32_t>> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = {y[i], static_cast<int32_t>(i)};
    return static_cast<float>(residual_quantile(v, weight, p.loss == BoostLoss::quantile ? p.quantile : 0.5));
  }
  double s = 0.0, w = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double wi = weight ? static_cast<double>(weight[i]) : 1.0;
    s += wi * y[i];
    w += wi;
  }
  return static_cast<float>(p.loss == BoostLoss::huber ? s / w : log64(s / w));
}

void regression_gradients(const BoostParams& p, const float* raw, const float* y, int64_t n, float* grad,
                          float* hess, std::vector<float>& scratch) {
  switch (p.loss) {
    case BoostLoss::absolute_error:
      for_row_chunks(n, [&](int64_t i) {
        const float d = bl::sub(raw[i], y[i]);
        grad[i] = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : 0.0f);
        hess[i] = 1.0f;
      });
      return;
    case BoostLoss::quantile: {
      const float q = static_cast<float>(p.quantile);
      const float q1 = bl::sub(1.0f, q);
      for_row_chunks(n, [&](int64_t i) {
        grad[i] = y[i] >= raw[i] ? -q : q1;
        hess[i] = 1.0f;
      });
      return;
    }
    case BoostLoss::huber: {
      const float a = static_cast<float>(p.alpha);
      for_row_chunks(n, [&](int64_t i) {
        const float d = bl::sub(raw[i], y[i]);
        grad[i] = d > a ? a : (d < bl::neg(a) ? bl::neg(a) : d);
        hess[i] = 1.0f;
      });
      return;
    }
    default: break;
  }
  scratch.resize(static_cast<size_t>(2 * n));
  float* e1 = scratch.data();
  float* e2 = scratch.data() + n;
  if (p.loss == BoostLoss::poisson) {
    dispatch::math_map(Device::cpu(), MathFn::exp, raw, e1, n);
    for_row_chunks(n, [&](int64_t i) {
      grad[i] = bl::sub(e1[i], y[i]);
      hess[i] = e1[i];
    });
  } else if (p.loss == BoostLoss::gamma) {
    for_row_chunks(n, [&](int64_t i) { e2[i] = bl::neg(raw[i]); });
    dispatch::math_map(Device::cpu(), MathFn::exp, e2, e1, n);
    for_row_chunks(n, [&](int64_t i) {
      const float t = bl::mul(y[i], e1[i]);
      grad[i] = bl::sub(1.0f, t);
      hess[i] = t;
    });
  } else {  // tweedie
    const float a = static_cast<float>(1.0 - p.power), b = static_cast<float>(2.0 - p.power);
    for_row_chunks(n, [&](int64_t i) {  // the exponents, held in grad / hess until the exps are taken
      grad[i] = bl::mul(a, raw[i]);
      hess[i] = bl::mul(b, raw[i]);
    });
    dispatch::math_map(Device::cpu(), MathFn::exp, grad, e1, n);
    dispatch::math_map(Device::cpu(), MathFn::exp, hess, e2, n);
    for_row_chunks(n, [&](int64_t i) {
      const float ya = bl::mul(y[i], e1[i]);
      grad[i] = bl::sub(e2[i], ya);
      hess[i] = bl::sub(bl::mul(b, e2[i]), bl::mul(a, ya));
    });
  }
}

double boost_score(const BoostParams& p, int64_t K, const float* raw, const float* y_value, const int32_t* y_class,
                   const float* weight, int64_t n) {
  auto w = [&](int64_t i) { return weight ? static_cast<double>(weight[i]) : 1.0; };
  const double total = weight ? chunked_sum(n, w) : static_cast<double>(n);
  double loss = 0.0;
  if (p.loss == BoostLoss::logistic) {
    loss = chunked_sum(n, [&](int64_t i) {
      const double r = raw[i];
      return w(i) * (softplus64(r) - (y_class[i] == 1 ? r : 0.0));
    });
  } else if (p.loss == BoostLoss::softmax) {
    loss = chunked_sum(n, [&](int64_t i) {
      const float* r = raw + i * K;
      double m = r[0];
      for (int64_t k = 1; k < K; ++k) m = std::max(m, static_cast<double>(r[k]));
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k) s += exp64(static_cast<double>(r[k]) - m);
      return w(i) * (m + log64(s) - static_cast<double>(r[y_class[i]]));
    });
  } else {
    loss = chunked_sum(n, [&](int64_t i) { return w(i) * regression_loss(p, y_value[i], raw[i]); });
  }
  return total > 0.0 ? -loss / total : 0.0;
}

bool boost_should_stop(const std::vector<double>& scores, int64_t n_iter_no_change, double tol) {
  const size_t ref = static_cast<size_t>(n_iter_no_change) + 1;
  if (scores.size() < ref) return false;
  const double reference = scores[scores.size() - ref] + tol;
  for (size_t i = scores.size() - static_cast<size_t>(n_iter_no_change); i < scores.size(); ++i) {
    if (scores[i] > reference) return false;
  }
  return true;
}

std::vector<char> validation_mask(int64_t n, const int32_t* y_class, int64_t n_classes, double fraction,
                                  uint64_t seed) {
  const int64_t C = y_class ? std::max<int64_t>(1, n_classes) : 1;
  const int64_t n_val = std::min<int64_t>(n - 1, static_cast<int64_t>(std::ceil(fraction * static_cast<double>(n))));
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(C));
  for (int64_t i = 0; i < n; ++i) members[y_class ? y_class[i] : 0].push_back(static_cast<int32_t>(i));
  // Per class floor(n_val * n_c / n), the rest one each to the largest remainders (integers: exact).
  std::vector<int64_t> take(static_cast<size_t>(C)), rem(static_cast<size_t>(C));
  int64_t given = 0;
  for (int64_t c = 0; c < C; ++c) {
    const int64_t num = n_val * static_cast<int64_t>(members[c].size());
    take[c] = num / n;
    rem[c] = num % n;
    given += take[c];
  }
  std::vector<int64_t> order(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return rem[a] > rem[b]; });
  for (int64_t j = 0; given < n_val && j < C; ++j) {
    if (take[order[j]] < static_cast<int64_t>(members[order[j]].size())) {
      ++take[order[j]];
      ++given;
    }
  }
  std::vector<char> mask(static_cast<size_t>(n), 0);
  for (int64_t c = 0; c < C; ++c) {
    std::vector<std::pair<uint32_t, int32_t>> keyed;
    keyed.reserve(members[c].size());
    for (int32_t r : members[c]) {
      keyed.push_back({random_u32_element(seed, kValidationStreamTag, static_cast<uint64_t>(r)), r});
    }
    std::sort(keyed.begin(), keyed.end());
    for (int64_t j = 0; j < take[c]; ++j) mask[keyed[j].second] = 1;
  }
  return mask;
}

}  // namespace bl::ml
