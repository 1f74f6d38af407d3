// symmetric_eigen64.cpp: dense symmetric eigen-decomposition in binary64 (see the header).
//
// 1. The matrix is multiplied by a power of two 2^-s (exact) so that its largest magnitude lies in
//    [0.5, 1): no step overflows or loses range; the eigenvalues are multiplied back by 2^s.
// 2. Householder reduction, rows n-1 down to 2: row i's entries 0..i-1 (x, divided by their
//    magnitude sum) become alpha e_{i-1}, alpha = -sign(x_{i-1}) |x|, by P = I - v v^T / h with
//    v = x - alpha e_{i-1}, h = |x|^2 - x_{i-1} alpha; the leading block B becomes
//    B - v q^T - q v^T with p = B v / h, q = p - (v^T p / 2h) v (lower triangle only); v_i and h_i
//    are kept. B v is summed by blocks of 64 rows (a task each, rows in order within a block) and
//    the blocks' partial vectors added in block order; the update is applied row by row in the
//    next step's pass. A = Q T Q^T with Q^T = G = P_2 P_3 ... P_n-1.
// 3. Implicit QL with Wilkinson's shift on the tridiagonal (diagonal d, off-diagonal e): for each
//    l, the first m >= l with |e_m| <= 2^-52 (|d_m| + |d_m+1|) splits the matrix; while m > l, one
//    sweep of plane rotations from m-1 down to l chases the bulge of the shift taken from the
//    leading 2 x 2 block (at most 60 sweeps per eigenvalue, then an error). The rotations are
//    recorded: the eigenvectors are the rows of W = M G, M their product.
// 4. Eigenvalues sorted descending (stable). Each wanted eigenvector (row src of W) is computed on
//    its own: e_src^T through the rotations in reverse order, then through P_2, ..., P_n-1; its entry
//    of largest magnitude (lowest index among ties) made positive. Tasks of 16 vectors on the
//    worker pool, the task count from the problem size: the bits do not depend on the threads.
// Dot products use four partial sums (index mod 4) added as ((s0 + s1) + (s2 + s3)) + tail: a fixed
// order chosen by this code, not by the compiler or the machine.
#include "ml/decomposition/symmetric_eigen64.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/thread_pool.h"

namespace bl::ml {

double hypot64(double a, double b) {
  a = std::fabs(a);
  b = std::fabs(b);
  const double big = a < b ? b : a, small = a < b ? a : b;
  if (big == 0.0 || std::isinf(big)) return big;
  const double r = small / big;
  return big * std::sqrt(1.0 + r * r);
}

namespace {

constexpr double kEps = 0x1p-52;
constexpr int kMaxSweeps = 60;
constexpr int64_t kRowBlock = 64;  // rows per task of the reduction's product B v
constexpr int64_t kLanes = 16;  // eigenvectors per back-transformation task

// Reduces the lower triangle of A (n x n, scaled) to tridiagonal form: diag [n], off [n] with off[i]
// coupling i and i+1 (off[n-1] = 0). Row i of A keeps v_i (entries 0..i-1); returns h [n] (0: no
// reflection at row i).
std::vector<double> tridiagonalize(std::vector<double>& A, int64_t n, std::vector<double>& diag,
                                   std::vector<double>& off) {
  std::vector<double> h(static_cast<size_t>(n), 0.0), e(static_cast<size_t>(n), 0.0), p(static_cast<size_t>(n)),
      q(static_cast<size_t>(n)), partial;
  // Step i's update of rows 0..i-1 is applied row by row during the pass of the next step, fused
  // with its product B v (one sweep over the block instead of two; the same operations on the same
  // values). pending: the step whose update is still due (0: none); its v is row `pending` of A.
  int64_t pending = 0;
  auto update_row = [&](int64_t r) {
    if (pending == 0) return;
    double* row = &A[r * n];
    const double* v = &A[pending * n];
    const double vr = v[r], qr = q[r];
    for (int64_t c = 0; c <= r; ++c) row[c] -= vr * q[c] + qr * v[c];
  };
  for (int64_t i = n - 1; i >= 2; --i) {
    update_row(i);
    double* x = &A[i * n];
    double scale = 0.0;
    for (int64_t k = 0; k < i; ++k) scale += std::fabs(x[k]);
    if (scale == 0.0) {  // the row is already reduced: P = I
      for (int64_t r = 0; r < i; ++r) update_row(r);
      pending = 0;
      continue;
    }
    for (int64_t k = 0; k < i; ++k) x[k] /= scale;
    const double sigma = dot64(x, x, i);
    const double f = x[i - 1], alpha = f >= 0.0 ? -std::sqrt(sigma) : std::sqrt(sigma);
    e[i] = scale * alpha;
    const double hh = sigma - f * alpha;
    x[i - 1] = f - alpha;  // x now holds v
    // p = B v over the lower triangle: blocks of kRowBlock rows (a task each) sum their rows'
    // contributions in row order into their own partial vector; the partials are then added in
    // block order.
    const int64_t blocks = (i + kRowBlock - 1) / kRowBlock;
    partial.assign(static_cast<size_t>(blocks * i), 0.0);
    default_pool().parallel_for(blocks, [&](int64_t blk) {
      double* part = &partial[blk * i];
      const int64_t r1 = std::min(i, (blk + 1) * kRowBlock);
      for (int64_t r = blk * kRowBlock; r < r1; ++r) {
        update_row(r);
        const double* row = &A[r * n];
        const double s = dot64(row, x, r + 1);
        const double vr = x[r];
        for (int64_t c = 0; c < r; ++c) part[c] += row[c] * vr;
        part[r] += s;
      }
    });
    for (int64_t r = 0; r < i; ++r) p[r] = 0.0;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const double* part = &partial[blk * i];
      const int64_t r1 = std::min(i, (blk + 1) * kRowBlock);
      for (int64_t r = 0; r < r1; ++r) p[r] += part[r];
    }
    for (int64_t r = 0; r < i; ++r) p[r] /= hh;
    const double kk = dot64(x, p.data(), i) / (hh + hh);
    for (int64_t r = 0; r < i; ++r) q[r] = p[r] - kk * x[r];
    pending = i;
    h[i] = hh;
  }
  for (int64_t r = 0; r < pending; ++r) update_row(r);
  if (n >= 2) e[1] = A[n];
  for (int64_t i = 0; i < n; ++i) diag[i] = A[i * n + i];
  for (int64_t i = 0; i + 1 < n; ++i) off[i] = e[i + 1];
  if (n >= 1) off[n - 1] = 0.0;
  return h;
}

// The plane rotations of the QL sweeps in the order applied: rotation t maps rows (i, i+1) of the
// eigenvector matrix W = Z^T G to (c w_i - s w_i+1, s w_i + c w_i+1).
struct Rotations {
  std::vector<int32_t> row;
  std::vector<double> c, s;
};

// Implicit QL on (d, e), recording its rotations.
void tridiagonal_ql(std::vector<double>& d, std::vector<double>& e, Rotations& rot, int64_t n, const char* who) {
  for (int64_t l = 0; l < n; ++l) {
    int sweeps = 0;
    for (;;) {
      int64_t m = l;
      for (; m + 1 < n; ++m)
        if (std::fabs(e[m]) <= kEps * (std::fabs(d[m]) + std::fabs(d[m + 1]))) break;
      if (m == l) break;
      BL_CHECK(++sweeps <= kMaxSweeps, who, ": the QL iteration did not converge in ", kMaxSweeps,
               " sweeps for eigenvalue ", l);
      double g = (d[l + 1] - d[l]) / (e[l] + e[l]);
      double r = hypot64(g, 1.0);
      g = d[m] - d[l] + e[l] / (g + (g >= 0.0 ? r : -r));
      double s = 1.0, c = 1.0, p = 0.0;
      bool split = false;
      for (int64_t i = m - 1; i >= l; --i) {
        const double f = s * e[i], b = c * e[i];
        r = hypot64(f, g);
        e[i + 1] = r;
        if (r == 0.0) {  // an exact zero: the matrix splits at i + 1
          d[i + 1] -= p;
          e[m] = 0.0;
          split = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2.0 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        rot.row.push_back(static_cast<int32_t>(i));
        rot.c.push_back(c);
        rot.s.push_back(s);
      }
      if (split) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0.0;
    }
  }
}

// Eigenvectors number first..first+count of the sorted order, stored [n][count] (component-major so
// that each step updates count contiguous lanes): lane b starts as e_src (src = order[first + b]),
// is multiplied from the right by the rotations in reverse order (y^T M_t), then by the reflections
// P_2, P_3, ..., P_n-1 (y - (y . v_i / h_i) v_i, the dot product in ascending index). Every lane
// sees the same operations in the same order whatever the other lanes are.
void back_transform(const std::vector<double>& A, const std::vector<double>& h, const Rotations& rot,
                    const std::vector<int64_t>& order, int64_t n, int64_t first, int64_t count, double* out) {
  std::vector<double> Y(static_cast<size_t>(n * count), 0.0), acc(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) Y[order[first + b] * count + b] = 1.0;
  for (int64_t t = static_cast<int64_t>(rot.row.size()) - 1; t >= 0; --t) {
    const double c = rot.c[t], s = rot.s[t];
    double* yi = &Y[static_cast<int64_t>(rot.row[t]) * count];
    double* yj = yi + count;
    for (int64_t b = 0; b < count; ++b) {
      const double u = yi[b], w = yj[b];
      yi[b] = u * c + w * s;
      yj[b] = w * c - u * s;
    }
  }
  for (int64_t i = 2; i < n; ++i) {
    if (h[i] == 0.0) continue;
    const double* v = &A[i * n];
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < i; ++k) {
      const double* y = &Y[k * count];
      for (int64_t b = 0; b < count; ++b) acc[b] += y[b] * v[k];
    }
    for (int64_t b = 0; b < count; ++b) acc[b] /= h[i];
    for (int64_t k = 0; k < i; ++k) {
      double* y = &Y[k * count];
      for (int64_t b = 0; b < count; ++b) y[b] -= acc[b] * v[k];
    }
  }
  for (int64_t b = 0; b < count; ++b) {
    int64_t big = 0;
    for (int64_t k = 1; k < n; ++k)
      if (std::fabs(Y[k * count + b]) > std::fabs(Y[big * count + b])) big = k;
    const double sign = Y[big * count + b] < 0.0 ? -1.0 : 1.0;
    double* dst = out + b * n;
    for (int64_t k = 0; k < n; ++k) dst[k] = sign * Y[k * count + b];
  }
}

}  // namespace

double dot64(const double* x, const double* y, int64_t len) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t k = 0;
  for (; k + 4 <= len; k += 4) {
    s0 += x[k] * y[k];
    s1 += x[k + 1] * y[k + 1];
    s2 += x[k + 2] * y[k + 2];
    s3 += x[k + 3] * y[k + 3];
  }
  double s = (s0 + s1) + (s2 + s3);
  for (; k < len; ++k) s += x[k] * y[k];
  return s;
}

double lower_triangle_max_abs(const std::vector<double>& a, int64_t n, const char* who) {
  double amax = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      const double v = a[i * n + j];
      BL_CHECK(std::isfinite(v), who, ": the matrix holds a non-finite entry (", v, " at [", i, ", ", j,
               "]); the eigen-decomposition needs finite values");
      amax = std::max(amax, std::fabs(v));
    }
  return amax;
}

SymmetricEigen64 symmetric_eigen64(const std::vector<double>& a, int64_t n, int64_t n_vectors, const char* who) {
  BL_CHECK(n >= 0 && static_cast<int64_t>(a.size()) == n * n, who, ": expected a ", n, " x ", n,
           " matrix, got ", a.size(), " entries");
  if (n_vectors < 0 || n_vectors > n) n_vectors = n;
  const double amax = lower_triangle_max_abs(a, n, who);
  SymmetricEigen64 out;
  out.values.assign(static_cast<size_t>(n), 0.0);
  out.vectors.assign(static_cast<size_t>(n_vectors * n), 0.0);
  if (n == 0) return out;
  int shift = 0;
  if (amax > 0.0) std::frexp(amax, &shift);  // amax = m 2^shift, m in [0.5, 1): exact
  std::vector<double> A(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) A[i * n + j] = std::ldexp(a[i * n + j], -shift);
  std::vector<double> d(static_cast<size_t>(n)), e(static_cast<size_t>(n));
  const std::vector<double> h = tridiagonalize(A, n, d, e);
  Rotations rot;
  tridiagonal_ql(d, e, rot, n, who);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return d[x] > d[y]; });
  for (int64_t t = 0; t < n; ++t) {
    out.values[t] = std::ldexp(d[order[t]], shift);
    BL_CHECK(std::isfinite(out.values[t]), who, ": eigenvalue ", t, " overflows binary64");
  }
  const int64_t tasks = (n_vectors + kLanes - 1) / kLanes;  // from the problem size alone
  default_pool().parallel_for(tasks, [&](int64_t task) {
    const int64_t first = task * kLanes, count = std::min(kLanes, n_vectors - first);
    back_transform(A, h, rot, order, n, first, count, &out.vectors[first * n]);
  });
  return out;
}

}  // namespace bl::ml
