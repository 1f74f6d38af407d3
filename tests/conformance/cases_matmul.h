// cases_matmul.h: the case list of the contract GEMM (src/kernels/matmul.h) through matmul and
// bmm: empty and unit extents, inner sizes around the k leaf of 256, every transpose flag,
// transposed views used in place, broadcast batches, special values.
#pragma once

#include "conformance/case_util.h"
#include "bitlearn/ops_matmul.h"
#include "kernels/exact_gemm.h"
#include "kernels/matmul.h"

namespace bl::conformance {

struct MatmulProblem {
  int64_t batch_a, batch_b, m, k, n;
  bool trans_a, trans_b;
  bool view_a;  // pass a^T as a transposed view with trans_a false instead of the flag
};

// Operand shapes as stored: a is [K, M] with trans_a, else [M, K]; b is [N, K] with trans_b.
inline Shape stored_a(const MatmulProblem& p) {
  Shape s = (p.trans_a || p.view_a) ? Shape{p.k, p.m} : Shape{p.m, p.k};
  if (p.batch_a > 0) s.insert(s.begin(), p.batch_a);
  return s;
}
inline Shape stored_b(const MatmulProblem& p) {
  Shape s = p.trans_b ? Shape{p.n, p.k} : Shape{p.k, p.n};
  if (p.batch_b > 0) s.insert(s.begin(), p.batch_b);
  return s;
}

// The reference product (the exact-integer profile's with exact); with one_chain, the sabotage:
// one fma chain over all of k (no leaves).
inline Tensor matmul_expected(const MatmulProblem& p, const Tensor& a, const Tensor& b, bool one_chain,
                              bool exact = false) {
  std::vector<float> av = floats_of(a), bv = floats_of(b);
  MatmulArgs args;
  args.batch = p.batch_a > 0 ? std::max(p.batch_a, p.batch_b) : 1;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.trans_a = p.trans_a || p.view_a;
  args.trans_b = p.trans_b;
  args.lda = args.trans_a ? p.m : p.k;
  args.ldb = p.trans_b ? p.k : p.n;
  args.ldc = p.n;
  args.stride_a = p.batch_a > 1 ? p.m * p.k : 0;
  args.stride_b = p.batch_b > 1 ? p.k * p.n : 0;
  args.stride_c = p.m * p.n;
  std::vector<float> c(static_cast<size_t>(args.batch * p.m * p.n));
  if (exact)
    exact_matmul_reference(args, av.data(), bv.data(), c.data());
  else
    matmul_reference(args, av.data(), bv.data(), c.data());
  if (one_chain) {
    for (int64_t bi = 0; bi < args.batch; ++bi)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          float acc = 0.0f;
          for (int64_t q = 0; q < p.k; ++q)
            acc = fma(matmul_load_a(av.data() + bi * args.stride_a, args.lda, args.trans_a, i, q),
                      matmul_load_b(bv.data() + bi * args.stride_b, args.ldb, args.trans_b, q, j), acc);
          c[static_cast<size_t>((bi * p.m + i) * p.n + j)] = canonicalize(acc);
        }
  }
  Shape out = p.batch_a > 0 ? Shape{args.batch, p.m, p.n} : Shape{p.m, p.n};
  return f32_tensor(c, out);
}

// The problems of both GEMM profiles' case lists.
inline std::vector<MatmulProblem> matmul_problems() {
  return {
      {0, 0, 0, 5, 3, false, false, false},  {0, 0, 3, 0, 4, false, false, false},
      {0, 0, 1, 1, 1, false, false, false},  {0, 0, 7, 257, 5, false, false, false},
      {0, 0, 33, 31, 97, false, false, false}, {0, 0, 17, 513, 19, false, false, false},
      {0, 0, 17, 513, 19, true, false, false}, {0, 0, 17, 513, 19, false, true, false},
      {0, 0, 17, 513, 19, true, true, false},  {0, 0, 65, 255, 67, false, false, true},
      {0, 0, 1, 1021, 129, false, false, false}, {0, 0, 129, 64, 1, false, true, false},
      {3, 3, 9, 300, 11, false, false, false}, {4, 1, 5, 257, 6, false, true, false},
      {1, 4, 5, 31, 6, true, false, false},    {2, 2, 0, 7, 3, false, false, false}};
}

// The case label of problem p (variant 1: with special values).
inline std::string matmul_case_label(const MatmulProblem& p, int variant) {
  return "m=" + std::to_string(p.m) + " k=" + std::to_string(p.k) + " n=" + std::to_string(p.n) +
         (p.batch_a > 0 ? " batch=" + std::to_string(p.batch_a) + "x" + std::to_string(p.batch_b) : "") +
         (p.trans_a ? " trans_a" : "") + (p.trans_b ? " trans_b" : "") + (p.view_a ? " a^T view" : "") +
         (variant ? " specials" : "");
}

// The Tensor product of problem p on its inputs (matmul, bmm, or a transposed view).
inline Tensors matmul_run(const MatmulProblem& p, const Tensors& in) {
  if (p.view_a) return Tensors{matmul(in[0].transpose(0, 1), in[1], false, p.trans_b)};
  if (p.batch_a > 0) return Tensors{bmm(in[0], in[1], p.trans_a, p.trans_b)};
  return Tensors{matmul(in[0], in[1], p.trans_a, p.trans_b)};
}

inline Tensors matmul_inputs(const MatmulProblem& p, uint64_t seed, int variant) {
  const int every = variant ? 97 : 0;
  return Tensors{plain_floats(stored_a(p), seed, 1.0f, every), plain_floats(stored_b(p), seed + 1, 1.0f, every)};
}

inline std::vector<OpCase> matmul_cases() {
  std::vector<OpCase> out;
  uint64_t seed = 500;
  for (const MatmulProblem& p : matmul_problems()) {
    seed += 2;
    for (int variant = 0; variant < 2; ++variant) {
      OpCase c;
      c.op = p.batch_a > 0 ? "bmm" : "matmul";
      c.label = matmul_case_label(p, variant);
      c.inputs = [p, seed, variant] { return matmul_inputs(p, seed, variant); };
      c.reference = [p](const Tensors& in) { return Tensors{matmul_expected(p, in[0], in[1], false)}; };
      c.run = [p](const Tensors& in) { return matmul_run(p, in); };
      if (variant == 0 && p.k == 1021) {
        c.sabotage_what = "one fma chain over k instead of leaves of 256";
        c.sabotage = [p](const Tensors& in) { return Tensors{matmul_expected(p, in[0], in[1], true)}; };
      }
      out.push_back(c);
    }
  }
  return out;
}

// The exact-integer GEMM profile (kernels/exact_gemm.h) through the same Tensor ops, the profile
// selected for the call; sabotage: the default profile's reference must be rejected.
inline std::vector<OpCase> exact_gemm_cases() {
  std::vector<OpCase> out;
  uint64_t seed = 900;
  for (const MatmulProblem& p : matmul_problems()) {
    seed += 2;
    for (int variant = 0; variant < 2; ++variant) {
      OpCase c;
      c.op = p.batch_a > 0 ? "bmm (exact profile)" : "matmul (exact profile)";
      c.label = matmul_case_label(p, variant);
      c.inputs = [p, seed, variant] { return matmul_inputs(p, seed, variant); };
      c.reference = [p](const Tensors& in) { return Tensors{matmul_expected(p, in[0], in[1], false, true)}; };
      c.run = [p](const Tensors& in) {
        ScopedGemmProfile exact(GemmProfile::exact);
        return matmul_run(p, in);
      };
      if (variant == 0 && p.k == 1021) {
        c.sabotage_what = "the default profile's fixed-order fp32 product";
        c.sabotage = [p](const Tensors& in) { return Tensors{matmul_expected(p, in[0], in[1], false)}; };
      }
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace bl::conformance
