// The CUDA exact-integer GEMM (src/kernels/cuda/exact_gemm.cu, profile bitlearn.exact_gemm.v1)
// against the scalar reference (src/kernels/exact_gemm.h) by memcmp: the conformance and special
// shapes, rows with a wide dynamic range, a shared B, under both output tiles, the int8 residue
// products and the default choice; the residue basis at its largest sums (K up to its limit, every
// entry near the top of its row) and its sabotage arm (one modulus short); the Tensor ops on a CUDA device under the exact profile; the CPU and CUDA bits of one
// product side by side.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/ops_matmul.h"
#include "bitlearn/tensor.h"
#include "conformance/harness.h"
#include "conformance/matmul_cases.h"
#include "conformance/matmul_cuda_util.cuh"
#include "kernels/exact_gemm.h"
#include "kernels/launch.h"

namespace {

using bl::conformance::bits_equal;
using bl::conformance::DeviceFloats;
using bl::conformance::have_cuda_device;
using bl::conformance::MatmulCase;
using bl::conformance::MatmulProblem;

void widen(std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (std::isfinite(v[i])) v[i] = std::ldexp(v[i], int(i * 7919 % 121) - 60);
}

std::vector<float> run_cuda(const MatmulProblem& p, const bl::LaunchConfig& config) {
  DeviceFloats a(p.a), b(p.b), c(p.c_init);
  bl::exact_matmul_cuda(p.args, a.ptr, b.ptr, c.ptr, config);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return c.download(p.c_init.size());
}

std::vector<float> run_reference(const MatmulProblem& p) {
  std::vector<float> c = p.c_init;
  bl::exact_matmul_reference(p.args, p.a.data(), p.b.data(), c.data());
  return c;
}

TEST(ExactGemmCuda, MatchesReferenceUnderEveryTile) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  std::vector<MatmulCase> cases = bl::conformance::matmul_conformance_cases();
  for (const MatmulCase& c : bl::conformance::matmul_special_cases()) cases.push_back(c);
  cases.push_back(MatmulCase{1, 70, 130, 1000, false, true});
  const bl::LaunchConfig configs[] = {{256, 0, 0},
                                      {256, 0, bl::kExactGemmTile32},
                                      {256, 0, bl::kExactGemmTile64},
                                      {256, 0, bl::kExactGemmResidues}};
  uint64_t seed = 1;
  for (size_t i = 0; i < cases.size() + 2; ++i) {
    MatmulProblem p;
    if (i < cases.size()) {
      p = bl::conformance::make_matmul_problem(cases[i], seed++);
    } else if (i == cases.size()) {  // wide dynamic range inside rows
      p = bl::conformance::make_matmul_problem(MatmulCase{1, 23, 29, 777, false, true}, seed++);
      widen(p.a);
      widen(p.b);
      p.name += " wide";
    } else {  // B shared by the batch
      p = bl::conformance::make_matmul_problem(MatmulCase{3, 9, 70, 40, true, false}, seed++);
      p.args.stride_b = 0;
      p.name += " shared B";
    }
    const std::vector<float> ref = run_reference(p);
    for (const bl::LaunchConfig& cfg : configs)
      EXPECT_TRUE(bits_equal(ref, run_cuda(p, cfg), "variant " + std::to_string(cfg.variant) + " " + p.name));
  }
}

// Entries of one sign just below a power of two: every X is 2^28 - 16 or so, so |T| comes within a
// factor of 2 of K 2^56, the bound the residue basis is sized for.
MatmulProblem largest_sums(int64_t m, int64_t n, int64_t k, uint64_t seed) {
  MatmulProblem p = bl::conformance::make_matmul_problem(MatmulCase{1, m, n, k, false, true}, seed);
  for (size_t i = 0; i < p.a.size(); ++i) p.a[i] = std::nextafter(1.0f, 0.0f) * ((i % 7 == 3) ? 0.5f : 1.0f);
  for (size_t i = 0; i < p.b.size(); ++i) p.b[i] = -std::nextafter(2.0f, 0.0f);
  p.name = "largest sums K=" + std::to_string(k);
  return p;
}

TEST(ExactGemmCuda, ResidueBasisHoldsTheLargestSumsUpToItsLimit) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const bl::LaunchConfig residues{256, 0, bl::kExactGemmResidues};
  uint64_t seed = 700;
  // 95 | 96 and 21835 | 21836: the K where the basis grows from 8 to 9 and from 9 to 10 moduli;
  // 131071: the residue path's limit; 131072: past it (the plain kernel runs under that variant).
  for (int64_t k : {int64_t(1), int64_t(95), int64_t(96), int64_t(4096), int64_t(21835), int64_t(21836),
                    int64_t(131071), int64_t(131072)}) {
    for (int kind = 0; kind < 2; ++kind) {
      MatmulProblem p = kind == 0 ? largest_sums(3, 5, k, seed++)
                                  : bl::conformance::make_matmul_problem(MatmulCase{1, 3, 5, k, false, true}, seed++);
      EXPECT_TRUE(bits_equal(run_reference(p), run_cuda(p, residues), p.name + " k=" + std::to_string(k)));
    }
  }
}

TEST(ExactGemmCuda, SabotageOneModulusShortIsCaught) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const MatmulProblem p = largest_sums(4, 6, 1000, 77);
  const std::vector<float> ref = run_reference(p);
  EXPECT_TRUE(bits_equal(ref, run_cuda(p, {256, 0, bl::kExactGemmResidues}), "full basis"));
  const std::vector<float> shorted = run_cuda(p, {256, 0, bl::kExactGemmResiduesShort});
  EXPECT_NE(0, std::memcmp(ref.data(), shorted.data(), ref.size() * sizeof(float)))
      << "a residue basis one modulus short must give other bits on the largest sums";
}

// A product large enough for the default choice to take the residue path, against the plain tile.
TEST(ExactGemmCuda, DefaultChoiceOnALargeProductEqualsThePlainKernel) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  MatmulProblem p = bl::conformance::make_matmul_problem(MatmulCase{2, 300, 260, 1100, true, false}, 91);
  widen(p.a);
  EXPECT_TRUE(bits_equal(run_cuda(p, {256, 0, bl::kExactGemmTile64}), run_cuda(p, {256, 0, 0}), "default vs tile64"));
  EXPECT_TRUE(bits_equal(run_cuda(p, {256, 0, bl::kExactGemmTile64}), run_cuda(p, {256, 0, bl::kExactGemmResidues}),
                         "residues vs tile64"));
}

TEST(ExactGemmCuda, TensorOpsUnderTheExactProfileEqualTheCpu) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t B = 2, M = 67, N = 45, K = 513;
  const std::vector<float> a = bl::conformance::generate_floats(B * M * K, 21, 1.0f, 97);
  const std::vector<float> b = bl::conformance::generate_floats(B * K * N, 22);
  bl::ScopedGemmProfile exact(bl::GemmProfile::exact);
  const bl::Tensor ta = bl::Tensor::from_vector(a, {B, M, K}), tb = bl::Tensor::from_vector(b, {B, K, N});
  const bl::Tensor cpu = bl::bmm(ta, tb);
  const bl::Tensor gpu = bl::bmm(ta.to(bl::Device::cuda(0)), tb.to(bl::Device::cuda(0))).to(bl::Device::cpu());
  EXPECT_TRUE(bits_equal(cpu.data<float>(), gpu.data<float>(), size_t(B * M * N), 4, "bmm exact cpu vs cuda"));
  const bl::Tensor gpu_t = bl::matmul(ta.slice(0, 1, 2).reshape({M, K}).to(bl::Device::cuda(0)),
                                     tb.slice(0, 1, 2).reshape({K, N}).to(bl::Device::cuda(0)))
                               .to(bl::Device::cpu());
  EXPECT_TRUE(bits_equal(cpu.data<float>() + M * N, gpu_t.data<float>(), size_t(M * N), 4, "matmul row 1"));
}

}  // namespace
