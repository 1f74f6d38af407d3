// polynomial_features.cpp: polynomial_features (scikit-learn's PolynomialFeatures): every monomial of
// the columns of degree 0 (include_bias: a column of ones) to `degree`, in scikit-learn's order.
//
// Order: degree by degree; within degree k the monomials x_i1 x_i2 ... x_ik with i1 <= i2 <= ... <= ik
// (interaction_only: i1 < i2 < ... < ik) in lexicographic order of (i1, ..., ik). Numerics: the
// degree-k block is built from the degree-(k-1) block as scikit-learn's dense transform builds it:
// for each first index f, X[:, f] times the degree-(k-1) monomials whose first index is >= f (> f
// with interaction_only), so x_i1 (x_i2 (... x_ik)) is a chain of binary32 products from the right:
// elementwise contract multiplications (broadcast of one column) on X's device, joined by concat.
// fit learns the width of X only.
#include <vector>

#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/preprocessing/column_transformer.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using K = lin::ParamSpec::Kind;

constexpr int64_t kMaxOutputFeatures = int64_t{1} << 20;

// The monomial blocks of each degree as the offsets of the first index: offsets[f] is where the
// monomials starting with feature f begin inside the degree's block, offsets[d] its width.
std::vector<int64_t> next_offsets(const std::vector<int64_t>& prev, int64_t d, bool interaction_only) {
  std::vector<int64_t> out(static_cast<size_t>(d + 1), 0);
  int64_t width = 0;
  for (int64_t f = 0; f < d; ++f) {
    out[f] = width;
    const int64_t start = interaction_only ? prev[f + 1] : prev[f];
    width += prev[d] - start;
  }
  out[d] = width;
  return out;
}

class PolynomialFeatures final : public prep::ColumnTransformer {
 public:
  PolynomialFeatures()
      : prep::ColumnTransformer("polynomial_features", {{"degree", K::integer, "2", 0},
                                                        {"include_bias", K::boolean, "true"},
                                                        {"interaction_only", K::boolean, "false"}}) {}

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_fit_input(X, y);
    n_out_ = output_width(d_);
    fitted_ = true;
    return *this;
  }

  Tensor transform(const Tensor& X) const override {
    check_transform_input(X);
    const int64_t n = X.dim(0), degree = params_.integer("degree");
    const bool interaction_only = params_.boolean("interaction_only");
    std::vector<Tensor> parts;
    if (params_.boolean("include_bias")) parts.push_back(Tensor::full({n, 1}, 1.0, DType::f32, X.device()));
    if (degree >= 1) parts.push_back(X.contiguous());
    Tensor prev = X;
    std::vector<int64_t> off(static_cast<size_t>(d_ + 1));
    for (int64_t f = 0; f <= d_; ++f) off[f] = f;
    for (int64_t k = 2; k <= degree && off[d_] > 0; ++k) {
      std::vector<Tensor> blocks;
      for (int64_t f = 0; f < d_; ++f) {
        const int64_t start = interaction_only ? off[f + 1] : off[f];
        if (start == off[d_]) continue;
        blocks.push_back(bl::mul(prev.slice(1, start, off[d_]), X.slice(1, f, f + 1)));
      }
      off = next_offsets(off, d_, interaction_only);
      if (blocks.empty()) break;
      prev = blocks.size() == 1 ? blocks[0] : bl::concat(blocks, 1);
      parts.push_back(prev);
    }
    Tensor out = parts.size() == 1 ? parts[0].clone() : bl::concat(parts, 1);
    BL_CHECK(out.dim(1) == n_out_, name_, ": internal: ", out.dim(1), " output columns, expected ", n_out_);
    return out;
  }

  void save_state(nlohmann::json& state) const override {
    lin::put_ints(state, {{"n_features", d_}, {"n_output_features", n_out_}});
  }
  void load_state(const nlohmann::json& state) override {
    d_ = lin::get_int(state, "n_features", 1, name_);
    BL_CHECK(d_ <= kMaxOutputFeatures, name_, ": model state: n_features ", d_, " is more than ", kMaxOutputFeatures);
    n_out_ = lin::get_int(state, "n_output_features", 1, name_);
    const int64_t want = output_width(d_);
    BL_CHECK(n_out_ == want, name_, ": model state: n_output_features ", n_out_, " is not ", want,
             " (the count for n_features ", d_, " and the parameters)");
    fitted_ = true;
  }

 private:
  // The number of output columns for d input columns (refused above kMaxOutputFeatures, or 0).
  int64_t output_width(int64_t d) const {
    const int64_t degree = params_.integer("degree");
    const bool bias = params_.boolean("include_bias"), interaction_only = params_.boolean("interaction_only");
    BL_CHECK(degree > 0 || bias, name_, ": degree=0 with include_bias=false gives no output column");
    int64_t total = bias ? 1 : 0;
    if (degree >= 1) total += d;
    std::vector<int64_t> off(static_cast<size_t>(d + 1));
    for (int64_t f = 0; f <= d; ++f) off[f] = f;
    for (int64_t k = 2; k <= degree && off[d] > 0; ++k) {
      off = next_offsets(off, d, interaction_only);
      total += off[d];
      BL_CHECK(off[d] <= kMaxOutputFeatures && total <= kMaxOutputFeatures, name_, ": degree=", degree, " on ", d,
               " features gives more than ", kMaxOutputFeatures, " output columns");
    }
    return total;
  }

  int64_t n_out_ = 0;
};

}  // namespace

std::unique_ptr<Estimator> make_polynomial_features() { return std::make_unique<PolynomialFeatures>(); }

}  // namespace bl::ml
