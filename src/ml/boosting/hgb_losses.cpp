// hgb_losses.cpp: regression losses, early-stopping scores and the validation split of histogram
// boosting (see hgb_losses.h).
#include "ml/boosting/hgb_losses.h"

#include <algorithm>
#include <cmath>

#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/math_map.h"
#include "ml/boosting/boost_chunks.h"
#include "ml/host_math.h"
#include "ops/dispatch.h"

namespace bl::ml {

namespace {

constexpr uint64_t kValidationStreamTag = uint64_t{5} << 60;
constexpr uint64_t kQueryValidationStreamTag = uint64_t{6} << 60;  // | nothing: keyed by query index

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

constexpr double kLn2 = 0.69314718055994530942;
constexpr int kMaxRelevance = 31;

// 1 / log2(2 + rank), the DCG discount of a 0-based rank.
double rank_discount(int64_t rank) { return kLn2 / log64(2.0 + static_cast<double>(rank)); }

// 2^rel - 1 for an integer relevance 0 .. 31 (exact in binary64).
double relevance_gain(float rel) { return static_cast<double>((uint64_t{1} << static_cast<int>(rel)) - 1); }

// The rows 0 .. m-1 ranked by score descending, ties to the lower row.
std::vector<int64_t> rank_order(const float* score, int64_t m) {
  std::vector<int64_t> order(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return score[a] > score[b]; });
  return order;
}

// The ideal DCG@k (k <= 0: all rows) of m relevance labels.
double ideal_dcg(const float* rel, int64_t m, int64_t k) {
  std::vector<float> sorted(rel, rel + m);
  std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return a > b; });
  const int64_t top = k <= 0 ? m : std::min(k, m);
  double s = 0.0;
  for (int64_t r = 0; r < top; ++r) s += relevance_gain(sorted[r]) * rank_discount(r);
  return s;
}

// One query's ranking gradients: m rows of raw r and labels y into g, h (binary64 sums, then float32).
void query_gradients(const BoostParams& p, const float* r, const float* y, int64_t m, float* g, float* h) {
  std::vector<double> G(static_cast<size_t>(m), 0.0), H(static_cast<size_t>(m), 0.0);
  const double sigma = p.sigmoid;
  // One pair: hi the more relevant row, weight its |delta NDCG| (1 for pairwise).
  auto pair = [&](int64_t hi, int64_t lo, double weight) {
    const double delta = static_cast<double>(r[hi]) - static_cast<double>(r[lo]);
    const double rho = 1.0 / (1.0 + exp64(sigma * delta));
    const double lambda = sigma * rho * weight;
    const double hess = sigma * sigma * rho * (1.0 - rho) * weight;
    G[hi] -= lambda;
    G[lo] += lambda;
    H[hi] += hess;
    H[lo] += hess;
    return 2.0 * lambda;
  };
  if (p.loss == BoostLoss::pairwise) {
    for (int64_t a = 0; a < m; ++a) {
      for (int64_t b = a + 1; b < m; ++b) {
        if (y[a] == y[b]) continue;
        if (y[a] > y[b]) pair(a, b, 1.0);
        else pair(b, a, 1.0);
      }
    }
  } else {
    const std::vector<int64_t> order = rank_order(r, m);
    const double max_dcg = ideal_dcg(y, m, p.truncation_level);
    const double inv_max = max_dcg > 0.0 ? 1.0 / max_dcg : 0.0;
    const bool spread = r[order[0]] != r[order[m - 1]];
    double sum_lambda = 0.0;
    for (int64_t i = 0; i < m - 1 && i < p.truncation_level; ++i) {
      for (int64_t j = i + 1; j < m; ++j) {
        const int64_t a = order[i], b = order[j];
        if (y[a] == y[b]) continue;
        const bool a_high = y[a] > y[b];
        const int64_t hi = a_high ? a : b, lo = a_high ? b : a;
        const double gap = relevance_gain(y[hi]) - relevance_gain(y[lo]);
        const double d_disc = std::fabs(rank_discount(i) - rank_discount(j));
        double weight = gap * d_disc * inv_max;
        if (p.lambdarank_norm && spread) {
          weight /= 0.01 + std::fabs(static_cast<double>(r[hi]) - static_cast<double>(r[lo]));
        }
        sum_lambda += pair(hi, lo, weight);
      }
    }
    if (p.lambdarank_norm && sum_lambda > 0.0) {
      const double f = log64(1.0 + sum_lambda) / kLn2 / sum_lambda;
      for (int64_t i = 0; i < m; ++i) {
        G[i] *= f;
        H[i] *= f;
      }
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    g[i] = static_cast<float>(G[i]);
    h[i] = static_cast<float>(H[i]);
  }
}

}  // namespace

bool boost_ranking(BoostLoss loss) { return loss == BoostLoss::lambdarank || loss == BoostLoss::pairwise; }

void ranking_gradients(const BoostParams& p, const float* raw, const float* y, float* grad, float* hess) {
  const auto& qs = p.query_start;
  BL_CHECK(qs.size() >= 2, "hist_gradient_boosting: a ranking loss needs query groups");
  default_pool().parallel_for(static_cast<int64_t>(qs.size()) - 1, [&](int64_t q) {
    const int64_t b = qs[q], m = qs[q + 1] - qs[q];
    query_gradients(p, raw + b, y + b, m, grad + b, hess + b);
  });
}

double query_ndcg(const float* score, const float* rel, int64_t m, int64_t k) {
  const double ideal = ideal_dcg(rel, m, k);
  if (!(ideal > 0.0)) return 1.0;
  const std::vector<int64_t> order = rank_order(score, m);
  const int64_t top = k <= 0 ? m : std::min(k, m);
  double dcg = 0.0;
  for (int64_t r = 0; r < top; ++r) dcg += relevance_gain(rel[order[r]]) * rank_discount(r);
  return dcg / ideal;
}

double mean_query_ndcg(const float* score, const float* rel, const std::vector<int64_t>& query_start, int64_t k,
                       const float* weight) {
  BL_CHECK(query_start.size() >= 2, "mean NDCG: needs at least one query");
  const int64_t nq = static_cast<int64_t>(query_start.size()) - 1;
  std::vector<double> per(static_cast<size_t>(nq));
  default_pool().parallel_for(nq, [&](int64_t q) {
    const int64_t b = query_start[q];
    per[q] = query_ndcg(score + b, rel + b, query_start[q + 1] - b, k);
  });
  if (!weight) {
    double s = 0.0;
    for (double v : per) s += v;  // query order: the same bits for every thread count
    return s / static_cast<double>(nq);
  }
  // Query weight: the mean of its rows' weights (LightGBM's query weights), all in binary64 in row
  // and query order. All-ones weights give the unweighted bits (x * 1 and sums of ones are exact).
  double s = 0.0, total = 0.0;
  for (int64_t q = 0; q < nq; ++q) {
    const int64_t b = query_start[q], e = query_start[q + 1];
    double wq = 0.0;
    for (int64_t i = b; i < e; ++i) wq += static_cast<double>(weight[i]);
    wq /= static_cast<double>(e - b);
    s += per[q] * wq;
    total += wq;
  }
  BL_CHECK(total > 0.0, "mean NDCG: the ", nq, " queries have sample weights summing to 0; the weighted mean "
           "over queries needs a query of positive weight");
  return s / total;
}

std::vector<char> query_validation_mask(const std::vector<int64_t>& query_start, double fraction, uint64_t seed,
                                        const std::string& est) {
  const int64_t nq = static_cast<int64_t>(query_start.size()) - 1;
  BL_CHECK(nq >= 2, est, ": early stopping with validation_fraction holds out whole queries and needs at least 2 "
           "queries (got ", nq, "); set validation_fraction=none to score the training queries");
  BL_CHECK(fraction > 0.0 && fraction < 1.0, est, ": validation_fraction=", fraction, ": expected a value in (0, 1)");
  const int64_t n_val =
      std::max<int64_t>(1, std::min<int64_t>(nq - 1, static_cast<int64_t>(std::ceil(fraction * static_cast<double>(nq)))));
  std::vector<std::pair<uint32_t, int64_t>> keyed(static_cast<size_t>(nq));
  for (int64_t q = 0; q < nq; ++q) {
    keyed[q] = {random_u32_element(seed, kQueryValidationStreamTag, static_cast<uint64_t>(q)), q};
  }
  std::sort(keyed.begin(), keyed.end());  // ties of keys: the lower query first
  std::vector<char> mask(static_cast<size_t>(query_start.back()), 0);
  for (int64_t j = 0; j < n_val; ++j) {
    const int64_t q = keyed[j].second;
    std::fill(mask.begin() + query_start[q], mask.begin() + query_start[q + 1], 1);
  }
  return mask;
}

std::vector<int64_t> query_starts(const float* ids, int64_t n, int64_t stride, int64_t min_rows,
                                  const std::string& est) {
  std::vector<int64_t> starts;
  std::vector<std::pair<float, int64_t>> seen;  // (id, its first row) per query
  for (int64_t i = 0; i < n; ++i) {
    const float id = ids[i * stride];
    BL_CHECK(!std::isnan(id), est, ": query id of row ", i, " is NaN");
    if (i == 0 || id != ids[(i - 1) * stride]) {
      starts.push_back(i);
      seen.push_back({id, i});
    }
  }
  starts.push_back(n);
  std::sort(seen.begin(), seen.end());
  for (size_t q = 1; q < seen.size(); ++q) {
    BL_CHECK(seen[q].first != seen[q - 1].first, est, ": query id ", seen[q].first, " reappears at row ",
             seen[q].second, " after other queries; the rows of a query must be contiguous");
  }
  for (size_t q = 0; q + 1 < starts.size(); ++q) {
    BL_CHECK(starts[q + 1] - starts[q] >= min_rows, est, ": query id ", ids[starts[q] * stride], " (row ", starts[q],
             ") has a single row; a query needs at least ", min_rows, " rows");
  }
  return starts;
}

void check_relevance(const float* y, int64_t n, const std::string& est) {
  for (int64_t i = 0; i < n; ++i) {
    BL_CHECK(y[i] >= 0.0f && y[i] <= static_cast<float>(kMaxRelevance) && y[i] == std::floor(y[i]), est,
             ": relevance labels must be integers in 0 .. ", kMaxRelevance, " (y[", i, "] = ", y[i], ")");
  }
}

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
