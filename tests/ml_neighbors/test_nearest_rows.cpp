// test_nearest_rows.cpp: conformance of the fused CPU neighbors (nearest_rows_cpu) against the GEMM
// path (nearest_rows_gemm, the path used before the fused one and still used off the CPU): the neighbor
// indices and distances are compared by memcmp over many shapes (0, 1, primes, tile and chunk
// edges, two GEMM k-leaves), special values (duplicate rows and ties, zeros of both signs, values
// whose distances overflow to inf), threads 1, 2, 3, both variants and every ISA this CPU has.
// Sabotage arms: a selection with ties to the higher index, and distances that add the two norms
// first, must differ from the fused result on the same data.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "bitlearn/ops.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "ml/cluster/distances.h"
#include "ml/neighbors/nearest_rows.h"

namespace bl {
namespace {

using ml::NearestRowsVariant;
using ml::NeighborLists;

// Row-major [rows, d] data from Philox (seeded), with special rows mixed in by `style`:
// 0 plain normals; 1 few distinct values (many equal distances); 2 zeros, -0 and huge values.
std::vector<float> make_rows(int64_t rows, int64_t d, uint64_t seed, int style) {
  std::vector<float> v(static_cast<size_t>(rows * d));
  for (int64_t i = 0; i < rows * d; ++i) {
    float x = normal_element(seed, 1, static_cast<uint64_t>(i));
    if (style == 1) x = static_cast<float>(static_cast<int>(x * 2.0f)) * 0.5f;  // coarse grid: ties
    if (style == 2) {
      const int64_t kind = (i * 7 + static_cast<int64_t>(seed)) % 11;
      if (kind == 0) x = 0.0f;
      if (kind == 1) x = -0.0f;
      if (kind == 2) x = x * 3.0e19f;  // squares overflow: inf distances, inf - inf = NaN -> relu +0
    }
    v[static_cast<size_t>(i)] = x;
  }
  return v;
}

struct Case {
  int64_t m, n, d, k;
  int style;
};

std::string name_of(const Case& c) {
  return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " d=" + std::to_string(c.d) +
         " k=" + std::to_string(c.k) + " style=" + std::to_string(c.style);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int style = 0; style < 3; ++style) {
    out.push_back({1, 1, 1, 1, style});
    out.push_back({0, 5, 3, 2, style});
    out.push_back({5, 7, 3, 7, style});
    out.push_back({13, 17, 20, 5, style});
    out.push_back({49, 33, 2, 4, style});
    out.push_back({6, 97, 20, 1, style});
    out.push_back({12, 257, 5, 9, style});
    out.push_back({53, 1031, 20, 5, style});
    out.push_back({7, 3301, 20, 64, style});  // crosses a training chunk (1632 rows at d = 20)
    out.push_back({11, 300, 259, 6, style});   // two GEMM k-leaves
  }
  out.push_back({97, 4099, 20, 5, 0});
  out.push_back({3, 40, 20, 40, 1});  // k == n: every row, in order
  return out;
}

// Both layouts of one problem: tensors for the GEMM path, packed rows and norms for the fused path.
struct Problem {
  std::vector<float> q, t, qq, tt;
  Tensor Q, T;
  PackedMatrix packed;
};

Problem make_problem(const Case& c) {
  Problem p;
  p.q = make_rows(c.m, c.d, 11 + static_cast<uint64_t>(c.n), c.style);
  p.t = make_rows(c.n, c.d, 23 + static_cast<uint64_t>(c.m), c.style);
  if (c.style == 1 && c.m > 0 && c.n > 0)  // exact duplicates of a query among the training rows
    std::memcpy(p.t.data() + (c.n / 2) * c.d, p.q.data(), static_cast<size_t>(c.d) * sizeof(float));
  p.Q = Tensor::from_vector(p.q, {c.m, c.d});
  p.T = Tensor::from_vector(p.t, {c.n, c.d});
  p.qq = ml::row_sq_norms(p.Q).to_vector<float>();
  p.tt = ml::row_sq_norms(p.T).to_vector<float>();
  p.packed = matmul_pack_b_cpu(p.t.data(), c.d, c.n, c.d, true);
  return p;
}

bool same_lists(const NeighborLists& a, const NeighborLists& b) {
  return a.idx.size() == b.idx.size() && a.dist.size() == b.dist.size() &&
         (a.idx.empty() || std::memcmp(a.idx.data(), b.idx.data(), a.idx.size() * sizeof(int64_t)) == 0) &&
         (a.dist.empty() || std::memcmp(a.dist.data(), b.dist.data(), a.dist.size() * sizeof(float)) == 0);
}

std::vector<Isa> isas_here() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

TEST(NearestRowsConformance, FusedEqualsGemmPathByMemcmp) {
  const Isa before = active_isa();
  int compared = 0;
  for (const Case& c : cases()) {
    Problem p = make_problem(c);
    const NeighborLists want = ml::nearest_rows_gemm(p.Q, p.T, p.tt, c.k);
    for (Isa isa : isas_here()) {
      set_active_isa(isa);
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (NearestRowsVariant v : {NearestRowsVariant::by_isa, NearestRowsVariant::portable}) {
          const NeighborLists got = ml::nearest_rows_cpu(p.q.data(), c.m, p.qq.data(), p.packed, p.tt.data(),
                                                         c.k, v, &pool);
          EXPECT_TRUE(same_lists(got, want)) << name_of(c) << " isa=" << isa_name(isa) << " threads=" << threads
                                             << " variant=" << (v == NearestRowsVariant::portable ? "portable" : "by_isa");
          ++compared;
        }
      }
    }
    set_active_isa(before);
  }
  set_active_isa(before);
  EXPECT_GT(compared, 100);
}

// Distances are sorted ascending, equal distances by ascending index, and no other row is nearer.
TEST(NearestRowsConformance, ListsAreTheKSmallestWithTiesToTheLowerIndex) {
  const Case c{9, 211, 4, 7, 1};
  Problem p = make_problem(c);
  const NeighborLists got = ml::nearest_rows_cpu(p.q.data(), c.m, p.qq.data(), p.packed, p.tt.data(), c.k);
  const Tensor D = ml::sq_distances(p.Q, ml::row_sq_norms(p.Q), p.T, ml::row_sq_norms(p.T));
  const std::vector<float> dv = D.to_vector<float>();
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t r = 0; r < c.k; ++r) {
      const int64_t j = got.idx[i * c.k + r];
      EXPECT_EQ(bits_of(got.dist[i * c.k + r]), bits_of(dv[i * c.n + j])) << "query " << i << " rank " << r;
      if (r > 0) {
        const float prev = got.dist[i * c.k + r - 1], cur = got.dist[i * c.k + r];
        EXPECT_TRUE(prev < cur || (prev == cur && got.idx[i * c.k + r - 1] < j)) << "query " << i << " rank " << r;
      }
    }
    const float last = got.dist[i * c.k + c.k - 1];
    int64_t below = 0;
    for (int64_t j = 0; j < c.n; ++j) below += dv[i * c.n + j] < last ? 1 : 0;
    EXPECT_LT(below, c.k) << "query " << i;
  }
}

// A selection that differs from the rule (sabotage): ties to the higher index, or distances with
// the two norms added first (a different rounding; -2 * dot alone is exact, so mul + add would
// equal the fma). Each must give different lists on data with ties / generic data.
NeighborLists sabotaged(const Problem& p, const Case& c, bool ties_high, bool norms_first) {
  const Tensor xc = matmul(p.Q, p.T, false, true);
  const std::vector<float> dots = xc.to_vector<float>();
  NeighborLists out;
  out.k = c.k;
  out.idx.assign(static_cast<size_t>(c.m * c.k), 0);
  out.dist.assign(static_cast<size_t>(c.m * c.k), 0.0f);
  for (int64_t i = 0; i < c.m; ++i) {
    float* bd = out.dist.data() + i * c.k;
    int64_t* bi = out.idx.data() + i * c.k;
    int64_t filled = 0;
    for (int64_t j = 0; j < c.n; ++j) {
      const float dot = dots[i * c.n + j];
      float dd = norms_first ? fma(-2.0f, dot, add(p.qq[i], p.tt[j])) : add(fma(-2.0f, dot, p.qq[i]), p.tt[j]);
      dd = dd > 0.0f ? dd : 0.0f;
      const bool enters = filled < c.k || (ties_high ? dd <= bd[c.k - 1] : dd < bd[c.k - 1]);
      if (!enters) continue;
      int64_t pos = filled < c.k ? filled++ : c.k - 1;
      while (pos > 0 && (ties_high ? dd <= bd[pos - 1] : dd < bd[pos - 1])) {
        bd[pos] = bd[pos - 1];
        bi[pos] = bi[pos - 1];
        --pos;
      }
      bd[pos] = dd;
      bi[pos] = j;
    }
  }
  return out;
}

TEST(NearestRowsConformance, SabotageArmsAreCaught) {
  const Case ties{13, 517, 3, 6, 1};
  Problem pt = make_problem(ties);
  const NeighborLists fused_t = ml::nearest_rows_cpu(pt.q.data(), ties.m, pt.qq.data(), pt.packed, pt.tt.data(), ties.k);
  EXPECT_TRUE(same_lists(fused_t, sabotaged(pt, ties, false, false))) << "the unsabotaged copy must agree";
  EXPECT_FALSE(same_lists(fused_t, sabotaged(pt, ties, true, false))) << "ties to the higher index went unnoticed";

  const Case plain{29, 1031, 20, 5, 0};
  Problem pp = make_problem(plain);
  const NeighborLists fused_p = ml::nearest_rows_cpu(pp.q.data(), plain.m, pp.qq.data(), pp.packed, pp.tt.data(), plain.k);
  EXPECT_TRUE(same_lists(fused_p, sabotaged(pp, plain, false, false)));
  EXPECT_FALSE(same_lists(fused_p, sabotaged(pp, plain, false, true))) << "adding the norms first went unnoticed";
}

TEST(NearestRowsConformance, BadInputIsANamedError) {
  Problem p = make_problem({2, 5, 3, 2, 0});
  EXPECT_THROW(ml::nearest_rows_cpu(p.q.data(), 2, p.qq.data(), p.packed, p.tt.data(), 0), Error);
  EXPECT_THROW(ml::nearest_rows_cpu(p.q.data(), 2, p.qq.data(), p.packed, p.tt.data(), 6), Error);
  EXPECT_THROW(ml::nearest_rows_gemm(p.Q, p.T, p.tt, 6), Error);
}

}  // namespace
}  // namespace bl
