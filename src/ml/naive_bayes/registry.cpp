// registry.cpp: the naive Bayes estimators (see src/ml/registry.h).
#include "ml/naive_bayes/naive_bayes.h"
#include "ml/registry.h"

namespace bl::ml {

void add_naive_bayes_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"bernoulli_nb", make_bernoulli_nb});
  out.push_back({"categorical_nb", make_categorical_nb});
  out.push_back({"complement_nb", make_complement_nb});
  out.push_back({"gaussian_nb", make_gaussian_nb});
  out.push_back({"multinomial_nb", make_multinomial_nb});
}

}  // namespace bl::ml
