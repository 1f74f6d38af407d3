// encoders.cpp: ordinal_encoder and one_hot_encoder (scikit-learn's OrdinalEncoder and OneHotEncoder
// for numeric categories). fit learns each column's categories: its distinct values sorted
// ascending (NaN refused). transform finds each value among its column's categories (exact binary32
// equality, binary search on the host; X's values are copied to the host and the output, exact small
// integers and 0 / 1, is placed back on X's device), so every device and thread count gives the same
// bytes.
//
//   ordinal_encoder(handle_unknown = error | use_encoded_value, unknown_value): the index of the
//     value in its column's categories; an unseen value is refused (error) or written as
//     unknown_value (an integer outside 0 .. n_categories - 1 of every column, or nan).
//   one_hot_encoder(handle_unknown = error | ignore, drop = none | first | if_binary): one 0 / 1
//     column per category, columns in input-column order then category order; drop=first leaves out
//     each column's first category, if_binary only for columns of exactly two categories; an unseen
//     value is refused (error) or gives an all-zero block (ignore).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "ml/preprocessing/category_table.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

// The shared part of both encoders: categories per column, their state, and the lookup.
class CategoryEncoder : public prep::ColumnTransformer {
 public:
  using prep::ColumnTransformer::ColumnTransformer;

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    Tensor h = X.to(Device::cpu()).contiguous();
    const float* p = h.data<float>();
    categories_ = prep::fit_categories(X.dim(0), d_, [&](int64_t i, int64_t j) { return p[i * d_ + j]; });
    after_fit();
    fitted_ = true;
    return *this;
  }

  void save_state(nlohmann::json& state) const override {
    state["n_features"] = d_;
    prep::put_categories(state, categories_);
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    categories_ = prep::get_categories(state, d_, name_);
    after_fit();
    fitted_ = true;
  }

 protected:
  // Checks the parameters against the categories (and derives what transform needs).
  virtual void after_fit() {}

  // X on the host after the transform checks.
  Tensor host_input(const Tensor& X) const {
    check_transform_input(X);
    return X.to(Device::cpu()).contiguous();
  }

  // The index of v among column j's categories, or -1 when unseen (refused when refuse_unknown).
  int64_t index_of(int64_t j, float v, bool refuse_unknown) const {
    const int64_t k = prep::category_index(categories_[j], v);
    BL_CHECK(k >= 0 || !refuse_unknown, name_, ": found the unknown category ", v, " in column ", j,
             " during transform (handle_unknown=error)");
    return k;
  }

  prep::CategoryTable categories_;
};

class OrdinalEncoder final : public CategoryEncoder {
 public:
  OrdinalEncoder()
      : CategoryEncoder("ordinal_encoder", {{"handle_unknown", K::choice, "error", 0, {"error", "use_encoded_value"}},
                                            {"unknown_value", K::number_or_word, "none", -1e308, {"none", "nan"}}}) {}

  Tensor transform(const Tensor& X) const override {
    const Tensor h = host_input(X);
    const float* p = h.data<float>();
    const int64_t n = X.dim(0);
    const bool refuse = params_.text("handle_unknown") == "error";
    std::vector<float> out(static_cast<size_t>(n * d_));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d_; ++j) {
        const int64_t k = index_of(j, p[i * d_ + j], refuse);
        out[i * d_ + j] = k < 0 ? unknown_ : static_cast<float>(k);
      }
    return Tensor::from_vector(out, {n, d_}, X.device());
  }

 protected:
  void after_fit() override {
    const std::string& u = params_.text("unknown_value");
    if (params_.text("handle_unknown") == "error") {
      BL_CHECK(u == "none", name_, ": unknown_value=", u, " is only used with handle_unknown=use_encoded_value");
      return;
    }
    BL_CHECK(u != "none", name_, ": handle_unknown=use_encoded_value needs unknown_value (an integer or nan)");
    if (u == "nan") {
      unknown_ = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    const double v = param_double(name_, "unknown_value", u);
    BL_CHECK(v == std::floor(v) && std::fabs(v) < 16777216.0, name_, ": unknown_value=", u,
             " must be an integer (of magnitude below 2^24) or nan");
    size_t most = 0;
    for (const auto& c : categories_) most = std::max(most, c.size());
    BL_CHECK(v < 0 || v >= static_cast<double>(most), name_, ": unknown_value=", u,
             " is already the code of a known category (codes 0 to ", most - 1, ")");
    unknown_ = static_cast<float>(v);
  }

 private:
  float unknown_ = 0.0f;
};

class OneHotEncoder final : public CategoryEncoder {
 public:
  OneHotEncoder()
      : CategoryEncoder("one_hot_encoder", {{"drop", K::choice, "none", 0, {"none", "first", "if_binary"}},
                                            {"handle_unknown", K::choice, "error", 0, {"error", "ignore"}}}) {}

  Tensor transform(const Tensor& X) const override {
    const Tensor h = host_input(X);
    const float* p = h.data<float>();
    const int64_t n = X.dim(0);
    const bool refuse = params_.text("handle_unknown") == "error";
    std::vector<float> out(static_cast<size_t>(n * width_), 0.0f);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d_; ++j) {
        // Unseen (-1) and a dropped first category (0 - 1) both leave the block zero.
        const int64_t k = index_of(j, p[i * d_ + j], refuse) - dropped_[j];
        if (k >= 0) out[i * width_ + offset_[j] + k] = 1.0f;
      }
    return Tensor::from_vector(out, {n, width_}, X.device());
  }

 protected:
  void after_fit() override {
    const std::string& drop = params_.text("drop");
    dropped_.assign(static_cast<size_t>(d_), 0);
    offset_.assign(static_cast<size_t>(d_), 0);
    width_ = 0;
    for (int64_t j = 0; j < d_; ++j) {
      const int64_t m = static_cast<int64_t>(categories_[j].size());
      if (drop == "first" || (drop == "if_binary" && m == 2)) dropped_[j] = 1;
      offset_[j] = width_;
      width_ += m - dropped_[j];
    }
    BL_CHECK(width_ > 0, name_, ": drop=", drop, " leaves no output column (every column has one category)");
  }

 private:
  std::vector<int64_t> dropped_, offset_;  // per input column: 1 where its first category is left out
  int64_t width_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_ordinal_encoder() { return std::make_unique<OrdinalEncoder>(); }
std::unique_ptr<Estimator> make_one_hot_encoder() { return std::make_unique<OneHotEncoder>(); }

}  // namespace bl::ml
