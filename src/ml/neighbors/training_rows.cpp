// training_rows.cpp: see training_rows.h.
#include "ml/neighbors/training_rows.h"

#include "bitlearn/ml/estimator.h"
#include "core/error.h"
#include "ml/linear/common.h"

namespace bl::ml {

void TrainingRows::fit(const std::string& est, const Tensor& X_in, const Tensor& y, Target t) {
  if (t == Target::none) {
    check_X(est, X_in);
  } else {
    check_Xy(est, X_in, y);
  }
  n = X_in.dim(0);
  d = X_in.dim(1);
  X = X_in.to(Device::cpu()).contiguous().to_vector<float>();
  target.clear();
  classes.clear();
  if (t == Target::classes) {
    lin::EncodedLabels e = lin::encode_labels(est, y, 1);
    classes = e.classes;
    target.assign(e.index.begin(), e.index.end());
    label_dtype = y.dtype();
  } else if (t == Target::values) {
    BL_CHECK(y.dtype() == DType::f32, est, ": y must be f32 for a regressor, got ", y.str());
    target = lin::y_to_host(y);
  }
}

void TrainingRows::save(nlohmann::json& state, Target t) const {
  lin::put_ints(state, {{"n_features", d}, {"n_samples", n}});
  lin::put_f32(state, "fit_X", X);
  if (t != Target::none) lin::put_f32(state, "fit_y", target);
  if (t == Target::classes) lin::put_labels(state, classes, label_dtype);
}

void TrainingRows::load(const nlohmann::json& state, const std::string& est, Target t, int64_t min_samples) {
  d = lin::get_int(state, "n_features", 1, est);
  n = lin::get_int(state, "n_samples", min_samples, est);
  BL_CHECK(d <= (int64_t{1} << 40) / n, est, ": model state: n_samples x n_features is too large");
  X = lin::get_f32(state, "fit_X", n * d, est);
  target.clear();
  classes.clear();
  if (t != Target::none) target = lin::get_f32(state, "fit_y", n, est);
  if (t == Target::classes) {
    classes = lin::get_f32(state, "classes", -1, est);
    BL_CHECK(!classes.empty(), est, ": model state: classes is empty");
    for (float v : target)
      BL_CHECK(v >= 0.0f && v < static_cast<float>(classes.size()), est, ": model state: class index ", v,
               " out of range");
    label_dtype = lin::get_label_dtype(state);
  }
}

}  // namespace bl::ml
