// partial_eigen64.cpp: the k largest eigenpairs of a dense symmetric matrix (see the header).
//
// 1. The lower triangle is copied to a full symmetric matrix S multiplied by 2^-s (exact) so that
//    its largest magnitude lies in [0.5, 1); eigenvalues are multiplied back by 2^s. ||S|| is bounded
//    by the largest row sum of magnitudes (columns ascending).
// 2. Block Krylov basis, block size p = k: the start block's entry (i, b) is a fixed formula of i and
//    b (a splitmix64 hash mapped to [-1, 1)). Each new basis vector is the next candidate (the start
//    vectors, then S q for the basis vectors q in order) orthogonalized against the whole basis by
//    classical Gram-Schmidt (coefficients first, then the update, the basis in ascending order),
//    repeated while a pass shrinks the norm below half (at most 4 passes), then normalized. A
//    candidate whose norm falls below 1e-10 of its start (an invariant subspace) is replaced by a
//    further formula vector; when that also fails the basis spans the whole space.
// 3. S times a block of new basis vectors: tasks of 32 rows, each row's dot products in fixed order.
//    The projected matrix T = Q^T S Q is built row by row (T_ba = (S q_b) . q_a, a <= b).
// 4. Rayleigh-Ritz at basis sizes growing by max(p, m / 8): symmetric_eigen64 of T (m x m) gives the
//    k largest Ritz pairs (theta, s); y = Q s and S y = (SQ) s (basis ascending), both divided by
//    |y|; converged when every ||S y - theta y|| <= tol ||S||_inf. Without convergence at the basis
//    limit, symmetric_eigen64 of the whole matrix (unless disabled for tests).
// 5. Sign rule of symmetric_eigen64: each vector's entry of largest magnitude (lowest index among
//    ties) positive.
// Every parallel task owns whole outputs (a coefficient, an entry range, a row range) and sums in a
// fixed order: the bits do not depend on the thread count. Dot products use four partial sums
// (index mod 4) added as ((s0 + s1) + (s2 + s3)) + tail.
// The operator overload runs steps 2, 4 and 5 with the caller's y = Op x in place of step 3 (no
// scaling, residuals against each |theta|). shift_invert_top_eigen64 factors sigma I - a by
// cholesky64 (column panels of 32, the rows below each panel in tasks of 32 rows, every entry one
// fixed formula), applies B^-1 as a forward and a backward triangular solve per vector (one task
// per vector, L^T stored row-major so both solves read rows), and checks the pairs on a itself.
#include "ml/decomposition/partial_eigen64.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::ml {

namespace {

constexpr int64_t kRows = 32;      // rows per matrix-product task
constexpr int64_t kChunk = 256;    // entries or coefficients per Gram-Schmidt task

// Entry (i, b) of formula vector number b: splitmix64 of a fixed mix of i and b, in [-1, 1).
double start_entry(int64_t i, int64_t b) {
  uint64_t z = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(b + 1) * 0xD1B54A32D192ED03ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
}

struct Krylov {
  int64_t n;
  std::vector<double> Q, SQ;  // [m_max][n] each
  int64_t m = 0;
};

// Orthogonalizes w against the basis Q[0..m) and normalizes it; false when it collapses.
bool orthonormalize(const Krylov& K, double* w, std::vector<double>& coef) {
  const int64_t n = K.n, m = K.m;
  const double start = std::sqrt(dot64(w, w, n));
  if (!(start > 0.0)) return false;
  double norm = start;
  coef.assign(static_cast<size_t>(m), 0.0);
  for (int pass = 0; pass < 4 && m > 0; ++pass) {
    default_pool().parallel_for((m + kChunk - 1) / kChunk, [&](int64_t t) {
      const int64_t a1 = std::min(m, (t + 1) * kChunk);
      for (int64_t a = t * kChunk; a < a1; ++a) coef[a] = dot64(&K.Q[a * n], w, n);
    });
    default_pool().parallel_for((n + kChunk - 1) / kChunk, [&](int64_t t) {
      const int64_t i1 = std::min(n, (t + 1) * kChunk);
      for (int64_t a = 0; a < m; ++a) {
        const double c = coef[a];
        const double* q = &K.Q[a * n];
        for (int64_t i = t * kChunk; i < i1; ++i) w[i] -= c * q[i];
      }
    });
    const double next = std::sqrt(dot64(w, w, n));
    const bool shrank = next < 0.5 * norm;
    norm = next;
    if (!(norm > 1e-10 * start)) return false;
    if (!shrank) break;
  }
  for (int64_t i = 0; i < n; ++i) w[i] /= norm;
  return true;
}

void apply_sign_rule(double* v, int64_t n) {
  int64_t big = 0;
  for (int64_t i = 1; i < n; ++i)
    if (std::fabs(v[i]) > std::fabs(v[big])) big = i;
  if (v[big] < 0.0)
    for (int64_t i = 0; i < n; ++i) v[i] = -v[i];
}

SymmetricEigen64 dense_top(const std::vector<double>& a, int64_t n, int64_t k, const char* who) {
  SymmetricEigen64 e = symmetric_eigen64(a, n, k, who);
  e.values.resize(static_cast<size_t>(k));
  return e;
}

// The Krylov iteration of steps 2-5 on the operator `apply` (fills K.SQ for basis vectors [b0, b1)
// from K.Q). anorm > 0: the residual scale; 0: each pair's own |theta|. Values are
// multiplied by 2^shift. True when res holds the answer; false: not converged and fallback asked.
bool lanczos_core(int64_t n, int64_t k, int64_t m_max, const std::function<void(Krylov&, int64_t, int64_t)>& apply,
                  double anorm, int shift, const PartialEigen64Options& opt, const char* who,
                  PartialEigen64Result& res) {
  const int64_t p = k;
  Krylov K{n, std::vector<double>(static_cast<size_t>(m_max * n)), std::vector<double>(static_cast<size_t>(m_max * n))};
  std::vector<double> T(static_cast<size_t>(m_max * m_max), 0.0), coef, w(static_cast<size_t>(n));
  int64_t next_formula = 0;  // formula vectors used so far
  int64_t next_candidate = 0;  // basis vector whose S q is the next candidate
  bool full = false;
  // Appends one vector: the candidate in w, or formula vectors while it collapses.
  auto append = [&](bool from_candidate) {
    bool ok = from_candidate && orthonormalize(K, w.data(), coef);
    while (!ok) {
      if (next_formula >= n + p) {
        full = true;
        return false;
      }
      for (int64_t i = 0; i < n; ++i) w[i] = start_entry(i, next_formula);
      ++next_formula;
      ok = orthonormalize(K, w.data(), coef);
    }
    std::copy(w.begin(), w.end(), K.Q.begin() + K.m * n);
    ++K.m;
    return true;
  };
  auto multiply = [&](int64_t b0, int64_t b1) {  // SQ and T rows for basis vectors [b0, b1)
    if (b1 > b0) apply(K, b0, b1);
    for (int64_t b = b0; b < b1; ++b)
      default_pool().parallel_for((b + kChunk) / kChunk, [&](int64_t t) {
        const int64_t a1 = std::min(b + 1, (t + 1) * kChunk);
        for (int64_t x = t * kChunk; x < a1; ++x) T[b * m_max + x] = dot64(&K.SQ[b * n], &K.Q[x * n], n);
      });
  };
  for (int64_t b = 0; b < p; ++b) append(false);
  multiply(0, K.m);
  int64_t next_check = 2 * p;
  std::vector<double> Y(static_cast<size_t>(k * n)), SY(static_cast<size_t>(k * n));
  for (;;) {
    // A block step: the next p candidates.
    const int64_t m0 = K.m;
    while (K.m < m0 + p && K.m < m_max && !full) {
      if (next_candidate < m0) {
        std::copy_n(K.SQ.begin() + next_candidate * n, n, w.begin());
        ++next_candidate;
        append(true);
      } else {
        append(false);
      }
    }
    multiply(m0, K.m);
    const bool last = K.m >= m_max || full || K.m == m0;
    if (K.m < next_check && !last) continue;
    next_check = K.m + std::max(p, K.m / 8);
    const int64_t m = K.m;
    std::vector<double> Tm(static_cast<size_t>(m * m), 0.0);
    for (int64_t b = 0; b < m; ++b)
      for (int64_t x = 0; x <= b; ++x) Tm[b * m + x] = T[b * m_max + x];
    const SymmetricEigen64 r = symmetric_eigen64(Tm, m, k, who);
    std::vector<double> resid(static_cast<size_t>(k));
    default_pool().parallel_for(k, [&](int64_t t) {
      double* y = &Y[t * n];
      double* sy = &SY[t * n];
      const double* s = &r.vectors[t * m];
      for (int64_t i = 0; i < n; ++i) {
        y[i] = 0.0;
        sy[i] = 0.0;
      }
      for (int64_t x = 0; x < m; ++x) {
        const double c = s[x];
        const double* q = &K.Q[x * n];
        const double* sq = &K.SQ[x * n];
        for (int64_t i = 0; i < n; ++i) {
          y[i] += c * q[i];
          sy[i] += c * sq[i];
        }
      }
      const double len = std::sqrt(dot64(y, y, n));
      double rr = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        y[i] /= len;
        sy[i] /= len;
        const double d = sy[i] - r.values[t] * y[i];
        rr += d * d;
      }
      resid[t] = std::sqrt(rr);
    });
    double biggest = 0.0;
    for (int64_t t = 0; t < k; ++t) biggest = std::max(biggest, std::fabs(r.values[t]));
    double worst = 0.0;
    for (int64_t t = 0; t < k; ++t) {
      // Operator path: each pair against its own |theta| (the largest where that is 0), so that the
      // smaller wanted values of a shift-invert operator are as accurate as the largest.
      double scale = anorm;
      if (!(scale > 0.0)) scale = std::fabs(r.values[t]) > 0.0 ? std::fabs(r.values[t]) : biggest;
      if (!(scale > 0.0)) scale = 1.0;
      worst = std::max(worst, resid[t] / scale);
    }
    res.max_residual = worst;
    res.basis = m;
    if (worst <= opt.tol || last) {
      res.converged = worst <= opt.tol;
      if (!res.converged && opt.fallback) return false;
      for (int64_t t = 0; t < k; ++t) {
        res.eig.values[t] = std::ldexp(r.values[t], shift);
        BL_CHECK(std::isfinite(res.eig.values[t]), who, ": eigenvalue ", t, " overflows binary64");
        std::copy_n(Y.begin() + t * n, n, res.eig.vectors.begin() + t * n);
        apply_sign_rule(&res.eig.vectors[t * n], n);
      }
      return true;
    }
  }
}

}  // namespace

PartialEigen64Result partial_eigen64_run(const std::vector<double>& a, int64_t n, int64_t k, const char* who,
                                         const PartialEigen64Options& opt) {
  BL_CHECK(n >= 0 && static_cast<int64_t>(a.size()) == n * n, who, ": expected a ", n, " x ", n,
           " matrix, got ", a.size(), " entries");
  BL_CHECK(k >= 0 && k <= n, who, ": asked for ", k, " eigenpairs of a ", n, " x ", n, " matrix");
  const double amax = lower_triangle_max_abs(a, n, who);
  PartialEigen64Result res;
  res.eig.values.assign(static_cast<size_t>(k), 0.0);
  res.eig.vectors.assign(static_cast<size_t>(k * n), 0.0);
  res.converged = true;
  if (k == 0) return res;
  if (amax == 0.0) {  // the zero matrix: the unit vectors, as symmetric_eigen64 gives
    for (int64_t t = 0; t < k; ++t) res.eig.vectors[t * n + t] = 1.0;
    return res;
  }
  const int64_t p = k;
  int64_t m_max = opt.max_basis > 0 ? opt.max_basis : std::max<int64_t>(80 * k, 320);
  m_max = std::min(n, std::max(m_max, p));
  if (n <= 2 * p + 8) {  // too small for a Krylov basis to save anything
    res.eig = dense_top(a, n, k, who);
    return res;
  }
  int shift = 0;
  std::frexp(amax, &shift);
  std::vector<double> S(static_cast<size_t>(n * n));
  default_pool().parallel_for((n + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t r1 = std::min(n, (t + 1) * kRows);
    for (int64_t i = t * kRows; i < r1; ++i)
      for (int64_t j = 0; j < n; ++j) S[i * n + j] = std::ldexp(j <= i ? a[i * n + j] : a[j * n + i], -shift);
  });
  double anorm = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += std::fabs(S[i * n + j]);
    anorm = std::max(anorm, s);
  }
  auto apply = [&](Krylov& K, int64_t b0, int64_t b1) {
    default_pool().parallel_for((n + kRows - 1) / kRows, [&](int64_t t) {
      const int64_t r1 = std::min(n, (t + 1) * kRows);
      for (int64_t r = t * kRows; r < r1; ++r)
        for (int64_t b = b0; b < b1; ++b) K.SQ[b * n + r] = dot64(&S[r * n], &K.Q[b * n], n);
    });
  };
  if (lanczos_core(n, k, m_max, apply, anorm, shift, opt, who, res)) return res;
  res.eig = dense_top(a, n, k, who);
  return res;
}

PartialEigen64Result partial_eigen64_op_run(const BlockOperator64& op, int64_t n, int64_t k, const char* who,
                                            const PartialEigen64Options& opt) {
  BL_CHECK(n >= 0 && k >= 0 && k <= n, who, ": asked for ", k, " eigenpairs of a ", n, " x ", n, " operator");
  PartialEigen64Result res;
  res.eig.values.assign(static_cast<size_t>(k), 0.0);
  res.eig.vectors.assign(static_cast<size_t>(k * n), 0.0);
  res.converged = true;
  if (k == 0) return res;
  int64_t m_max = opt.max_basis > 0 ? opt.max_basis : std::max<int64_t>(80 * k, 320);
  m_max = std::min(n, std::max(m_max, k));
  auto apply = [&](Krylov& K, int64_t b0, int64_t b1) { op(&K.Q[b0 * n], &K.SQ[b0 * n], b1 - b0); };
  PartialEigen64Options o = opt;
  o.fallback = false;  // nothing to fall back on: the caller reads `converged`
  lanczos_core(n, k, m_max, apply, 0.0, 0, o, who, res);
  return res;
}

bool cholesky64(const std::vector<double>& b, int64_t n, std::vector<double>& L) {
  constexpr int64_t kPanel = 32;
  L.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    const int64_t j1 = std::min(n, j0 + kPanel);
    // The diagonal block's rows in order, then the rows below in tasks of kRows, each row's entries
    // of this panel in column order: every entry is the fixed formula of the header.
    for (int64_t i = j0; i < j1; ++i) {
      double* li = &L[i * n];
      for (int64_t j = j0; j < i; ++j) li[j] = (b[i * n + j] - dot64(li, &L[j * n], j)) / L[j * n + j];
      const double d = b[i * n + i] - dot64(li, li, i);
      if (!(d > 0.0) || !std::isfinite(d)) return false;
      li[i] = std::sqrt(d);
    }
    const int64_t below = n - j1;
    default_pool().parallel_for((below + kRows - 1) / kRows, [&](int64_t t) {
      const int64_t r1 = std::min(n, j1 + (t + 1) * kRows);
      for (int64_t i = j1 + t * kRows; i < r1; ++i) {
        double* li = &L[i * n];
        for (int64_t j = j0; j < j1; ++j) li[j] = (b[i * n + j] - dot64(li, &L[j * n], j)) / L[j * n + j];
      }
    });
  }
  return true;
}

SymmetricEigen64 shift_invert_top_eigen64(const std::vector<double>& a, int64_t n, int64_t k, double sigma,
                                          const char* who, bool* used_lanczos) {
  if (used_lanczos) *used_lanczos = false;
  if (!(n >= 256 && k >= 1 && k <= n / 8) || static_cast<int64_t>(a.size()) != n * n || !std::isfinite(sigma))
    return symmetric_eigen64(a, n, k, who);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j)
      if (!std::isfinite(a[i * n + j])) return symmetric_eigen64(a, n, k, who);  // it names the entry
  // The full symmetric a and its row-sum norm (columns ascending).
  std::vector<double> S(static_cast<size_t>(n * n)), B(static_cast<size_t>(n * n), 0.0);
  default_pool().parallel_for((n + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t r1 = std::min(n, (t + 1) * kRows);
    for (int64_t i = t * kRows; i < r1; ++i)
      for (int64_t j = 0; j < n; ++j) {
        S[i * n + j] = j <= i ? a[i * n + j] : a[j * n + i];
        if (j <= i) B[i * n + j] = (i == j ? sigma : 0.0) - a[i * n + j];
      }
  });
  double anorm = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += std::fabs(S[i * n + j]);
    anorm = std::max(anorm, s);
  }
  std::vector<double> L;
  if (!(anorm > 0.0) || !cholesky64(B, n, L)) return symmetric_eigen64(a, n, k, who);
  B = std::vector<double>();
  std::vector<double> U(static_cast<size_t>(n * n));  // L^T row-major: the backward solve reads rows
  default_pool().parallel_for((n + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t r1 = std::min(n, (t + 1) * kRows);
    for (int64_t i = t * kRows; i < r1; ++i)
      for (int64_t j = 0; j < n; ++j) U[i * n + j] = L[j * n + i];
  });
  // y = B^-1 x: L z = x forward, L^T y = z backward; one task per vector.
  auto op = [&](const double* x, double* y, int64_t count) {
    default_pool().parallel_for(count, [&](int64_t c) {
      const double* xc = x + c * n;
      double* yc = y + c * n;
      std::vector<double> z(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) z[i] = (xc[i] - dot64(&L[i * n], z.data(), i)) / L[i * n + i];
      for (int64_t i = n - 1; i >= 0; --i)
        yc[i] = (z[i] - dot64(&U[i * n + i + 1], yc + i + 1, n - 1 - i)) / U[i * n + i];
    });
  };
  PartialEigen64Options opt;
  opt.tol = 1e-12;
  const PartialEigen64Result run = partial_eigen64_op_run(op, n, k, who, opt);
  if (!run.converged) return symmetric_eigen64(a, n, k, who);
  // Back to a: Rayleigh quotients and residuals of the returned vectors, one task per vector.
  SymmetricEigen64 out;
  out.values.assign(static_cast<size_t>(k), 0.0);
  out.vectors = run.eig.vectors;
  std::vector<double> resid(static_cast<size_t>(k));
  default_pool().parallel_for(k, [&](int64_t t) {
    const double* v = &out.vectors[t * n];
    std::vector<double> av(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) av[i] = dot64(&S[i * n], v, n);
    const double lambda = dot64(v, av.data(), n);
    double rr = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = av[i] - lambda * v[i];
      rr += d * d;
    }
    out.values[t] = lambda;
    resid[t] = std::sqrt(rr) / anorm;
  });
  for (int64_t t = 0; t < k; ++t)
    if (!(resid[t] <= 1e-11)) return symmetric_eigen64(a, n, k, who);
  if (used_lanczos) *used_lanczos = true;
  return out;
}

SymmetricEigen64 partial_eigen64(const std::vector<double>& a, int64_t n, int64_t k, const char* who) {
  return partial_eigen64_run(a, n, k, who, PartialEigen64Options{}).eig;
}

SymmetricEigen64 top_eigen64(const std::vector<double>& a, int64_t n, int64_t k, const char* who) {
  if (n >= 256 && k >= 1 && k <= n / 8) return partial_eigen64(a, n, k, who);
  return symmetric_eigen64(a, n, k, who);
}

}  // namespace bl::ml
