// test_bayesian_gaussian_mixture.cpp: bayesian_gaussian_mixture against a float64 evaluation of its
// formulas: one variational step from a fitted model's stored parameters (E-step with the expected
// log weights and Wishart terms, the statistics of the responsibilities, the prior-weighted update)
// gives the next model's parameters and lower bound, for each covariance type and both weight
// priors; score is the mean log-likelihood of the stored model; identical model file and output bytes
// at thread counts 1, 2 and 3 (with the sabotage arm of family_checks.h); a stick-breaking prior
// with a small concentration leaves surplus components with almost no weight; each refusal named.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "core/error.h"
#include "ml_common/estimator_checks.h"
#include "ml_common/family_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// digamma as the central difference of the C library's lgamma (about 1e-9 accurate: enough here).
double psi_ref(double x) { return (std::lgamma(x + 1e-5) - std::lgamma(x - 1e-5)) / 2e-5; }

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }
std::vector<double> hex64(const nlohmann::json& s, const char* key) {
  return widen(ml::f32_from_hex(s[key].get<std::string>(), key));
}

// A fitted model's stored variational parameters in float64, covariances expanded to [k, d, d].
struct Post {
  int64_t k = 0, d = 0;
  bool process = true, tied = false;
  std::vector<double> w, mu, cov, a, b, mp, v;
  double lower_bound = 0;
  double dof(int64_t j) const { return tied ? v[0] : v[j]; }
};

Post post_of(const ml::Estimator& est, const std::string& type) {
  nlohmann::json s = nlohmann::json::parse(est.to_json_text())["state"];
  Post p;
  p.k = s["n_components"].get<int64_t>();
  p.d = s["n_features"].get<int64_t>();
  p.process = s["weight_concentration_prior_type"].get<std::string>() == "dirichlet_process";
  p.tied = type == "tied";
  const int64_t k = p.k, d = p.d;
  p.w = hex64(s, "weights");
  p.mu = hex64(s, "means");
  p.lower_bound = hex64(s, "lower_bound")[0];
  std::vector<double> wc = hex64(s, "weight_concentration");
  p.a.assign(wc.begin(), wc.begin() + k);
  p.b.assign(wc.begin() + k, wc.end());
  p.mp = hex64(s, "mean_precision");
  p.v = hex64(s, "degrees_of_freedom");
  std::vector<double> c = hex64(s, "covariances");
  p.cov.assign(k * d * d, 0.0);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t x = 0; x < d; ++x)
      for (int64_t y = 0; y < d; ++y) {
        double val = 0;
        if (type == "full") val = c[j * d * d + x * d + y];
        if (type == "tied") val = c[x * d + y];
        if (type == "diag" && x == y) val = c[j * d + x];
        if (type == "spherical" && x == y) val = c[j];
        p.cov[j * d * d + x * d + y] = val;
      }
  return p;
}

// Inverse and log determinant of a symmetric positive definite d x d block (Gauss-Jordan).
double invert(std::vector<double> A, int64_t d, std::vector<double>& inv) {
  inv.assign(d * d, 0.0);
  for (int64_t a = 0; a < d; ++a) inv[a * d + a] = 1;
  double logdet = 0;
  for (int64_t c = 0; c < d; ++c) {
    const double piv = A[c * d + c];
    logdet += std::log(piv);
    for (int64_t b = 0; b < d; ++b) A[c * d + b] /= piv, inv[c * d + b] /= piv;
    for (int64_t r = 0; r < d; ++r) {
      if (r == c) continue;
      const double f = A[r * d + c];
      for (int64_t b = 0; b < d; ++b) A[r * d + b] -= f * A[c * d + b], inv[r * d + b] -= f * inv[c * d + b];
    }
  }
  return logdet;
}

// The weighted log probability [n, k] of the stored posterior (the header of the estimator's file).
std::vector<double> reference_wlp(const Post& p, const ml_common::HostData& X) {
  const int64_t k = p.k, d = p.d;
  std::vector<double> out(X.n * k), elog(k);
  double stick = 0, sum_a = 0;
  for (double v : p.a) sum_a += v;
  for (int64_t j = 0; j < k; ++j) {
    if (p.process) {
      elog[j] = psi_ref(p.a[j]) - psi_ref(p.a[j] + p.b[j]) + stick;
      stick += psi_ref(p.b[j]) - psi_ref(p.a[j] + p.b[j]);
    } else {
      elog[j] = psi_ref(p.a[j]) - psi_ref(sum_a);
    }
  }
  for (int64_t j = 0; j < k; ++j) {
    std::vector<double> inv, blk(p.cov.begin() + j * d * d, p.cov.begin() + (j + 1) * d * d);
    const double logdet = invert(blk, d, inv), v = p.dof(j);
    double ps = 0;
    for (int64_t i = 0; i < d; ++i) ps += psi_ref(0.5 * (v - i));
    const double extra = -0.5 * d * std::log(v) + 0.5 * (d * std::log(2.0) + ps - d / p.mp[j]) + elog[j];
    for (int64_t i = 0; i < X.n; ++i) {
      double q = 0;
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = 0; b < d; ++b)
          q += (X.x[i * d + a] - p.mu[j * d + a]) * inv[a * d + b] * (X.x[i * d + b] - p.mu[j * d + b]);
      out[i * k + j] = -0.5 * (d * std::log(2 * M_PI) + logdet + q) + extra;
    }
  }
  return out;
}

void reference_e_step(const Post& p, const ml_common::HostData& X, std::vector<double>& w, std::vector<double>& l,
                      std::vector<double>& resp) {
  w = reference_wlp(p, X);
  const int64_t k = p.k;
  l.assign(X.n, 0);
  resp.assign(X.n * k, 0);
  for (int64_t i = 0; i < X.n; ++i) {
    double mx = w[i * k];
    for (int64_t j = 1; j < k; ++j) mx = std::max(mx, w[i * k + j]);
    double s = 0;
    for (int64_t j = 0; j < k; ++j) s += std::exp(w[i * k + j] - mx);
    l[i] = mx + std::log(s);
    for (int64_t j = 0; j < k; ++j) resp[i * k + j] = std::exp(w[i * k + j] - l[i]);
  }
}

// One variational update from resp with the default priors, and its lower bound.
Post reference_update(const Post& prev, const std::vector<double>& w, const std::vector<double>& l,
                      const std::vector<double>& resp, const ml_common::HostData& X, const std::string& type) {
  const int64_t k = prev.k, d = prev.d, n = X.n;
  const double reg = 1e-6, wcp = 1.0 / k, b0 = 1.0, v0 = d;
  std::vector<double> m0(d, 0), C(d * d, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < d; ++a) m0[a] += X.x[i * d + a] / n;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) C[a * d + b] += (X.x[i * d + a] - m0[a]) * (X.x[i * d + b] - m0[b]) / (n - 1);
  double csph = 0;
  for (int64_t a = 0; a < d; ++a) csph += C[a * d + a] / d;
  std::vector<double> nk(k, 0), xk(k * d, 0), S(k * d * d, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      nk[j] += resp[i * k + j];
      for (int64_t a = 0; a < d; ++a) xk[j * d + a] += resp[i * k + j] * X.x[i * d + a];
    }
  for (int64_t j = 0; j < k; ++j) {
    nk[j] += 10 * 2.220446049250313e-16;
    for (int64_t a = 0; a < d; ++a) xk[j * d + a] /= nk[j];
  }
  for (int64_t j = 0; j < k; ++j)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = 0; b < d; ++b)
          S[j * d * d + a * d + b] += resp[i * k + j] * (X.x[i * d + a] - xk[j * d + a]) * (X.x[i * d + b] - xk[j * d + b]);
  Post p = prev;
  double total = 0, tail = 0;
  for (double v : nk) total += v;
  for (int64_t j = k - 1; j >= 0; --j) {
    p.a[j] = prev.process ? 1 + nk[j] : wcp + nk[j];
    if (prev.process) p.b[j] = wcp + tail;
    tail += nk[j];
  }
  p.v.assign(type == "tied" ? 1 : k, 0);
  if (type == "tied") p.v[0] = v0 + total / k;
  std::vector<double> tied_scatter(d * d, 0);
  for (int64_t j = 0; j < k; ++j) {
    p.mp[j] = b0 + nk[j];
    if (type != "tied") p.v[j] = v0 + nk[j];
    for (int64_t a = 0; a < d; ++a) p.mu[j * d + a] = (b0 * m0[a] + nk[j] * xk[j * d + a]) / p.mp[j];
  }
  for (int64_t j = 0; j < k; ++j) {
    double sph = 0, dsq = 0;
    for (int64_t a = 0; a < d; ++a) {
      sph += (S[j * d * d + a * d + a] / nk[j] + reg) / d;
      dsq += (xk[j * d + a] - m0[a]) * (xk[j * d + a] - m0[a]) / d;
    }
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) {
        const double da = xk[j * d + a] - m0[a], db = xk[j * d + b] - m0[b];
        const double sk = S[j * d * d + a * d + b] / nk[j] + (a == b ? reg : 0);
        double c = 0;
        if (type == "full") c = (C[a * d + b] + nk[j] * sk + nk[j] * b0 / p.mp[j] * da * db) / p.v[j];
        if (type == "diag" && a == b) c = (C[a * d + a] + nk[j] * (sk + b0 / p.mp[j] * da * da)) / p.v[j];
        if (type == "spherical" && a == b) c = (csph + nk[j] * (sph + b0 / p.mp[j] * dsq)) / p.v[j];
        if (type == "tied") {
          double s = 0, scat = 0;
          for (int64_t t = 0; t < k; ++t) {
            s += nk[t] / (b0 + nk[t]) * (xk[t * d + a] - m0[a]) * (xk[t * d + b] - m0[b]);
            scat += S[t * d * d + a * d + b];
          }
          c = (C[a * d + b] + (scat / total + (a == b ? reg : 0)) * total / k + b0 / k * s) / p.v[0];
        }
        p.cov[j * d * d + a * d + b] = c;
      }
  }
  // The lower bound.
  double ent = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) ent += resp[i * k + j] * (w[i * k + j] - l[i]);
  double wish = 0, lmp = 0;
  for (int64_t j = 0; j < k; ++j) {
    std::vector<double> inv, blk(p.cov.begin() + j * d * d, p.cov.begin() + (j + 1) * d * d);
    const double v = p.dof(j), ldc = -0.5 * invert(blk, d, inv) - 0.5 * d * std::log(v);
    double lg = 0;
    for (int64_t i = 0; i < d; ++i) lg += std::lgamma(0.5 * (v - i));
    wish += -(v * ldc + v * d * 0.5 * std::log(2.0) + lg);
    lmp += std::log(p.mp[j]);
  }
  double norm = 0, sa = 0;
  for (int64_t j = 0; j < k; ++j) {
    if (p.process) {
      norm -= std::lgamma(p.a[j]) + std::lgamma(p.b[j]) - std::lgamma(p.a[j] + p.b[j]);
    } else {
      norm -= std::lgamma(p.a[j]);
      sa += p.a[j];
    }
  }
  if (!p.process) norm += std::lgamma(sa);
  p.lower_bound = -ent - wish - norm - 0.5 * d * lmp;
  return p;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

const char* kTypes[] = {"full", "tied", "diag", "spherical"};

TEST(BayesianGaussianMixture, OneVariationalStepMatchesAFloat64Evaluation) {
  ml_common::HostData X = ml_common::uniform_blobs(240, 3, 3, 4.0f, 7);
  ml::WarningCollector quiet;  // max_iter stops these fits on purpose
  for (const char* prior : {"dirichlet_process", "dirichlet_distribution"})
    for (const char* type : kTypes)
      for (int64_t it : {1, 3}) {
        ml::Params base = {{"n_components", "4"},
                           {"covariance_type", type},
                           {"tol", "0"},
                           {"weight_concentration_prior_type", prior}};
        base["max_iter"] = std::to_string(it);
        auto a = ml::make_estimator("bayesian_gaussian_mixture", base);
        a->fit(X.X());
        base["max_iter"] = std::to_string(it + 1);
        auto b = ml::make_estimator("bayesian_gaussian_mixture", base);
        b->fit(X.X());
        Post pa = post_of(*a, type), pb = post_of(*b, type);
        std::vector<double> w, l, resp;
        reference_e_step(pa, X, w, l, resp);
        Post want = reference_update(pa, w, l, resp, X, type);
        const std::string at = std::string(prior) + " " + type + " it=" + std::to_string(it);
        EXPECT_LT(rel(pb.lower_bound, want.lower_bound), 1e-5) << at << ": " << pb.lower_bound << " vs "
                                                                << want.lower_bound;
        for (int64_t j = 0; j < 4; ++j) {
          EXPECT_LT(rel(pb.a[j], want.a[j]), 1e-4) << at;
          EXPECT_LT(rel(pb.mp[j], want.mp[j]), 1e-4) << at;
          if (pb.process) EXPECT_LT(rel(pb.b[j], want.b[j]), 1e-4) << at;
        }
        for (size_t j = 0; j < want.v.size(); ++j) EXPECT_LT(rel(pb.v[j], want.v[j]), 1e-4) << at;
        for (size_t i = 0; i < want.mu.size(); ++i) EXPECT_NEAR(pb.mu[i], want.mu[i], 1e-4) << at << " mean " << i;
        for (size_t i = 0; i < want.cov.size(); ++i) EXPECT_LT(rel(pb.cov[i], want.cov[i]), 1e-4) << at << " cov " << i;
        // weights_: the expected weights of the stored concentrations.
        std::vector<double> ew(4);
        double stick = 1, tot = 0;
        for (int64_t j = 0; j < 4; ++j) {
          ew[j] = pb.process ? pb.a[j] / (pb.a[j] + pb.b[j]) * stick : pb.a[j];
          if (pb.process) stick *= pb.b[j] / (pb.a[j] + pb.b[j]);
          tot += ew[j];
        }
        for (int64_t j = 0; j < 4; ++j) EXPECT_NEAR(pb.w[j], ew[j] / tot, 1e-6) << at;
      }
  // Sabotage arm: another mean_precision_prior moves the model away from the default-prior reference.
  ml::Params other = {{"n_components", "4"}, {"tol", "0"}, {"max_iter", "1"}};
  auto a = ml::make_estimator("bayesian_gaussian_mixture", other);
  a->fit(X.X());
  other["max_iter"] = "2";
  other["mean_precision_prior"] = "50";
  auto b = ml::make_estimator("bayesian_gaussian_mixture", other);
  b->fit(X.X());
  Post pa = post_of(*a, "full"), pb = post_of(*b, "full");
  std::vector<double> w, l, resp;
  reference_e_step(pa, X, w, l, resp);
  Post want = reference_update(pa, w, l, resp, X, "full");
  double worst = 0;
  for (size_t i = 0; i < want.mu.size(); ++i) worst = std::max(worst, std::fabs(pb.mu[i] - want.mu[i]));
  EXPECT_GT(worst, 1e-2) << "the reference would have accepted another prior";
}

TEST(BayesianGaussianMixture, ScoreAndProbabilitiesMatchAFloat64Evaluation) {
  ml_common::HostData X = ml_common::uniform_blobs(300, 4, 3, 4.0f, 11), T = ml_common::uniform_blobs(91, 4, 3, 4.0f, 12);
  for (const char* type : kTypes) {
    auto est = ml::make_estimator("bayesian_gaussian_mixture", {{"n_components", "3"}, {"covariance_type", type}});
    est->fit(X.X());
    Post p = post_of(*est, type);
    std::vector<double> w, l, resp;
    reference_e_step(p, T, w, l, resp);
    double mean = 0;
    for (double v : l) mean += v / T.n;
    EXPECT_LT(rel(est->score(T.X(), Tensor()), mean), 1e-6) << type;
    std::vector<float> pr = est->predict_proba(T.X()).to_vector<float>();
    ASSERT_EQ(pr.size(), resp.size());
    for (size_t i = 0; i < pr.size(); ++i) EXPECT_NEAR(pr[i], resp[i], 1e-5) << type << " at " << i;
    std::vector<int64_t> lab = est->predict(T.X()).to_vector<int64_t>();
    for (int64_t i = 0; i < T.n; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < 3; ++j)
        if (resp[i * 3 + j] > resp[i * 3 + best]) best = j;
      EXPECT_EQ(lab[i], best) << type << " row " << i;
    }
  }
}

TEST(BayesianGaussianMixture, SurplusComponentsGetAlmostNoWeight) {
  ml_common::HostData X = ml_common::uniform_blobs(600, 3, 3, 6.0f, 5);
  auto est = ml::make_estimator("bayesian_gaussian_mixture", {{"n_components", "6"},
                                                              {"weight_concentration_prior", "0.001"},
                                                              {"max_iter", "500"},
                                                              {"init_params", "random_from_data"}});
  est->fit(X.X());
  std::vector<double> w = post_of(*est, "full").w;
  int big = 0;
  for (double v : w) big += v > 0.05;
  EXPECT_EQ(big, 3);
}

TEST(BayesianGaussianMixture, SameBytesAtThreads123) {
  ml_common::HostData X = ml_common::uniform_blobs(900, 5, 4, 3.0f, 3), T = ml_common::uniform_blobs(157, 5, 4, 3.0f, 4);
  for (const char* type : kTypes)
    for (const char* prior : {"dirichlet_process", "dirichlet_distribution"})
      ml_common::expect_same_bytes_at_threads_123(
          "bayesian_gaussian_mixture",
          {{"n_components", "4"}, {"covariance_type", type}, {"weight_concentration_prior_type", prior}, {"n_init", "2"},
           {"init_params", "random"}},
          X.X(), Tensor(), T.X());
  ml_common::expect_input_change_moves_the_model("bayesian_gaussian_mixture", {{"n_components", "4"}}, X, 9.0f);
}

TEST(BayesianGaussianMixture, BadInputsAreNamedErrors) {
  ml_common::HostData X = ml_common::uniform_blobs(10, 3, 2, 3.0f, 9);
  const char* est = "bayesian_gaussian_mixture";
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator(est, {{"n_components", "11"}})->fit(X.X()); }),
                  "n_components = 11, n_samples = 10"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator(est, {{"degrees_of_freedom_prior", "1.5"}})->fit(X.X()); }),
                  "degrees_of_freedom_prior=1.5"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator(est, {{"weight_concentration_prior", "0"}}); }),
                  "weight_concentration_prior"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator(est, {{"weight_concentration_prior_type", "beta"}}); }),
                  "weight_concentration_prior_type"));
  auto e = ml::make_estimator(est, {{"n_components", "2"}});
  e->fit(X.X());
  nlohmann::json j = nlohmann::json::parse(e->to_json_text());
  j["state"]["degrees_of_freedom"] = ml::f32_to_hex({1.0f, 5.0f});
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(j); }), "degrees_of_freedom must be"));
  j = nlohmann::json::parse(e->to_json_text());
  j["state"]["weight_concentration_prior_type"] = "beta";
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(j); }), "weight_concentration_prior_type"));
}

}  // namespace
}  // namespace bl
