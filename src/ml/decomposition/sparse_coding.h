// sparse_coding.h: the binary64 host machinery shared by dictionary_learning (scikit-learn's
// DictionaryLearning) and sparse_pca (scikit-learn's SparsePCA): sparse coding of rows on a
// dictionary (lasso by coordinate descent, orthogonal matching pursuit, soft thresholding), the
// dictionary's block coordinate update, the initialization from the exact SVD and the alternating
// learning loop. Matrices are row-major binary64; only add, sub, mul, div and sqrt; every sum in
// ascending index order; rows are coded independently (the worker pool's tasks own whole rows), so
// each result is a pure function of its inputs on every machine and at every thread count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl::ml::lin {
class ParamSet;
}

namespace bl::ml::dec {

// How rows are coded. algorithm: "lasso_cd" (min_c 0.5 ||x - D^T c||^2 + alpha ||c||_1 by cyclic
// coordinate descent in index order, warm started from the given code; stops after a sweep whose
// largest change is below tol times the largest coefficient and whose duality gap is below
// tol ||x||^2, or after max_iter sweeps), "omp" (n_nonzero greedy steps: the atom of largest
// |D x - G c| (lowest index among ties), then least squares on the chosen atoms by an updated
// Cholesky factor; stops early when the correlation squared falls below 2^-52 or an atom is
// linearly dependent), "threshold" (c = sign(D x) max(|D x| - alpha, 0)), "lasso_lars" (the same
// lasso problem as lasso_cd by lars.cpp's lasso_lars path on G = D D^T and D x rounded to binary32,
// ending where max |correlation| reaches alpha or after max_iter steps; scikit-learn's LassoLars with
// alpha / n_features on n_features samples), "lars" (lars.cpp's lars path, n_nonzero steps). positive:
// codes clipped at 0 (lasso_cd and threshold).
struct SparseCodingOptions {
  std::string algorithm = "lasso_cd";
  double alpha = 1.0;
  int64_t n_nonzero = 1;
  int64_t max_iter = 1000;
  double tol = 1e-8;
  bool positive = false;
};

// Codes the n rows of x [n, d] on the dictionary dict [k, d]; code [n, k] is the warm start of
// lasso_cd on entry (any size other than n * k: zeros) and the result on return. Returns the number of
// rows whose lasso_cd stopped at max_iter.
int64_t sparse_encode(const std::vector<double>& x, int64_t n, int64_t d, const std::vector<double>& dict, int64_t k,
                      const SparseCodingOptions& options, std::vector<double>& code);

// 0.5 ||X - C D||_F^2 + alpha ||C||_1 for x [n, d], code [n, k], dict [k, d], each sum in row order.
double sparse_coding_cost(const std::vector<double>& x, int64_t n, int64_t d, const std::vector<double>& code,
                          const std::vector<double>& dict, int64_t k, double alpha);

// Exact thin SVD X = U S V^T of x [n, d] through the eigen-decomposition of the smaller Gram matrix
// (symmetric_eigen64): code = U[:, :k] [n, k], dict = S V^T [k, d] (rows past min(n, d) zero), each
// column of U with its entry of largest magnitude (lowest index among ties) positive (scikit-learn's
// svd_flip deciding on U).
void svd_code_and_dictionary(const std::vector<double>& x, int64_t n, int64_t d, int64_t k, std::vector<double>& code,
                             std::vector<double>& dict, const char* who);

struct DictionaryLearningSetup {
  double alpha = 1.0;
  int64_t max_iter = 1000;
  double tol = 1e-8;
  int64_t code_max_iter = 1000;
  bool positive_code = false, positive_dict = false;
  uint64_t seed = 0;
  std::string coding = "lasso_cd";  // the code step's algorithm: lasso_cd or lasso_lars
};

// Sets setup's alpha, max_iter, tol and seed from an estimator's alpha, max_iter, tol and random_state
// parameters.
void read_dictionary_learning_params(const lin::ParamSet& params, DictionaryLearningSetup& setup);

struct DictionaryLearningResult {
  std::vector<double> code, dict, errors;  // [n, k], [k, d], the cost after each iteration
  int64_t n_iter = 0;
  bool converged = false;
};

// scikit-learn's dictionary learning of x [n, d] with k atoms: start from svd_code_and_dictionary;
// each iteration codes the rows by setup.coding (lasso_cd: warm started, tol 1e-8, code_max_iter
// sweeps; lasso_lars: from zero, code_max_iter steps), updates
// the atoms once in index order (atom t += (B_t - D^T A_t) / A_tt with A = C^T C, B = X^T C; an atom
// with A_tt <= 1e-6 is replaced by a training row, chosen by uniform_element(seed, stream 1, event),
// plus 0.01 std(row) normal_element(seed, stream 2, event * d + j) noise, and its code column zeroed;
// clipped at 0 under positive_dict; divided by max(||atom||, 1)), then appends the cost; stops when
// the cost fell by less than tol times itself. Warns when max_iter ends it or a row's coding reached
// code_max_iter (`who` names the stage).
DictionaryLearningResult learn_dictionary(const std::vector<double>& x, int64_t n, int64_t d, int64_t k,
                                          const DictionaryLearningSetup& setup, const std::string& who);

}  // namespace bl::ml::dec
