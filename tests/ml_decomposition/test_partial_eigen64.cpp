// test_partial_eigen64.cpp: the block Lanczos partial eigensolver against the dense symmetric_eigen64
// (values, vectors or spanned subspaces), its bits at several thread counts, a sabotaged run that
// must report a residual above the tolerance, and bad input. Then the operator path, cholesky64 and
// shift_invert_top_eigen64 on clustered spectra (the wanted eigenvalues a few 1e-5 apart) against
// the dense solver, their bits at threads 1, 2, 3, and sabotaged shifts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "conformance/test_rng_splitmix.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/decomposition/partial_eigen64.h"
#include "ml/decomposition/symmetric_eigen64.h"

namespace {

using bl::ml::PartialEigen64Options;
using bl::ml::partial_eigen64;
using bl::ml::partial_eigen64_run;
using bl::ml::symmetric_eigen64;

std::vector<double> random_symmetric(int64_t n, uint64_t seed) {
  bl::test_rng::SplitMix64 rng(seed);
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = rng.uniform_pm1();
  return a;
}

// Q diag(d) Q^T with Q = I - 2 u u^T / |u|^2 (a random reflection).
std::vector<double> with_spectrum(const std::vector<double>& d, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(d.size());
  bl::test_rng::SplitMix64 rng(seed);
  std::vector<double> u(static_cast<size_t>(n));
  double uu = 0.0;
  for (auto& x : u) {
    x = rng.uniform_pm1();
    uu += x * x;
  }
  std::vector<double> q(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) q[i * n + j] = (i == j ? 1.0 : 0.0) - 2.0 * u[i] * u[j] / uu;
  std::vector<double> a(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int64_t l = 0; l < n; ++l) s += q[i * n + l] * d[l] * q[j * n + l];
      a[i * n + j] = a[j * n + i] = s;
    }
  return a;
}

double norm_inf(const std::vector<double>& a, int64_t n) {
  double best = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += std::fabs(a[i * n + j]);
    best = std::max(best, s);
  }
  return best;
}

double residual(const std::vector<double>& a, int64_t n, const double* v, double lam) {
  double rr = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += a[i * n + j] * v[j];
    rr += (s - lam * v[i]) * (s - lam * v[i]);
  }
  return std::sqrt(rr);
}

// |v - P v| with P the projector on the rows first..first+count of `basis`.
double off_span(const double* v, const std::vector<double>& basis, int64_t first, int64_t count, int64_t n) {
  std::vector<double> r(v, v + n);
  for (int64_t t = first; t < first + count; ++t) {
    double c = 0.0;
    for (int64_t i = 0; i < n; ++i) c += basis[t * n + i] * v[i];
    for (int64_t i = 0; i < n; ++i) r[i] -= c * basis[t * n + i];
  }
  double s = 0.0;
  for (double x : r) s += x * x;
  return std::sqrt(s);
}

void expect_matches_dense(const std::vector<double>& a, int64_t n, int64_t k, bool vectors_exact) {
  const auto dense = symmetric_eigen64(a, n, k);
  const auto run = partial_eigen64_run(a, n, k, "test", PartialEigen64Options{});
  EXPECT_TRUE(run.converged) << "n=" << n << " k=" << k << " (fell back to the dense solver)";
  if (n >= 300) EXPECT_LT(run.basis, n) << "n=" << n << " k=" << k;
  const auto& part = run.eig;
  ASSERT_EQ(static_cast<int64_t>(part.values.size()), k);
  ASSERT_EQ(static_cast<int64_t>(part.vectors.size()), k * n);
  double scale = 0.0;
  for (double v : dense.values) scale = std::max(scale, std::fabs(v));
  for (int64_t t = 0; t < k; ++t) {
    EXPECT_NEAR(part.values[t], dense.values[t], 1e-10 * std::max(scale, 1e-300)) << "n=" << n << " k=" << k << " t=" << t;
    if (vectors_exact) {
      double worst = 0.0;
      for (int64_t i = 0; i < n; ++i)
        worst = std::max(worst, std::fabs(part.vectors[t * n + i] - dense.vectors[t * n + i]));
      EXPECT_LE(worst, 1e-8) << "n=" << n << " k=" << k << " t=" << t;
    }
    EXPECT_LE(residual(a, n, &part.vectors[t * n], part.values[t]), 1e-10 * norm_inf(a, n));
  }
}

TEST(PartialEigen64, RandomMatchesDense) {
  for (int64_t n : {1, 2, 5, 300, 1000})
    for (int64_t k : {1, 2, 5}) {
      if (k > n) continue;
      expect_matches_dense(random_symmetric(n, 100 + n), n, k, true);
    }
}

TEST(PartialEigen64, RepeatedAndClusteredSpanTheSameSubspace) {
  const int64_t n = 300;
  bl::test_rng::SplitMix64 rng(7);
  std::vector<double> d(static_cast<size_t>(n));
  for (auto& x : d) x = rng.uniform_pm1();
  d[10] = d[20] = d[30] = 3.0;  // a triple eigenvalue
  d[40] = 2.0;
  d[50] = 2.0 + 1e-9;  // a tight pair
  const std::vector<double> a = with_spectrum(d, 11);
  for (int64_t k : {3, 5}) {
    const auto dense = symmetric_eigen64(a, n, k);
    const auto run = partial_eigen64_run(a, n, k, "test", PartialEigen64Options{});
    EXPECT_TRUE(run.converged) << "k=" << k;
    const auto& part = run.eig;
    for (int64_t t = 0; t < k; ++t) {
      EXPECT_NEAR(part.values[t], dense.values[t], 1e-10 * 3.0);
      EXPECT_LE(off_span(&part.vectors[t * n], dense.vectors, 0, k, n), 1e-8) << "k=" << k << " t=" << t;
    }
  }
}

TEST(PartialEigen64, RankDeficientAndZero) {
  const int64_t n = 300, r = 3;
  bl::test_rng::SplitMix64 rng(5);
  std::vector<double> b(static_cast<size_t>(n * r));
  for (auto& x : b) x = rng.uniform_pm1();
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t l = 0; l < r; ++l) s += b[i * r + l] * b[j * r + l];
      a[i * n + j] = s;
    }
  const int64_t k = 5;
  const auto dense = symmetric_eigen64(a, n, k);
  const auto run = partial_eigen64_run(a, n, k, "test", PartialEigen64Options{});
  EXPECT_TRUE(run.converged);
  const auto& part = run.eig;
  for (int64_t t = 0; t < k; ++t) {
    EXPECT_NEAR(part.values[t], dense.values[t], 1e-10 * dense.values[0]);
    EXPECT_LE(residual(a, n, &part.vectors[t * n], part.values[t]), 1e-10 * norm_inf(a, n));
  }
  for (int64_t t = 0; t < r; ++t) EXPECT_LE(off_span(&part.vectors[t * n], dense.vectors, 0, r, n), 1e-8);

  const std::vector<double> zero(static_cast<size_t>(n * n), 0.0);
  const auto z = partial_eigen64(zero, n, 2);
  const auto zd = symmetric_eigen64(zero, n, 2);
  for (int64_t t = 0; t < 2; ++t) EXPECT_EQ(z.values[t], 0.0);
  EXPECT_EQ(z.vectors, zd.vectors);
}

TEST(PartialEigen64, BitsDoNotDependOnThreads) {
  const int64_t n = 700, k = 4;
  const std::vector<double> a = random_symmetric(n, 31);
  const int before = bl::num_threads();
  std::vector<bl::ml::SymmetricEigen64> runs;
  for (int threads : {1, 2, 3}) {
    bl::set_num_threads(threads);
    runs.push_back(partial_eigen64(a, n, k));
  }
  bl::set_num_threads(before);
  for (size_t r = 1; r < runs.size(); ++r) {
    EXPECT_EQ(0, std::memcmp(runs[r].values.data(), runs[0].values.data(), sizeof(double) * k));
    EXPECT_EQ(0, std::memcmp(runs[r].vectors.data(), runs[0].vectors.data(), sizeof(double) * k * n));
  }
}

TEST(PartialEigen64, SabotagedRunReportsItsResidual) {
  const int64_t n = 600, k = 2;
  const std::vector<double> a = random_symmetric(n, 41);
  PartialEigen64Options opt;
  opt.max_basis = 2 * k;  // far too small a Krylov basis
  opt.fallback = false;
  const auto bad = partial_eigen64_run(a, n, k, "test", opt);
  EXPECT_FALSE(bad.converged);
  EXPECT_GT(bad.max_residual, opt.tol);
  const double worst = residual(a, n, &bad.eig.vectors[0], bad.eig.values[0]) / norm_inf(a, n);
  EXPECT_GT(worst, opt.tol);  // the test's own residual sees it too
  opt.fallback = true;  // the same limit with the fallback: the dense solver's answer
  const auto good = partial_eigen64_run(a, n, k, "test", opt);
  EXPECT_FALSE(good.converged);
  const auto dense = symmetric_eigen64(a, n, k);
  for (int64_t t = 0; t < k; ++t) EXPECT_EQ(good.eig.values[t], dense.values[t]);
  EXPECT_EQ(good.eig.vectors, dense.vectors);
}

TEST(PartialEigen64, NonFiniteInputNamesTheCaller) {
  const int64_t n = 300;
  std::vector<double> a = random_symmetric(n, 3);
  a[5 * n + 2] = std::nan("");
  try {
    partial_eigen64(a, n, 2, "my_estimator");
    FAIL() << "no error";
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("my_estimator"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
  EXPECT_THROW(partial_eigen64(std::vector<double>(7, 0.0), 3, 1, "x"), bl::Error);
  EXPECT_THROW(partial_eigen64(random_symmetric(4, 1), 4, 5, "x"), bl::Error);
}

// A spectrum whose k wanted largest values cluster within `gap` * t of `top`; the rest spread below.
std::vector<double> clustered(int64_t n, double top, double gap, double low, double high) {
  std::vector<double> d(static_cast<size_t>(n));
  const double cluster[] = {0.0, 1.0, 3.0, 6.0, 10.0, 15.0};
  for (int64_t i = 0; i < n; ++i)
    d[i] = i < 6 ? top - gap * cluster[i] : low + (high - low) * static_cast<double>(i - 6) / static_cast<double>(n - 7);
  return d;
}

void expect_shift_invert_matches_dense(const std::vector<double>& a, int64_t n, int64_t k, double sigma) {
  bool lanczos = false;
  const auto si = bl::ml::shift_invert_top_eigen64(a, n, k, sigma, "test", &lanczos);
  EXPECT_TRUE(lanczos) << "fell back to the dense solver";
  const auto dense = symmetric_eigen64(a, n, k);
  double scale = 0.0;
  for (double v : dense.values) scale = std::max(scale, std::fabs(v));
  for (int64_t t = 0; t < k; ++t) {
    EXPECT_NEAR(si.values[t], dense.values[t], 1e-10 * scale) << "t=" << t;
    // The same vector up to 1e-8 (each wanted value is simple) and the same k-dimensional subspace.
    double worst = 0.0;
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(si.vectors[t * n + i] - dense.vectors[t * n + i]));
    EXPECT_LE(worst, 1e-8) << "t=" << t;
    EXPECT_LE(off_span(&si.vectors[t * n], dense.vectors, 0, k, n), 1e-8) << "t=" << t;
  }
}

TEST(ShiftInvertEigen64, CholeskyReconstructsAndRefusesIndefinite) {
  const int64_t n = 150;
  std::vector<double> a = random_symmetric(n, 5);
  for (int64_t i = 0; i < n; ++i) a[i * n + i] += static_cast<double>(n);  // diagonally dominant
  std::vector<double> L;
  ASSERT_TRUE(bl::ml::cholesky64(a, n, L));
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(j > i ? L[i * n + j] : 0.0, 0.0);
      double s = 0.0;
      for (int64_t l = 0; l < n; ++l) s += L[i * n + l] * L[j * n + l];
      worst = std::max(worst, std::fabs(s - a[i * n + j]));
    }
  EXPECT_LE(worst, 1e-12 * norm_inf(a, n));
  a[7 * n + 7] = -1.0;  // not positive definite
  EXPECT_FALSE(bl::ml::cholesky64(a, n, L));
}

TEST(ShiftInvertEigen64, ClusteredSpectraMatchTheDenseSolver) {
  const int64_t n = 400;
  // Spectral embedding's shape: eigenvalues in [-1, 1], the wanted cluster at 1, sigma = 1 + 1e-6.
  expect_shift_invert_matches_dense(with_spectrum(clustered(n, 1.0, 2e-5, -0.9, 0.995), 11), n, 3, 1.0 + 1e-6);
  // Locally linear embedding's shape: -M, eigenvalues <= 0, the wanted cluster at 0, a small sigma.
  expect_shift_invert_matches_dense(with_spectrum(clustered(n, 0.0, 1e-6, -3.0, -1e-3), 12), n, 5, 1e-6);
}

TEST(ShiftInvertEigen64, PlainLanczosStallsWhereShiftInvertConverges) {
  const int64_t n = 400, k = 3;
  const std::vector<double> a = with_spectrum(clustered(n, 1.0, 2e-5, -0.9, 0.995), 13);
  PartialEigen64Options opt;
  opt.max_basis = 60;
  opt.fallback = false;
  EXPECT_FALSE(partial_eigen64_run(a, n, k, "test", opt).converged);  // the cluster is too tight
  bool lanczos = false;
  bl::ml::shift_invert_top_eigen64(a, n, k, 1.0 + 1e-6, "test", &lanczos);
  EXPECT_TRUE(lanczos);
}

TEST(ShiftInvertEigen64, BitsDoNotDependOnThreads) {
  const int64_t n = 500, k = 3;
  const std::vector<double> a = with_spectrum(clustered(n, 1.0, 2e-5, -0.9, 0.995), 17);
  const int before = bl::num_threads();
  std::vector<bl::ml::SymmetricEigen64> runs;
  std::vector<std::vector<double>> chol;
  for (int threads : {1, 2, 3}) {
    bl::set_num_threads(threads);
    bool lanczos = false;
    runs.push_back(bl::ml::shift_invert_top_eigen64(a, n, k, 1.0 + 1e-6, "test", &lanczos));
    EXPECT_TRUE(lanczos);
    std::vector<double> b = a, L;
    for (int64_t i = 0; i < n; ++i) b[i * n + i] += 2.0;
    ASSERT_TRUE(bl::ml::cholesky64(b, n, L));
    chol.push_back(L);
  }
  bl::set_num_threads(before);
  for (size_t r = 1; r < runs.size(); ++r) {
    EXPECT_EQ(0, std::memcmp(runs[r].values.data(), runs[0].values.data(), sizeof(double) * k));
    EXPECT_EQ(0, std::memcmp(runs[r].vectors.data(), runs[0].vectors.data(), sizeof(double) * k * n));
    EXPECT_EQ(0, std::memcmp(chol[r].data(), chol[0].data(), sizeof(double) * n * n));
  }
}

TEST(ShiftInvertEigen64, SabotagedShiftsAreCaught) {
  const int64_t n = 400, k = 3;
  const std::vector<double> a = with_spectrum(clustered(n, 1.0, 2e-5, -0.9, 0.995), 19);
  const auto dense = symmetric_eigen64(a, n, k);
  // A shift below the largest eigenvalue: sigma I - a is indefinite, the factorization refuses it
  // and the dense solver answers.
  bool lanczos = true;
  const auto below = bl::ml::shift_invert_top_eigen64(a, n, k, 0.5, "test", &lanczos);
  EXPECT_FALSE(lanczos);
  EXPECT_EQ(below.vectors, dense.vectors);
  for (int64_t t = 0; t < k; ++t) EXPECT_EQ(below.values[t], dense.values[t]);
  // A shift far above (sigma = 10: the cluster is not pulled apart) with a small basis and no
  // fallback: the operator run reports itself unconverged with its residual.
  std::vector<double> b = a, L;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) b[i * n + j] = (i == j ? 10.0 : 0.0) - a[i * n + j];
  ASSERT_TRUE(bl::ml::cholesky64(b, n, L));
  const bl::ml::BlockOperator64 op = [&](const double* x, double* y, int64_t count) {
    for (int64_t c = 0; c < count; ++c) {
      std::vector<double> z(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        double s = x[c * n + i];
        for (int64_t j = 0; j < i; ++j) s -= L[i * n + j] * z[j];
        z[i] = s / L[i * n + i];
      }
      for (int64_t i = n - 1; i >= 0; --i) {
        double s = z[i];
        for (int64_t j = i + 1; j < n; ++j) s -= L[j * n + i] * y[c * n + j];
        y[c * n + i] = s / L[i * n + i];
      }
    }
  };
  PartialEigen64Options opt;
  opt.max_basis = 40;
  const auto bad = bl::ml::partial_eigen64_op_run(op, n, k, "test", opt);
  EXPECT_FALSE(bad.converged);
  EXPECT_GT(bad.max_residual, opt.tol);
  // The same operator with the right shift converges within the same basis.
  for (int64_t i = 0; i < n; ++i) b[i * n + i] = (1.0 + 1e-6) - a[i * n + i];
  ASSERT_TRUE(bl::ml::cholesky64(b, n, L));
  const auto good = bl::ml::partial_eigen64_op_run(op, n, k, "test", opt);
  EXPECT_TRUE(good.converged) << good.max_residual;
  for (int64_t t = 0; t < k; ++t) EXPECT_LE(off_span(&good.eig.vectors[t * n], dense.vectors, 0, k, n), 1e-8);
}

}  // namespace
