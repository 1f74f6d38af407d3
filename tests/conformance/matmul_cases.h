// matmul_cases.h: problem generation and the leaf-size sabotage variants shared by the CPU and
// CUDA GEMM conformance tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/harness.h"
#include "kernels/matmul.h"

namespace bl::conformance {

// One generated GEMM problem: padded pitches and batch strides, C pre-filled with a sentinel so
// that writes outside the M x N windows are caught by the same memcmp.
struct MatmulProblem {
  MatmulArgs args;
  std::vector<float> a, b, c_init;
  std::string name;
};

struct MatmulCase {
  int64_t batch, m, n, k;
  bool trans_a, trans_b;
  int64_t pad = 0;         // added to every leading dimension and batch stride
  int special_every = 0;   // 0: plain uniform data
  float scale = 1.0f;      // magnitude of the uniform data
};

inline constexpr uint32_t kMatmulSentinelBits = 0x7FBADBADu;  // a NaN no kernel may store

inline std::string matmul_case_name(const MatmulCase& c) {
  return "batch=" + std::to_string(c.batch) + " M=" + std::to_string(c.m) +
         " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k) +
         (c.trans_a ? " At" : " A") + (c.trans_b ? " Bt" : " B") + " pad=" + std::to_string(c.pad) +
         " special_every=" + std::to_string(c.special_every);
}

inline MatmulProblem make_matmul_problem(const MatmulCase& mc, uint64_t seed) {
  MatmulProblem p;
  p.name = matmul_case_name(mc);
  MatmulArgs& a = p.args;
  a = matmul_dense_args(mc.batch, mc.m, mc.n, mc.k, mc.trans_a, mc.trans_b);
  a.lda += mc.pad;
  a.ldb += mc.pad;
  a.ldc += mc.pad;
  const int64_t rows_a = mc.trans_a ? mc.k : mc.m;
  const int64_t rows_b = mc.trans_b ? mc.n : mc.k;
  a.stride_a = rows_a * a.lda + mc.pad;
  a.stride_b = rows_b * a.ldb + mc.pad;
  a.stride_c = mc.m * a.ldc + mc.pad;
  const int64_t batch = mc.batch > 0 ? mc.batch : 1;
  p.a = generate_floats(batch * a.stride_a + 1, seed, mc.scale, mc.special_every);
  p.b = generate_floats(batch * a.stride_b + 1, seed + 1, mc.scale, mc.special_every);
  p.c_init.assign(static_cast<size_t>(batch * a.stride_c + 1), float_of(kMatmulSentinelBits));
  return p;
}

// The shapes every backend is compared on (all four transpose combinations are added by the
// callers): zeros, ones, primes, K around the leaf size 256 and its multiples, odd M and N, blocks
// that cross the CPU task sizes (144 rows; 1024 columns, 256 for the AVX2 and AVX-512 variants).
inline std::vector<MatmulCase> matmul_conformance_cases() {
  const int64_t shapes[][4] = {
      {1, 0, 5, 7},    {1, 5, 0, 7},     {1, 5, 7, 0},     {0, 5, 7, 9},    {1, 1, 1, 1},
      {1, 1, 1, 256},  {1, 1, 1, 257},   {1, 3, 5, 255},   {1, 7, 17, 256}, {1, 13, 31, 257},
      {1, 6, 16, 513}, {1, 97, 33, 513}, {1, 31, 127, 1000}, {1, 150, 70, 300}, {1, 2, 1030, 20},
      {1, 200, 41, 769}, {3, 17, 19, 300}, {2, 65, 67, 129}};
  std::vector<MatmulCase> cases;
  int i = 0;
  for (const auto& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      MatmulCase c{s[0], s[1], s[2], s[3], (t & 1) != 0, (t & 2) != 0};
      c.pad = (i++ % 3 == 1) ? 3 : 0;
      cases.push_back(c);
    }
  }
  return cases;
}

// Special-value cases: NaN, +-inf, +-0, subnormals, huge values mixed in; tiny data whose products
// underflow into subnormals and signed zeros.
inline std::vector<MatmulCase> matmul_special_cases() {
  std::vector<MatmulCase> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    MatmulCase sparse{1, 37, 45, 600, ta, tb, 1, 211, 1.0f};
    MatmulCase dense{1, 19, 23, 70, ta, tb, 0, 5, 1.0f};
    MatmulCase tiny{1, 29, 33, 520, ta, tb, 0, 0, 1e-19f};
    MatmulCase tiny_special{2, 11, 35, 300, ta, tb, 2, 13, 1e-20f};
    // Products below half the smallest subnormal: every fma rounds to a signed zero, so the leaf
    // values and their fold exercise -0 + -0, -0 + +0 and the +0 start of each leaf.
    MatmulCase signed_zeros{1, 13, 21, 530, ta, tb, 0, 0, 1e-23f};
    cases.push_back(signed_zeros);
    cases.push_back(sparse);
    cases.push_back(dense);
    cases.push_back(tiny);
    cases.push_back(tiny_special);
  }
  return cases;
}

// Sabotage variants of the reference: the same schedule with another leaf size (leaf <= 0: no
// leaves, one sequential fma chain over all of k). The conformance comparison must reject them.
inline void matmul_reference_with_leaf(const MatmulArgs& args, const float* a, const float* b,
                                       float* c, int64_t leaf) {
  for (int64_t bi = 0; bi < args.batch; ++bi) {
    const float* ab = a + bi * args.stride_a;
    const float* bb = b + bi * args.stride_b;
    for (int64_t m = 0; m < args.m; ++m) {
      for (int64_t n = 0; n < args.n; ++n) {
        const int64_t step = leaf > 0 ? leaf : (args.k > 0 ? args.k : 1);
        float sum = 0.0f;
        for (int64_t k0 = 0; k0 < args.k; k0 += step) {
          const int64_t k_end = k0 + step < args.k ? k0 + step : args.k;
          float acc = 0.0f;
          for (int64_t k = k0; k < k_end; ++k)
            acc = fma(matmul_load_a(ab, args.lda, args.trans_a, m, k),
                      matmul_load_b(bb, args.ldb, args.trans_b, k, n), acc);
          sum = (k0 == 0) ? acc : add(sum, acc);
        }
        c[bi * args.stride_c + m * args.ldc + n] = canonicalize(sum);
      }
    }
  }
}

// The order in which a sabotage variant folds the leaf sums of one output (the contract folds left
// to right: c = leaf0, c = c + leaf1, ...).
enum class LeafFold { left_to_right, right_to_left, pairwise };

// Sabotage variants of the reference: every leaf sum exactly as the contract computes it, folded in
// `fold` order (pairwise: adjacent pairs, then pairs of pairs, an odd last one carried up).
// left_to_right reproduces the reference; the other two must be rejected by the conformance tests.
inline void matmul_reference_with_fold(const MatmulArgs& args, const float* a, const float* b,
                                       float* c, LeafFold fold) {
  const int64_t leaves = gemm_k_leaf_count(args.k);
  std::vector<float> sums(static_cast<size_t>(leaves > 0 ? leaves : 1));
  for (int64_t bi = 0; bi < args.batch; ++bi) {
    const float* ab = a + bi * args.stride_a;
    const float* bb = b + bi * args.stride_b;
    for (int64_t m = 0; m < args.m; ++m) {
      for (int64_t n = 0; n < args.n; ++n) {
        for (int64_t l = 0; l < leaves; ++l) {
          const int64_t k_end = (l + 1) * kGemmKLeaf < args.k ? (l + 1) * kGemmKLeaf : args.k;
          float acc = 0.0f;
          for (int64_t k = l * kGemmKLeaf; k < k_end; ++k)
            acc = fma(matmul_load_a(ab, args.lda, args.trans_a, m, k),
                      matmul_load_b(bb, args.ldb, args.trans_b, k, n), acc);
          sums[l] = acc;
        }
        float sum = 0.0f;
        if (leaves > 0 && fold == LeafFold::left_to_right) {
          sum = sums[0];
          for (int64_t l = 1; l < leaves; ++l) sum = add(sum, sums[l]);
        } else if (leaves > 0 && fold == LeafFold::right_to_left) {
          sum = sums[leaves - 1];
          for (int64_t l = leaves - 2; l >= 0; --l) sum = add(sum, sums[l]);
        } else if (leaves > 0) {
          std::vector<float> level(sums.begin(), sums.begin() + leaves);
          while (level.size() > 1) {
            std::vector<float> next;
            for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(add(level[i], level[i + 1]));
            if (level.size() % 2 == 1) next.push_back(level.back());
            level.swap(next);
          }
          sum = level[0];
        }
        c[bi * args.stride_c + m * args.ldc + n] = canonicalize(sum);
      }
    }
  }
}

// Problems that the CUDA GEMM computes leaf by leaf in parallel at variant 0 (batch 1, at least
// four leaves, one 64 x 64 tile, fewer tiles than any device has multiprocessors), on which the
// two sabotage folds differ from the contract's left-to-right fold.
inline std::vector<MatmulCase> matmul_leaf_parallel_cases() {
  std::vector<MatmulCase> cases;
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    cases.push_back({1, 40, 50, 1100, ta, tb, 0, 0, 1.0f});  // 5 leaves, the last one 76 long
    cases.push_back({1, 7, 61, 1024, ta, tb, 3, 0, 1.0f});   // exactly 4 full leaves
    cases.push_back({1, 33, 9, 2053, ta, tb, 1, 0, 1.0f});   // 9 leaves, the last one 5 long
  }
  return cases;
}

}  // namespace bl::conformance
