// ml/linear.h: the linear estimators of bitlearn (created by name through bl::ml::make_estimator).
//
//   name                 parameters (defaults)                                      solver
//   linear_regression    fit_intercept=true                                         min-norm least squares (Jacobi eigen)
//   ridge                alpha=1, fit_intercept=true                                 Cholesky of the Gram matrix
//   lasso                alpha=1, fit_intercept=true, max_iter=1000, tol=1e-4        coordinate descent, index order
//   elastic_net          + l1_ratio=0.5                                              coordinate descent, index order
//   logistic_regression  C=1, penalty=l2|l1|none, fit_intercept=true, max_iter=100,  L-BFGS (m=10, Armijo backtracking)
//                        tol=1e-4                                                    for l2/none; FISTA for l1
//   bayesian_ridge       alpha_1=alpha_2=lambda_1=lambda_2=1e-6, fit_intercept=true, evidence maximization (Jacobi eigen)
//                        max_iter=300, tol=1e-3
//   isotonic_regression  increasing=true (X has one column)                          pool adjacent violators
//   sgd_classifier       loss=hinge|log_loss|modified_huber|perceptron|squared_error|  plain SGD, Philox shuffle per
//                        huber, penalty=l2|l1|elasticnet|none, alpha=1e-4,           (random_state, class, epoch);
//                        l1_ratio=0.15, learning_rate=optimal|invscaling|constant,   one-vs-all for 3+ classes
//                        eta0=0.01, power_t=0.5, max_iter=1000, tol=1e-3 (<0: off),
//                        n_iter_no_change=5, shuffle=true, random_state=0, epsilon=0.1
//   sgd_regressor        as sgd_classifier; loss=squared_error|huber|epsilon_insensitive|
//                        squared_epsilon_insensitive, learning_rate=invscaling, power_t=0.25
//   huber_regressor      epsilon=1.35, alpha=1e-4, max_iter=100, tol=1e-5             L-BFGS over (w, b, scale)
//   quantile_regressor   quantile=0.5, alpha=1 (L1), max_iter=100, tol=1e-6           interior point (Frisch-Newton)
//   poisson_regressor    alpha=1, max_iter=100, tol=1e-4 (log link)                   L-BFGS
//   gamma_regressor      as poisson_regressor                                        L-BFGS
//   tweedie_regressor    + power=0 (0 or >= 1), link=auto|log|identity                 L-BFGS
//   ard_regression       alpha_1=alpha_2=lambda_1=lambda_2=1e-6, threshold_lambda=1e4, evidence maximization (Cholesky)
//                        max_iter=300, tol=1e-3
//   lars                 n_nonzero_coefs=500                                         least angle regression (Gram)
//   lasso_lars           alpha=1, max_iter=500                                       LARS with the lasso modification
// (every one also takes fit_intercept=true)
//
// Objectives follow scikit-learn (docs/ml.md): ridge ||y - Xw||^2 + alpha ||w||^2; lasso / elastic
// net 1/(2n) ||y - Xw||^2 + alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio)/2 ||w||^2; logistic
// mean log-loss + ||w||^2 / (2 C n) (l2) or ||w||_1 / (C n) (l1); binary problems use one sigmoid
// output, three or more classes a softmax. Every solver works in standardized coordinates with
// contract GEMMs for the data-sized work, so fits on CPU (any threads) and CUDA give the same bits.
#pragma once

#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

// The fitted coefficients of a linear estimator: coef [outputs, n_features] row-major and
// intercept [outputs] (outputs = 1 for regressors and binary classifiers, else n_classes).
struct LinearView {
  std::vector<float> coef;
  std::vector<float> intercept;
  int64_t outputs = 1;
};

// The coefficients of a fitted linear estimator (every one above except isotonic_regression);
// throws bl::Error for other estimators or before fit.
LinearView linear_view(const Estimator& est);

}  // namespace bl::ml
