// tsne.h: the binary64 pieces of tsne (ml/manifold/tsne.cpp), open to its tests: the joint
// probabilities P of the rows and the Kullback-Leibler divergence of the Student-t similarities of an
// embedding with its gradient. Row-major [n, n] matrices; every row by one worker-pool task and the
// row sums folded in row order, so the bits do not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

namespace bl::ml::tsne {

// Conditional probabilities of each row from the squared distances sq [n, n] (each rounded to
// binary32 first): p_j|i = exp(-beta_i sq_ij) / sum_{l != i} exp(-beta_i sq_il), beta_i by the
// binary search for entropy ln(perplexity) (100 steps at most, tolerance 1e-5 on the entropy);
// then P = (C + C^T) / max(sum, eps) with every off-diagonal entry at least eps (binary64 machine
// epsilon) and a zero diagonal.
std::vector<double> joint_probabilities(const std::vector<double>& sq, int64_t n, double perplexity);

// The KL divergence sum_{i != j} p_ij ln(max(p_ij, eps) / q_ij) of the embedding y [n, k] against
// exaggeration * P (computed only when want_error; 0 otherwise), and its gradient into grad [n, k]:
// w_ij = (1 + |y_i - y_j|^2 / dof)^(-(dof + 1) / 2), dof = max(k - 1, 1), q_ij = max(w_ij / sum_{a != b}
// w_ab, eps), grad_i = 2 (dof + 1) / dof sum_j (p_ij - q_ij) w_ij (y_i - y_j). w [n, n] is scratch.
// The step is scikit-learn's: at dof = 1 (k <= 2) the divergence's exact gradient; for k >= 3 the
// derivative would have (1 + |y_i - y_j|^2 / dof)^-1 where this has w_ij, as scikit-learn's has.
double kl_gradient(const std::vector<double>& P, double exaggeration, const std::vector<double>& y, int64_t n,
                   int64_t k, bool want_error, std::vector<double>& grad, std::vector<double>& w);

}  // namespace bl::ml::tsne
