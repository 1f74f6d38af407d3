// lars.h: the least angle regression path of lars.cpp on a precomputed problem, open to the other
// estimators that solve lasso or forward-stagewise subproblems with it (dictionary learning's and the
// sparse coder's lars and lasso_lars codes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bl::ml {

// The lars (lasso = false) or lasso_lars (lasso = true) path of lars.cpp on the Gram matrix G [d, d]
// (row-major) and the correlations c = X^T y [d], no centering, in binary32 with the contract's
// operations in lars.cpp's fixed order. nf is the sample count dividing the correlations for the
// alpha stop (lasso: the path ends where max_j |c_j| / nf reaches alpha_target); max_steps is
// max_iter (lasso) or n_nonzero_coefs (lars). Returns the coefficients [d]; *n_steps (when given)
// gets the number of steps. who names the progress lines ("<who> path"); empty: none.
std::vector<float> lars_path_gram(const std::vector<float>& G, std::vector<float> c, int64_t d, float nf,
                                  float alpha_target, int64_t max_steps, bool lasso, const std::string& who,
                                  int64_t* n_steps);

}  // namespace bl::ml
