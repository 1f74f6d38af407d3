// registry.cpp: the support vector machines (see src/ml/registry.h).
#include "ml/registry.h"
#include "ml/svm/svm.h"

namespace bl::ml {

void add_svm_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"svc", make_svc});
  out.push_back({"svr", make_svr});
}

}  // namespace bl::ml
