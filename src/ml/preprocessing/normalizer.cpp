// normalizer.cpp: normalizer (scikit-learn's Normalizer): each row divided by its norm (l1, l2 or
// max), rows of norm 0 left as they are. fit learns nothing but the width of X.
//
// Numerics: elementwise contract ops and contract row reductions on X's device (the same bits on
// every device and thread count). m_i = max_j |x_ij| (bl::amax; 1 where 0); norm = max: X / m.
// l1 and l2: Y = X / m first (so no sum of squares overflows binary32), then Y / ||Y_i|| with the
// row norm by bl::l1_norm / bl::l2_norm: two roundings where scikit-learn's float64 has one.
#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

// 1 where t is 0, else t.
Tensor zero_to_one(const Tensor& t) {
  const Tensor one = Tensor::scalar(1.0, DType::f32, t.device());
  return bl::where(bl::eq(t, Tensor::scalar(0.0, DType::f32, t.device())), one, t);
}

class Normalizer final : public prep::ColumnTransformer {
 public:
  Normalizer() : prep::ColumnTransformer("normalizer", {{"norm", K::choice, "l2", 0, {"l1", "l2", "max"}}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    const std::string& norm = params_.text("norm");
    Tensor Y = bl::div(X, zero_to_one(bl::amax(bl::abs(X), {1}, true)));
    if (norm == "max") return Y;
    Tensor r = norm == "l1" ? bl::l1_norm(Y, {1}, true) : bl::l2_norm(Y, {1}, true);
    return bl::div(Y, zero_to_one(r));
  }

  void save_state(nlohmann::json& state) const override { state["n_features"] = d_; }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    fitted_ = true;
  }
};

}  // namespace

std::unique_ptr<Estimator> make_normalizer() { return std::make_unique<Normalizer>(); }

}  // namespace bl::ml
