// test_gaussian_mixture.cpp: gaussian_mixture against a float64 evaluation of its formulas (one EM
// step from a fitted model's stored parameters gives the next model's parameters and lower bound;
// score is the mean log-likelihood of the stored mixture) for each covariance type, identical model
// file and output bytes at thread counts 1, 2 and 3 for every covariance type and init, the
// convergence warning at max_iter, and each refusal named: more components than rows, a collapsed
// covariance without reg_covar, NaN in X, a corrupt model state.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/ml/estimator.h"
#include "bitlearn/ml/progress.h"
#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml_common/estimator_checks.h"

namespace bl {
namespace {

using ml_common::error_of;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Data {
  std::vector<float> x;
  int64_t n = 0, d = 0;
  Tensor X() const { return Tensor::from_vector(x, {n, d}); }
};

// n rows in d dimensions from 3 correlated blobs (row i in blob i % 3).
Data make_blobs(int64_t n, int64_t d, uint64_t seed) {
  test_rng::SplitMix64 rng(seed);
  Data out;
  out.n = n;
  out.d = d;
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i % 3);
    float prev = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      const float u = rng.uniform_pm1();
      const float v = (1.0f + 0.5f * static_cast<float>(c)) * u + 0.6f * prev + 4.0f * static_cast<float>(c) *
                                                                                    static_cast<float>((j + c) % 2);
      prev = u;
      out.x.push_back(v);
    }
  }
  return out;
}

// The stored parameters of a fitted model, widened to float64, covariances expanded to [k, d, d].
struct Params64 {
  int64_t k = 0, d = 0;
  std::vector<double> w, mu, cov;
  double lower_bound = 0;
};

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

Params64 params_of(const ml::Estimator& est, const std::string& type) {
  nlohmann::json s = nlohmann::json::parse(est.to_json_text())["state"];
  Params64 p;
  p.k = s["n_components"].get<int64_t>();
  p.d = s["n_features"].get<int64_t>();
  const int64_t k = p.k, d = p.d;
  p.w = widen(ml::f32_from_hex(s["weights"].get<std::string>(), "weights"));
  p.mu = widen(ml::f32_from_hex(s["means"].get<std::string>(), "means"));
  p.lower_bound = ml::f32_from_hex(s["lower_bound"].get<std::string>(), "lower_bound")[0];
  std::vector<double> c = widen(ml::f32_from_hex(s["covariances"].get<std::string>(), "covariances"));
  p.cov.assign(static_cast<size_t>(k * d * d), 0.0);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) {
        double v = 0;
        if (type == "full") v = c[j * d * d + a * d + b];
        if (type == "tied") v = c[a * d + b];
        if (type == "diag" && a == b) v = c[j * d + a];
        if (type == "spherical" && a == b) v = c[j];
        p.cov[j * d * d + a * d + b] = v;
      }
  return p;
}

// log N(x | mu, S) for each row and component plus log w, by Gauss-Jordan inversion in float64.
std::vector<double> reference_wlp(const Params64& p, const Data& X) {
  const int64_t k = p.k, d = p.d;
  std::vector<double> out(static_cast<size_t>(X.n * k));
  for (int64_t j = 0; j < k; ++j) {
    std::vector<double> A(p.cov.begin() + j * d * d, p.cov.begin() + (j + 1) * d * d), inv(d * d, 0.0);
    for (int64_t a = 0; a < d; ++a) inv[a * d + a] = 1;
    double logdet = 0;
    for (int64_t c = 0; c < d; ++c) {  // no pivoting: A is symmetric positive definite
      const double piv = A[c * d + c];
      logdet += std::log(piv);
      for (int64_t b = 0; b < d; ++b) {
        A[c * d + b] /= piv;
        inv[c * d + b] /= piv;
      }
      for (int64_t r = 0; r < d; ++r) {
        if (r == c) continue;
        const double f = A[r * d + c];
        for (int64_t b = 0; b < d; ++b) {
          A[r * d + b] -= f * A[c * d + b];
          inv[r * d + b] -= f * inv[c * d + b];
        }
      }
    }
    for (int64_t i = 0; i < X.n; ++i) {
      double q = 0;
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = 0; b < d; ++b)
          q += (X.x[i * d + a] - p.mu[j * d + a]) * inv[a * d + b] * (X.x[i * d + b] - p.mu[j * d + b]);
      out[i * k + j] = -0.5 * (d * std::log(2 * M_PI) + logdet + q) + std::log(p.w[j]);
    }
  }
  return out;
}

// Row log-likelihoods and responsibilities.
void reference_e_step(const Params64& p, const Data& X, std::vector<double>& l, std::vector<double>& resp) {
  std::vector<double> w = reference_wlp(p, X);
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

// The M-step of scikit-learn's formulas in float64: weights, means and covariances [k, d, d].
Params64 reference_m_step(const std::vector<double>& resp, const Data& X, int64_t k, const std::string& type,
                          double reg) {
  const int64_t d = X.d;
  Params64 p;
  p.k = k;
  p.d = d;
  std::vector<double> nk(k, 0);
  p.mu.assign(k * d, 0);
  for (int64_t i = 0; i < X.n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      nk[j] += resp[i * k + j];
      for (int64_t a = 0; a < d; ++a) p.mu[j * d + a] += resp[i * k + j] * X.x[i * d + a];
    }
  for (int64_t j = 0; j < k; ++j)
    for (int64_t a = 0; a < d; ++a) p.mu[j * d + a] /= nk[j];
  std::vector<double> full(k * d * d, 0);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t i = 0; i < X.n; ++i)
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = 0; b < d; ++b)
          full[j * d * d + a * d + b] +=
              resp[i * k + j] * (X.x[i * d + a] - p.mu[j * d + a]) * (X.x[i * d + b] - p.mu[j * d + b]);
  p.cov.assign(k * d * d, 0);
  for (int64_t j = 0; j < k; ++j) {
    double sph = 0;
    for (int64_t a = 0; a < d; ++a) sph += full[j * d * d + a * d + a] / nk[j] + reg;
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) {
        double v = 0;
        if (type == "full") v = full[j * d * d + a * d + b] / nk[j] + (a == b ? reg : 0);
        if (type == "tied") {
          for (int64_t t = 0; t < k; ++t) v += full[t * d * d + a * d + b];
          v = v / X.n + (a == b ? reg : 0);
        }
        if (type == "diag" && a == b) v = full[j * d * d + a * d + a] / nk[j] + reg;
        if (type == "spherical" && a == b) v = sph / d;
        p.cov[j * d * d + a * d + b] = v;
      }
  }
  p.w.resize(k);
  for (int64_t j = 0; j < k; ++j) p.w[j] = nk[j] / X.n;
  return p;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

const char* kTypes[] = {"full", "tied", "diag", "spherical"};

TEST(GaussianMixture, OneEmStepMatchesAFloat64Evaluation) {
  Data X = make_blobs(240, 3, 7);
  ml::WarningCollector quiet;  // max_iter stops these fits on purpose
  for (const char* type : kTypes) {
    for (int64_t it : {1, 3}) {
      ml::Params base = {{"n_components", "3"}, {"covariance_type", type}, {"tol", "0"}};
      base["max_iter"] = std::to_string(it);
      auto a = ml::make_estimator("gaussian_mixture", base);
      a->fit(X.X());
      base["max_iter"] = std::to_string(it + 1);
      auto b = ml::make_estimator("gaussian_mixture", base);
      b->fit(X.X());
      Params64 pa = params_of(*a, type), pb = params_of(*b, type);
      std::vector<double> l, resp;
      reference_e_step(pa, X, l, resp);
      double lb = 0;
      for (double v : l) lb += v;
      lb /= X.n;
      EXPECT_LT(rel(pb.lower_bound, lb), 1e-5) << type << " it=" << it << ": " << pb.lower_bound << " vs " << lb;
      Params64 want = reference_m_step(resp, X, 3, type, 1e-6);
      for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(pb.w[j], want.w[j], 1e-5) << type;
      for (size_t i = 0; i < want.mu.size(); ++i) EXPECT_NEAR(pb.mu[i], want.mu[i], 1e-4) << type << " mean " << i;
      for (size_t i = 0; i < want.cov.size(); ++i)
        EXPECT_NEAR(pb.cov[i], want.cov[i], 1e-4 * std::max(1.0, std::fabs(want.cov[i]))) << type << " cov " << i;
    }
  }
}

TEST(GaussianMixture, ScoreAndProbabilitiesMatchAFloat64Evaluation) {
  Data X = make_blobs(300, 4, 11), T = make_blobs(91, 4, 12);
  for (const char* type : kTypes) {
    auto est = ml::make_estimator("gaussian_mixture", {{"n_components", "3"}, {"covariance_type", type}});
    est->fit(X.X());
    Params64 p = params_of(*est, type);
    std::vector<double> l, resp;
    reference_e_step(p, T, l, resp);
    double mean = 0;
    for (double v : l) mean += v;
    mean /= T.n;
    EXPECT_LT(rel(est->score(T.X(), Tensor()), mean), 1e-6) << type;
    std::vector<float> pr = est->predict_proba(T.X()).to_vector<float>();
    std::vector<int64_t> lab = est->predict(T.X()).to_vector<int64_t>();
    ASSERT_EQ(pr.size(), resp.size());
    for (size_t i = 0; i < pr.size(); ++i) EXPECT_NEAR(pr[i], resp[i], 1e-5) << type << " at " << i;
    for (int64_t i = 0; i < T.n; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < 3; ++j)
        if (resp[i * 3 + j] > resp[i * 3 + best]) best = j;
      EXPECT_EQ(lab[i], best) << type << " row " << i;
    }
    // Converged: the lower bound is the training log-likelihood of the previous step, within tol.
    nlohmann::json s = nlohmann::json::parse(est->to_json_text())["state"];
    EXPECT_TRUE(s["converged"].get<bool>()) << type;
    EXPECT_NEAR(p.lower_bound, est->score(X.X(), Tensor()), 1e-3) << type;
  }
}

TEST(GaussianMixture, SameBytesAtThreads123ForEachTypeAndInit) {
  Data X = make_blobs(1500, 6, 3), T = make_blobs(257, 6, 4);
  const int saved = num_threads();
  for (const char* type : kTypes)
    for (const char* init : {"kmeans", "k-means++", "random", "random_from_data"}) {
      ml::Params p = {{"n_components", "4"}, {"covariance_type", type}, {"init_params", init}, {"n_init", "2"}};
      std::string model0;
      std::vector<unsigned char> out0;
      for (int t : {1, 2, 3}) {
        set_num_threads(t);
        auto est = ml::make_estimator("gaussian_mixture", p);
        est->fit(X.X());
        std::string m = est->to_json_text();
        std::vector<unsigned char> o = ml_common::outputs_of(*est, T.X());
        auto again = ml::estimator_from_json_text(m);
        EXPECT_EQ(ml_common::outputs_of(*again, T.X()), o) << type << " " << init << " after load";
        if (t == 1) {
          model0 = m;
          out0 = o;
        } else {
          EXPECT_EQ(m, model0) << type << " " << init << " threads=" << t;
          EXPECT_EQ(o, out0) << type << " " << init << " threads=" << t;
        }
      }
      // Sabotage arm: one value moved changes the model file.
      Data moved = X;
      moved.x[0] += 1.0f;
      auto other = ml::make_estimator("gaussian_mixture", p);
      other->fit(moved.X());
      EXPECT_NE(other->to_json_text(), model0) << type << " " << init;
    }
  set_num_threads(saved);
}

TEST(GaussianMixture, MaxIterWithoutConvergenceWarns) {
  Data X = make_blobs(200, 3, 5);
  ml::WarningCollector w;
  auto est = ml::make_estimator("gaussian_mixture", {{"n_components", "3"}, {"max_iter", "1"}, {"tol", "0"}});
  est->fit(X.X());
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_TRUE(has(w.messages()[0], "max_iter=1")) << w.messages()[0];
  nlohmann::json s = nlohmann::json::parse(est->to_json_text())["state"];
  EXPECT_FALSE(s["converged"].get<bool>());
  EXPECT_EQ(s["n_iter"].get<int64_t>(), 1);
}

TEST(GaussianMixture, BadInputsAreNamedErrors) {
  Data X = make_blobs(10, 3, 9);
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("gaussian_mixture", {{"n_components", "11"}})->fit(X.X()); }),
                  "n_components = 11, n_samples = 10"));
  // Every row 0: a zero covariance that reg_covar=0 does not lift (rows at another constant leave a
  // tiny positive variance from the 10 eps added to the component weights, as in scikit-learn).
  Data flat = X;
  for (float& v : flat.x) v = 0.0f;
  for (const char* type : kTypes)
    EXPECT_TRUE(has(error_of([&] {
                      ml::make_estimator("gaussian_mixture", {{"reg_covar", "0"}, {"covariance_type", type}})
                          ->fit(flat.X());
                    }),
                    "increase reg_covar"))
        << type;
  Data nan = X;
  nan.x[4] = std::nanf("");
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("gaussian_mixture")->fit(nan.X()); }), "non-finite"));
  EXPECT_TRUE(has(error_of([&] { ml::make_estimator("gaussian_mixture", {{"covariance_type", "banded"}}); }),
                  "covariance_type"));
  auto est = ml::make_estimator("gaussian_mixture", {{"n_components", "2"}});
  est->fit(X.X());
  nlohmann::json j = nlohmann::json::parse(est->to_json_text());
  j["state"]["covariance_type"] = "banded";
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(j); }), "covariance_type"));
  j = nlohmann::json::parse(est->to_json_text());
  j["state"]["weights"] = ml::f32_to_hex({0.5f, -0.5f});
  EXPECT_TRUE(has(error_of([&] { ml::estimator_from_json(j); }), "weights must be positive"));
}

}  // namespace
}  // namespace bl
