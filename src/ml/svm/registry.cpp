// registry.cpp: the support vector machines (see src/ml/registry.h).
#include "ml/registry.h"
#include "ml/svm/linear_svm.h"
#include "ml/svm/svm.h"

namespace bl::ml {

void add_svm_estimators(std::vector<EstimatorEntry>& out) {
  out.push_back({"svc", make_svc});
  out.push_back({"svr", make_svr});
  out.push_back({"nu_svc", make_nu_svc});
  out.push_back({"nu_svr", make_nu_svr});
  out.push_back({"one_class_svm", make_one_class_svm});
  out.push_back({"linear_svc", make_linear_svc});
  out.push_back({"linear_svr", make_linear_svr});
}

}  // namespace bl::ml
