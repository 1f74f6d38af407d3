// column_transformer.h: the shape shared by the preprocessing transformers (src/ml/preprocessing/):
// fit reads X (and checks y when one is given, though y is not used), transform checks the fitted
// width; a pair hyper-parameter written as scikit-learn's tuple ("0,1", "(25, 75)", "[0, 1]").
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/tensor.h"
#include "ml/linear/common.h"

namespace bl::ml::prep {

class ColumnTransformer : public lin::ParamEstimator {
 public:
  using lin::ParamEstimator::ParamEstimator;

 protected:
  // check_X (finite unless allow_nan), and y, when defined, as a supervised estimator's y (one
  // entry per row): scikit-learn's transformers accept and ignore y. Sets d_.
  void check_fit_input(const Tensor& X, const Tensor& y, bool allow_nan = false);
  // Fitted, 2-d f32, finite, d_ columns.
  void check_transform_input(const Tensor& X) const;
  // A host row vector [d_] on X's device (broadcast over the rows).
  Tensor row_on(const std::vector<float>& v, const Tensor& X) const;
  // The f32 state field `key` with d_ values, each finite.
  std::vector<float> get_finite_row(const nlohmann::json& state, const std::string& key) const;
  // The same for a row transform divides by: every value also nonzero.
  std::vector<float> get_divisor_row(const nlohmann::json& state, const std::string& key) const;

  // A fitted per-column row in the model state (hex f32, d_ values); divisor: read back with
  // get_divisor_row, else get_finite_row.
  struct StateRow {
    const char* key;
    std::vector<float>* values;
    bool divisor = false;
  };
  // save_state's body: n_features and the rows.
  void save_rows(nlohmann::json& state, std::initializer_list<lin::F32Field> rows) const;
  // load_state's reads: n_features into d_, then the rows in the listed order.
  void load_rows(const nlohmann::json& state, std::initializer_list<StateRow> rows);

  int64_t d_ = 0;
};

// A transformer with one pair hyper-parameter `key` (lo, hi), validated by `check` (which throws a
// bl::Error naming the estimator and the parameter). get_params writes it as "lo,hi".
class PairParamTransformer : public ColumnTransformer {
 public:
  using PairCheck = std::function<void(const std::string& est, const std::string& text, double lo, double hi)>;
  PairParamTransformer(std::string name, std::vector<lin::ParamSpec> specs, std::string key, double lo, double hi,
                       PairCheck check)
      : ColumnTransformer(std::move(name), std::move(specs)), key_(std::move(key)), lo_(lo), hi_(hi),
        check_(std::move(check)) {}
  Params get_params() const override;
  void set_params(const Params& p) override;

 protected:
  std::string key_;
  double lo_, hi_;
  PairCheck check_;
};

// "lo,hi" with optional parentheses / brackets and spaces: two finite numbers, else a bl::Error
// naming est and key.
std::pair<double, double> parse_pair(const std::string& est, const std::string& key, const std::string& text);

}  // namespace bl::ml::prep
