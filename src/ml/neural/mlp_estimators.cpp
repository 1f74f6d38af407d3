// mlp_estimators.cpp: mlp_classifier and mlp_regressor, multi-layer perceptrons trained by
// mini-batch gradient descent on the neural-network library (bitlearn/nn.h).
//
// The network is nn::Linear layers (initialized from the Philox seed random_state, one stream per
// tensor, uniform in +-1/sqrt(fan_in)) with the chosen activation between them (relu, tanh,
// logistic = sigmoid, identity = none). The classifier's last layer has one output per class and
// its loss is the softmax cross-entropy (predict_proba: the softmax of the outputs); the
// regressor's last layer has one output and its loss is half the mean squared error.
//
// Each epoch visits every row once in batches of batch_size (auto: min(200, n)); the order is the
// permutation nn::shuffled_indices(n, random_state, epoch) when shuffle is true, else the rows'
// order; the last batch of an epoch holds the remainder. The L2 penalty is an added loss term,
// alpha / (2 m) times the sum of the squared weights (biases excluded) for a batch of m rows, which
// is scikit-learn's objective. The epoch's loss is the row-weighted mean of its batch losses
// (binary64 on the host in batch order); training stops after max_iter epochs, or once the loss has
// failed n_iter_no_change + 1 times in a row to fall below the best loss minus tol.
//
// Everything runs on X's device through the library's ops, so the weights do not depend on the
// device or the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "bitlearn/nn.h"
#include "bitlearn/ops.h"
#include "core/error.h"
#include "ml/linear/common.h"
#include "ml/registry.h"

namespace bl::ml {

namespace {

using lin::ParamSpec;
using K = ParamSpec::Kind;

constexpr const char* kHidden = "hidden_layer_sizes";
constexpr int64_t kMaxWidth = int64_t{1} << 20;

std::vector<ParamSpec> mlp_specs() {
  return {{"activation", K::choice, "relu", 0.0, {"identity", "logistic", "relu", "tanh"}},
          {"alpha", K::number, "0.0001", 0.0},
          {"batch_size", K::number_or_word, "auto", 1.0, {"auto"}},
          {"beta_1", K::number, "0.9", 0.0},
          {"beta_2", K::number, "0.999", 0.0},
          {"epsilon", K::number, "1e-08", 0.0, {}, true},
          {"learning_rate_init", K::number, "0.001", 0.0, {}, true},
          {"max_iter", K::integer, "200", 1.0},
          {"momentum", K::number, "0.9", 0.0},
          {"n_iter_no_change", K::integer, "10", 1.0},
          {"nesterovs_momentum", K::boolean, "true"},
          {"random_state", K::integer, "0", 0.0},
          {"shuffle", K::boolean, "true"},
          {"solver", K::choice, "adam", 0.0, {"adam", "sgd"}},
          {"tol", K::number, "0.0001", 0.0}};
}

// "100", "64,32", "(64, 32)", "[64, 32]" or "64;32": the hidden widths (at least one, each >= 1).
std::vector<int64_t> parse_hidden(const std::string& est, const std::string& text) {
  std::string body;
  for (char c : text)
    if (c != ' ' && c != '(' && c != ')' && c != '[' && c != ']') body += c == ';' ? ',' : c;
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find(',', start);
    if (end == std::string::npos) end = body.size();
    const std::string part = body.substr(start, end - start);
    if (!part.empty() || end != body.size() || out.empty()) {
      const int64_t w = param_int(est, kHidden, part);
      BL_CHECK(w >= 1 && w <= kMaxWidth, est, ": parameter ", kHidden, "=", text, ": each width must lie in [1, ",
               kMaxWidth, "], got ", w);
      out.push_back(w);
    }
    start = end + 1;
  }
  return out;
}

std::string hidden_text(const std::vector<int64_t>& h) {
  std::string s;
  for (size_t i = 0; i < h.size(); ++i) s += (i ? "," : "") + std::to_string(h[i]);
  return s;
}

class Mlp final : public lin::ParamEstimator {
 public:
  explicit Mlp(bool classifier)
      : lin::ParamEstimator(classifier ? "mlp_classifier" : "mlp_regressor", mlp_specs()),
        classifier_(classifier) {}

  Params get_params() const override {
    Params p = params_.all();
    p[kHidden] = hidden_text(hidden_);
    return p;
  }
  void set_params(const Params& p) override {
    Params rest = p;
    std::vector<int64_t> hidden = hidden_;
    if (auto it = rest.find(kHidden); it != rest.end()) {
      hidden = parse_hidden(name_, it->second);
      rest.erase(it);
    }
    params_.set(rest);
    hidden_ = hidden;
  }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    check_Xy(name_, X, y);
    const int64_t n = X.dim(0), d = X.dim(1);
    const Device dev = X.device();
    const std::string& solver = params_.text("solver");
    const float momentum = static_cast<float>(params_.number("momentum"));
    const float beta1 = static_cast<float>(params_.number("beta_1")), beta2 = static_cast<float>(params_.number("beta_2"));
    BL_CHECK(momentum <= 1.0f, name_, ": parameter momentum=", params_.number("momentum"), ": must lie in [0, 1]");
    BL_CHECK(beta1 < 1.0f && beta2 < 1.0f, name_, ": parameters beta_1 and beta_2 must lie in [0, 1), got ",
             params_.number("beta_1"), " and ", params_.number("beta_2"));
    int64_t batch = std::min<int64_t>(200, n);
    if (params_.text("batch_size") != "auto") {
      const double b = params_.number("batch_size");
      BL_CHECK(b == static_cast<double>(static_cast<int64_t>(b)), name_, ": parameter batch_size=",
               params_.text("batch_size"), ": expected auto or a whole number >= 1");
      batch = std::min<int64_t>(static_cast<int64_t>(b), n);  // larger than n: one batch, as scikit-learn
    }
    Tensor target;
    int64_t outputs = 1;
    if (classifier_) {
      lin::EncodedLabels e = lin::encode_labels(name_, y, 2);
      classes_ = e.classes;
      label_dtype_ = y.dtype();
      outputs = static_cast<int64_t>(classes_.size());
      target = Tensor::from_vector(e.index, {n}).to(dev);
    } else {
      target = Tensor::from_vector(lin::y_to_host(y), {n, 1}).to(dev);
    }
    d_ = d;
    outputs_ = outputs;
    fitted_hidden_ = hidden_;
    fitted_activation_ = params_.text("activation");
    build(static_cast<uint64_t>(params_.integer("random_state")));
    model_->to(dev);
    std::unique_ptr<nn::Optimizer> opt;
    const float lr = static_cast<float>(params_.number("learning_rate_init"));
    if (solver == "adam")
      opt = std::make_unique<nn::Adam>(model_->named_parameters(), lr, beta1, beta2,
                                       static_cast<float>(params_.number("epsilon")));
    else
      opt = std::make_unique<nn::SGD>(model_->named_parameters(), lr, momentum,
                                      params_.boolean("nesterovs_momentum") && momentum > 0.0f);
    train(X.contiguous(), target, batch, *opt);
    fitted_ = true;
    return *this;
  }

  Tensor predict(const Tensor& X) const override {
    Tensor out = forward(X);
    if (classifier_) return lin::labels_from_index(classes_, bl::argmax(out, 1), label_dtype_, X.device());
    return out.reshape({X.dim(0)});
  }
  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(classifier_, name_, ": predict_proba is not supported");
    return bl::softmax(forward(X), 1);
  }
  double score(const Tensor& X, const Tensor& y) const override {
    return classifier_ ? lin::accuracy_score(y, predict(X)) : lin::r2_score(y, predict(X));
  }

  void save_state(nlohmann::json& state) const override {
    BL_CHECK(fitted_, name_, ": not fitted");
    lin::put_ints(state, {{"n_features", d_}, {"n_outputs", outputs_}});
    state["hidden_layer_sizes"] = fitted_hidden_;
    state["activation"] = fitted_activation_;
    state["n_iter"] = n_iter_;
    lin::put_f32s(state, {{"loss", {loss_}}, {"loss_curve", loss_curve_}});
    if (classifier_) lin::put_labels(state, classes_, label_dtype_);
    std::vector<float> w;
    for (const auto& [key, v] : model_->named_parameters()) {
      std::vector<float> part = v.value().to(Device::cpu()).contiguous().to_vector<float>();
      w.insert(w.end(), part.begin(), part.end());
    }
    lin::put_f32(state, "weights", w);
  }

  void load_state(const nlohmann::json& state) override {
    try {
      d_ = lin::get_int(state, "n_features", 1, name_);
      outputs_ = lin::get_int(state, "n_outputs", 1, name_);
      fitted_hidden_ = state.at("hidden_layer_sizes").get<std::vector<int64_t>>();
      fitted_activation_ = state.at("activation").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(detail::concat(name_, ": model state is invalid (", e.what(), ")"));
    }
    BL_CHECK(!fitted_hidden_.empty(), name_, ": model state: hidden_layer_sizes is empty");
    for (int64_t h : fitted_hidden_)
      BL_CHECK(h >= 1 && h <= kMaxWidth, name_, ": model state: a hidden width of ", h, " is out of range");
    const std::vector<std::string> acts{"identity", "logistic", "relu", "tanh"};
    BL_CHECK(std::find(acts.begin(), acts.end(), fitted_activation_) != acts.end(), name_,
             ": model state: unknown activation '", fitted_activation_, "'");
    n_iter_ = lin::get_int(state, "n_iter", 0, name_);
    loss_ = lin::get_f32(state, "loss", 1, name_)[0];
    loss_curve_ = lin::get_f32(state, "loss_curve", n_iter_, name_);
    if (classifier_) {
      classes_ = lin::get_f32(state, "classes", outputs_, name_);
      label_dtype_ = lin::get_label_dtype(state);
      BL_CHECK(outputs_ >= 2, name_, ": model state: a classifier needs at least two classes");
    } else {
      BL_CHECK(outputs_ == 1, name_, ": model state: a regressor has one output, got ", outputs_);
    }
    build(0);
    int64_t total = 0;
    for (const auto& [key, v] : model_->named_parameters()) total += v.value().numel();
    std::vector<float> w = lin::get_f32(state, "weights", total, name_);
    int64_t at = 0;
    for (auto& [key, v] : model_->named_parameters()) {
      const int64_t k = v.value().numel();
      v.set_value(Tensor::from_vector(std::vector<float>(w.begin() + at, w.begin() + at + k), v.shape()));
      at += k;
    }
    fitted_ = true;
  }

 private:
  // The network of the fitted shape, freshly initialized from seed.
  void build(uint64_t seed) {
    nn::InitStream init(seed);
    model_ = std::make_shared<nn::Sequential>();
    weights_.clear();
    int64_t width = d_;
    for (int64_t h : fitted_hidden_) {
      auto layer = std::make_shared<nn::Linear>(width, h, init);
      weights_.push_back(layer->weight);
      model_->add(layer);
      if (fitted_activation_ == "relu") model_->add(std::make_shared<nn::ReLU>());
      else if (fitted_activation_ == "tanh") model_->add(std::make_shared<nn::Tanh>());
      else if (fitted_activation_ == "logistic") model_->add(std::make_shared<nn::Sigmoid>());
      width = h;
    }
    auto head = std::make_shared<nn::Linear>(width, outputs_, init);
    weights_.push_back(head->weight);
    model_->add(head);
  }

  // The loss of a batch of m rows: the data term plus alpha / (2 m) * sum of squared weights.
  ag::Var batch_loss(const ag::Var& out, const Tensor& target, int64_t m) const {
    ag::Var loss = classifier_ ? nn::cross_entropy(out, target) : ag::scale(nn::mse_loss(out, ag::Var(target)), 0.5f);
    const float alpha = static_cast<float>(params_.number("alpha"));
    if (alpha == 0.0f) return loss;
    ag::Var penalty;
    for (const ag::Var& w : weights_) {
      ag::Var s = ag::sum(ag::square(w));
      penalty = penalty.defined() ? ag::add(penalty, s) : s;
    }
    return ag::add(loss, ag::scale(penalty, 0.5f * alpha / static_cast<float>(m)));
  }

  void train(const Tensor& X, const Tensor& target, int64_t batch, nn::Optimizer& opt) {
    const int64_t n = X.dim(0);
    const uint64_t seed = static_cast<uint64_t>(params_.integer("random_state"));
    const bool shuffle = params_.boolean("shuffle");
    const int64_t max_iter = params_.integer("max_iter"), patience = params_.integer("n_iter_no_change");
    const double tol = params_.number("tol");
    double best = std::numeric_limits<double>::infinity();
    int64_t stale = 0;
    loss_curve_.clear();
    model_->train(true);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    for (int64_t epoch = 0; epoch < max_iter; ++epoch) {
      const std::vector<int64_t> perm = shuffle ? nn::shuffled_indices(n, seed, static_cast<uint64_t>(epoch)) : order;
      double total = 0.0;
      for (int64_t start = 0; start < n; start += batch) {
        const int64_t m = std::min(n, start + batch) - start;
        Tensor idx = Tensor::from_vector(std::vector<int64_t>(perm.begin() + start, perm.begin() + start + m), {m})
                         .to(X.device());
        Tensor xb = bl::index_select(X, 0, idx), yb = bl::index_select(target, 0, idx);
        opt.zero_grad();
        ag::Var loss = batch_loss(model_->forward(ag::Var(xb)), yb, m);
        const float value = static_cast<float>(loss.item());
        BL_CHECK(std::isfinite(value), name_, ": the training loss is ", std::isnan(value) ? "NaN" : "infinite",
                 " in epoch ", epoch + 1, " (the fit diverged: lower learning_rate_init, or scale X and y)");
        ag::backward(loss);
        opt.step();
        total += static_cast<double>(value) * static_cast<double>(m);
      }
      const double epoch_loss = total / static_cast<double>(n);
      loss_curve_.push_back(static_cast<float>(epoch_loss));
      n_iter_ = epoch + 1;
      loss_ = static_cast<float>(epoch_loss);
      stale = epoch_loss > best - tol ? stale + 1 : 0;
      best = std::min(best, epoch_loss);
      if (stale > patience) break;
    }
    model_->eval();
  }

  // The network's outputs [n, outputs] on X's device (evaluation mode, no tape).
  Tensor forward(const Tensor& X) const {
    BL_CHECK(fitted_, name_, ": not fitted (call fit first)");
    lin::check_predict_X(name_, X, d_);
    ag::NoGradGuard no_grad;
    model_->to(X.device());
    return model_->forward(ag::Var(X.contiguous())).value();
  }

  bool classifier_;
  std::vector<int64_t> hidden_{100};
  std::vector<int64_t> fitted_hidden_;
  std::string fitted_activation_;
  int64_t d_ = 0, outputs_ = 0, n_iter_ = 0;
  float loss_ = 0.0f;
  std::vector<float> loss_curve_;
  std::vector<float> classes_;
  DType label_dtype_ = DType::f32;
  std::shared_ptr<nn::Sequential> model_;
  std::vector<ag::Var> weights_;
};

}  // namespace

std::unique_ptr<Estimator> make_mlp_classifier() { return std::make_unique<Mlp>(true); }
std::unique_ptr<Estimator> make_mlp_regressor() { return std::make_unique<Mlp>(false); }

}  // namespace bl::ml
