// lightgbm_model.cpp: LightGBM text-model import (lightgbm_model.h) and the "lightgbm_model"
// estimator: fit(X) imports params["model_file"] and checks X's feature count; the saved bitlearn
// model file holds the imported model's text, parsed and validated again on load.
#include "ml/boosting/lightgbm_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/host_math.h"
#include "ml/registry.h"
#include "ml/tree/tree_model.h"

namespace bl::ml {

namespace {

// LightGBM's kZeroThreshold, an f32 constant widened to binary64.
const double kZero = static_cast<double>(1e-35f);

bool is_zero(double v) { return v >= -kZero && v <= kZero; }

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    while (pos < s.size() && s[pos] == ' ') ++pos;
    if (pos >= s.size()) break;
    size_t end = s.find(' ', pos);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

int64_t parse_int(const std::string& s, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  BL_CHECK(!s.empty() && end == s.c_str() + s.size() && errno != ERANGE, what, " = '", s, "' is not an integer");
  return v;
}

double parse_double(const std::string& s, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  BL_CHECK(!s.empty() && end == s.c_str() + s.size() && !std::isnan(v), what, " = '", s, "' is not a number");
  return v;
}

// A block of key=value lines (the header or one tree).
using Block = std::map<std::string, std::string>;

const std::string& need(const Block& b, const std::string& key, const std::string& where) {
  auto it = b.find(key);
  BL_CHECK(it != b.end(), where, " has no field ", key);
  return it->second;
}

std::vector<int64_t> int_array(const Block& b, const std::string& key, int64_t count, int64_t lo, int64_t hi,
                               const std::string& where) {
  const auto words = split_words(need(b, key, where));
  BL_CHECK(static_cast<int64_t>(words.size()) == count, where, ".", key, " holds ", words.size(),
           " values, expected ", count);
  std::vector<int64_t> out;
  out.reserve(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string what = where + "." + key + "[" + std::to_string(i) + "]";
    const int64_t v = parse_int(words[i], what);
    BL_CHECK(v >= lo && v <= hi, what, " = ", v, " is out of range [", lo, ", ", hi, "]");
    out.push_back(v);
  }
  return out;
}

std::vector<double> double_array(const Block& b, const std::string& key, int64_t count, const std::string& where) {
  const auto words = split_words(need(b, key, where));
  BL_CHECK(static_cast<int64_t>(words.size()) == count, where, ".", key, " holds ", words.size(),
           " values, expected ", count);
  std::vector<double> out;
  out.reserve(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    out.push_back(parse_double(words[i], where + "." + key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

LgbTree parse_tree(const Block& b, int64_t n_features, const std::string& where) {
  LgbTree t;
  const int64_t leaves = parse_int(need(b, "num_leaves", where), where + ".num_leaves");
  BL_CHECK(leaves >= 1 && leaves <= INT32_MAX, where, ".num_leaves = ", leaves, " must lie in [1, 2^31 - 1]");
  const int64_t num_cat = parse_int(need(b, "num_cat", where), where + ".num_cat");
  BL_CHECK(num_cat >= 0 && num_cat < leaves, where, ".num_cat = ", num_cat, " must lie in [0, num_leaves)");
  if (b.count("is_linear")) {
    BL_CHECK(parse_int(b.at("is_linear"), where + ".is_linear") == 0, where,
             ".is_linear = 1: linear trees (linear_tree=true) are not supported");
  }
  t.leaf_value = double_array(b, "leaf_value", leaves, where);
  for (size_t i = 0; i < t.leaf_value.size(); ++i) {
    BL_CHECK(std::isfinite(t.leaf_value[i]), where, ".leaf_value[", i, "] is not finite");
  }
  if (b.count("leaf_count")) t.leaf_count = int_array(b, "leaf_count", leaves, 0, INT32_MAX, where);
  if (leaves == 1) return t;
  const int64_t internal = leaves - 1;
  for (int64_t f : int_array(b, "split_feature", internal, 0, n_features - 1, where)) {
    t.split_feature.push_back(static_cast<int32_t>(f));
  }
  t.threshold = double_array(b, "threshold", internal, where);
  if (b.count("decision_type")) {
    for (int64_t v : int_array(b, "decision_type", internal, 0, 127, where)) {
      t.decision_type.push_back(static_cast<uint8_t>(v));
    }
  } else {
    t.decision_type.assign(static_cast<size_t>(internal), 0);
  }
  const auto left = int_array(b, "left_child", internal, -leaves, internal - 1, where);
  const auto right = int_array(b, "right_child", internal, -leaves, internal - 1, where);
  if (b.count("internal_count")) t.internal_count = int_array(b, "internal_count", internal, 0, INT32_MAX, where);
  if (num_cat > 0) {
    const auto bounds = int_array(b, "cat_boundaries", num_cat + 1, 0, INT32_MAX, where);
    BL_CHECK(bounds[0] == 0, where, ".cat_boundaries must start at 0");
    for (int64_t i = 0; i < num_cat; ++i) {
      BL_CHECK(bounds[i + 1] >= bounds[i], where, ".cat_boundaries must not decrease");
    }
    const auto words = int_array(b, "cat_threshold", bounds.back(), 0, UINT32_MAX, where);
    for (int64_t v : bounds) t.cat_boundaries.push_back(static_cast<int32_t>(v));
    for (int64_t v : words) t.cat_threshold.push_back(static_cast<uint32_t>(v));
  }
  // Structure: every internal node but the root and every leaf is the child of exactly one node,
  // and an internal child comes after its parent (LightGBM numbers splits in the order they are
  // made), which rules out cycles: the nodes form one tree rooted at node 0.
  std::vector<uint8_t> seen_node(static_cast<size_t>(internal), 0), seen_leaf(static_cast<size_t>(leaves), 0);
  for (int64_t i = 0; i < internal; ++i) {
    const uint8_t dt = t.decision_type[i];
    BL_CHECK(((dt >> 2) & 3) != 3, where, ".decision_type[", i, "] = ", int(dt), " has an unknown missing type");
    if (dt & 1) {
      const double c = t.threshold[i];
      BL_CHECK(num_cat > 0 && c >= 0.0 && c < static_cast<double>(num_cat) && c == std::floor(c), where,
               ".threshold[", i, "] = ", c, " is not a category-set index below num_cat = ", num_cat);
    }
    for (int64_t child : {left[i], right[i]}) {
      if (child >= 0) {
        BL_CHECK(child > i, where, ": node ", i, " has child node ", child, " that does not come after it");
        BL_CHECK(!seen_node[child], where, ": node ", child, " has two parents");
        seen_node[child] = 1;
      } else {
        const int64_t leaf = ~child;
        BL_CHECK(!seen_leaf[leaf], where, ": leaf ", leaf, " has two parents");
        seen_leaf[leaf] = 1;
      }
    }
    t.left.push_back(static_cast<int32_t>(left[i]));
    t.right.push_back(static_cast<int32_t>(right[i]));
  }
  BL_CHECK(!seen_node[0], where, ": the root is the child of a node");
  for (int64_t i = 1; i < internal; ++i) BL_CHECK(seen_node[i], where, ": node ", i, " is not reachable from the root");
  for (int64_t i = 0; i < leaves; ++i) BL_CHECK(seen_leaf[i], where, ": leaf ", i, " is not reachable from the root");
  return t;
}

const std::vector<std::string>& identity_objectives() {
  static const std::vector<std::string> names = {"regression", "regression_l1", "huber",     "fair",
                                                 "quantile",   "mape",          "lambdarank", "rank_xendcg",
                                                 "none",       "custom"};
  return names;
}

bool is_one_of(const std::string& s, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

const std::vector<std::string>& log_link_objectives() {
  static const std::vector<std::string> names = {"poisson", "gamma", "tweedie"};
  return names;
}

double sigmoid64(double s, double x) { return 1.0 / (1.0 + exp64(-s * x)); }

}  // namespace

bool LgbTree::goes_left(int32_t node, const double* row) const {
  const uint8_t dt = decision_type[node];
  const int missing = (dt >> 2) & 3;
  double v = row[split_feature[node]];
  if (dt & 1) {  // categorical
    // static_cast<int> of a NaN or of a value outside int's range is INT_MIN on x86: right.
    if (std::isnan(v) || v >= 2147483648.0 || v <= -2147483649.0) return false;
    const int64_t c = static_cast<int64_t>(v);  // truncation toward zero
    if (c < 0) return false;
    const int32_t set = static_cast<int32_t>(threshold[node]);
    const int64_t words = cat_boundaries[set + 1] - cat_boundaries[set];
    const int64_t word = c / 32;
    if (word >= words) return false;
    return ((cat_threshold[cat_boundaries[set] + word] >> (c % 32)) & 1u) != 0;
  }
  if (std::isnan(v) && missing != 2) v = 0.0;
  if ((missing == 1 && is_zero(v)) || (missing == 2 && std::isnan(v))) return (dt & 2) != 0;
  return v <= threshold[node];
}

int32_t LgbTree::leaf_of(const double* row) const {
  if (n_leaves() == 1) return 0;
  int32_t node = 0;
  while (node >= 0) node = goes_left(node, row) ? left[node] : right[node];
  return ~node;
}

LightgbmImport import_lightgbm_text(const std::string& text, const std::string& source) {
  // Lines without their "\r\n" / "\n".
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    pos = end + 1;
  }
  BL_CHECK(!lines.empty() && lines[0] == "tree", source, ": not a LightGBM text model (the first line is not 'tree')");
  size_t i = 1;
  auto read_block = [&](Block& b) {
    for (; i < lines.size() && !lines[i].empty(); ++i) {
      const std::string& l = lines[i];
      if (l.rfind("Tree=", 0) == 0 || l == "end of trees") break;
      const size_t eq = l.find('=');
      if (l == "average_output") {  // a bare flag of the header (random-forest models)
        b[l] = "";
        continue;
      }
      BL_CHECK(eq != std::string::npos && eq > 0, source, ": line ", i + 1, " is not key=value");
      BL_CHECK(b.emplace(l.substr(0, eq), l.substr(eq + 1)).second, source, ": line ", i + 1, ": field ",
               l.substr(0, eq), " appears twice in its block");
    }
  };
  BL_CHECK(std::find(lines.begin(), lines.end(), "end of trees") != lines.end(), source,
           ": truncated LightGBM model (no 'end of trees' line)");
  Block header;
  read_block(header);
  const std::string h = source + ": header";
  const std::string version = need(header, "version", h);
  BL_CHECK(version == "v2" || version == "v3" || version == "v4", source, ": header version = '", version,
           "': this build reads LightGBM text models of versions v2 to v4");
  LightgbmImport out;
  const int64_t num_class = parse_int(need(header, "num_class", h), h + ".num_class");
  out.n_groups = parse_int(need(header, "num_tree_per_iteration", h), h + ".num_tree_per_iteration");
  const int64_t max_feature = parse_int(need(header, "max_feature_idx", h), h + ".max_feature_idx");
  BL_CHECK(max_feature >= 0 && max_feature < INT32_MAX, source, ": header max_feature_idx = ", max_feature,
           " must lie in [0, 2^31 - 2]");
  out.n_features = max_feature + 1;
  BL_CHECK(num_class >= 1 && out.n_groups >= 1, source, ": header num_class and num_tree_per_iteration must be >= 1");
  out.average_output = header.count("average_output") > 0;
  // The objective line: a name, then words "key:value" or "sqrt"; absent for a custom objective.
  const auto words = split_words(header.count("objective") ? header.at("objective") : std::string("none"));
  BL_CHECK(!words.empty(), source, ": header objective is empty");
  out.objective = words[0];
  for (size_t w = 1; w < words.size(); ++w) {
    if (words[w] == "sqrt") out.reg_sqrt = true;
    if (words[w].rfind("sigmoid:", 0) == 0) {
      out.sigmoid = parse_double(words[w].substr(8), h + ".objective sigmoid");
      BL_CHECK(std::isfinite(out.sigmoid) && out.sigmoid > 0.0, h, ".objective sigmoid must be finite and > 0");
    }
  }
  const std::string& obj = out.objective;
  const bool multi = obj == "multiclass" || obj == "multiclassova";
  if (multi) {
    BL_CHECK(num_class >= 2 && out.n_groups == num_class, source, ": header num_class = ", num_class,
             ", num_tree_per_iteration = ", out.n_groups, ": a ", obj, " model needs num_class >= 2 trees per iteration");
    out.n_classes = num_class;
  } else if (obj == "binary") {
    out.n_classes = 2;
  }
  if (!multi) {
    BL_CHECK(out.n_groups == 1, source, ": header num_tree_per_iteration = ", out.n_groups,
             ": objective ", obj, " needs 1");
  }
  if (!multi && obj != "binary" && obj != "cross_entropy" && !is_one_of(obj, identity_objectives()) &&
      !is_one_of(obj, log_link_objectives())) {
    throw Error(source + ": header objective = '" + obj +
                "' is not supported (supported: regression, regression_l1, huber, fair, quantile, mape, binary, "
                "cross_entropy, multiclass, multiclassova, poisson, gamma, tweedie, lambdarank, rank_xendcg)");
  }
  // Trees: "Tree=<index>" blocks in order, until "end of trees".
  bool ended = false;
  while (i < lines.size()) {
    if (lines[i].empty()) {
      ++i;
      continue;
    }
    if (lines[i] == "end of trees") {
      ended = true;
      break;
    }
    BL_CHECK(lines[i].rfind("Tree=", 0) == 0, source, ": line ", i + 1, " ('", lines[i].substr(0, 40),
             "') is neither a Tree= block nor 'end of trees'");
    const std::string where = source + ": " + lines[i];
    BL_CHECK(lines[i] == "Tree=" + std::to_string(out.trees.size()), where, ": expected Tree=", out.trees.size());
    ++i;
    Block b;
    read_block(b);
    out.trees.push_back(parse_tree(b, out.n_features, where));
  }
  BL_CHECK(ended, source, ": no 'end of trees' line after the trees");
  BL_CHECK(!out.trees.empty(), source, ": the model has no trees");
  BL_CHECK(out.trees.size() % static_cast<size_t>(out.n_groups) == 0, source, ": ", out.trees.size(),
           " trees are not a multiple of num_tree_per_iteration = ", out.n_groups);
  if (header.count("tree_sizes")) {
    BL_CHECK(split_words(header.at("tree_sizes")).size() == out.trees.size(), source, ": header tree_sizes lists ",
             split_words(header.at("tree_sizes")).size(), " trees, the file holds ", out.trees.size());
  }
  return out;
}

void lightgbm_row(const float* x, int64_t d, double* out) {
  for (int64_t j = 0; j < d; ++j) {
    const double v = static_cast<double>(x[j]);
    out[j] = (!std::isnan(v) && is_zero(v)) ? 0.0 : v;
  }
}

std::vector<double> lightgbm_raw(const LightgbmImport& m, const float* X, int64_t n, int64_t d) {
  const int64_t k = m.n_groups;
  std::vector<double> out(static_cast<size_t>(n * k), 0.0);
  // Tasks of a fixed number of rows: each row's sum depends on that row alone.
  const int64_t rows_per_task = 256;
  default_pool().parallel_for((n + rows_per_task - 1) / rows_per_task, [&](int64_t task) {
    std::vector<double> row(static_cast<size_t>(d));
    const int64_t end = std::min(n, (task + 1) * rows_per_task);
    for (int64_t i = task * rows_per_task; i < end; ++i) {
      lightgbm_row(X + i * d, d, row.data());
      for (size_t t = 0; t < m.trees.size(); ++t) {
        const LgbTree& tree = m.trees[t];
        out[i * k + static_cast<int64_t>(t) % k] += tree.leaf_value[tree.leaf_of(row.data())];
      }
    }
  });
  return out;
}

void lightgbm_transform(const LightgbmImport& m, std::vector<double>& raw, int64_t n) {
  const int64_t k = m.n_groups;
  if (m.average_output) {
    const double iters = static_cast<double>(m.trees.size() / static_cast<size_t>(k));
    for (double& v : raw) v /= iters;
  }
  const std::string& obj = m.objective;
  if (obj == "multiclass") {
    for (int64_t i = 0; i < n; ++i) {
      double* r = &raw[i * k];
      double top = r[0];
      for (int64_t c = 1; c < k; ++c) top = std::max(r[c], top);
      double sum = 0.0;
      for (int64_t c = 0; c < k; ++c) {
        r[c] = exp64(r[c] - top);
        sum += r[c];
      }
      for (int64_t c = 0; c < k; ++c) r[c] /= sum;
    }
  } else if (obj == "binary" || obj == "multiclassova") {
    for (double& v : raw) v = sigmoid64(m.sigmoid, v);
  } else if (obj == "cross_entropy") {
    for (double& v : raw) v = sigmoid64(1.0, v);
  } else if (is_one_of(obj, log_link_objectives())) {
    for (double& v : raw) v = exp64(v);
  } else if (m.reg_sqrt) {
    for (double& v : raw) v = static_cast<double>((v > 0.0) - (v < 0.0)) * v * v;
  }
}

std::vector<ShapTree> lightgbm_shap_trees(const LightgbmImport& m, const std::string& what) {
  std::vector<ShapTree> out;
  for (size_t t = 0; t < m.trees.size(); ++t) {
    const LgbTree& tree = m.trees[t];
    const int32_t leaves = tree.n_leaves(), internal = leaves - 1;
    // A single leaf needs no counts (its expected value is its value).
    BL_CHECK(internal == 0 || (!tree.leaf_count.empty() && !tree.internal_count.empty()), what, ": tree ", t,
             " has no leaf_count / internal_count (SHAP values need the training counts)");
    ShapTree s;
    const size_t nodes = static_cast<size_t>(internal + leaves);
    s.feature.assign(nodes, -1);
    s.left.assign(nodes, -1);
    s.right.assign(nodes, -1);
    s.cover.assign(nodes, 0.0);
    s.value.assign(nodes, 0.0);
    auto id = [&](int32_t child) { return child >= 0 ? child : internal + ~child; };
    for (int32_t i = 0; i < internal; ++i) {
      s.feature[i] = tree.split_feature[i];
      s.left[i] = id(tree.left[i]);
      s.right[i] = id(tree.right[i]);
      s.cover[i] = static_cast<double>(tree.internal_count[i]);
    }
    for (int32_t j = 0; j < leaves; ++j) {
      s.cover[internal + j] = tree.leaf_count.empty() ? 0.0 : static_cast<double>(tree.leaf_count[j]);
      s.value[internal + j] = tree.leaf_value[j];
    }
    check_shap_tree(s, m.n_features, what + ": tree " + std::to_string(t));
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

class LightgbmModel : public Estimator, public ShapExplainer {
 public:
  std::string name() const override { return "lightgbm_model"; }

  Params get_params() const override { return {{"model_file", model_file_}}; }

  void set_params(const Params& params) override {
    for (const auto& [k, v] : params) {
      if (k == "model_file") model_file_ = v;
      else throw Error("lightgbm_model: unknown parameter '" + k + "' (known: model_file)");
    }
  }

  bool fitted() const override { return !imp_.trees.empty(); }

  Estimator& fit(const Tensor& X, const Tensor& y) override {
    (void)y;
    BL_CHECK(!model_file_.empty(), "lightgbm_model: set model_file to the LightGBM text model to import");
    std::string text = read_file_text(model_file_, "LightGBM model");
    LightgbmImport imp = import_lightgbm_text(text, model_file_);
    if (X.defined()) {
      check_X(name(), X, /*allow_nan=*/true);
      BL_CHECK(X.dim(1) == imp.n_features, "lightgbm_model: X has ", X.dim(1), " features, ", model_file_,
               " expects ", imp.n_features);
    }
    imp_ = std::move(imp);
    text_ = std::move(text);
    return *this;
  }

  // Regression objectives: the transformed prediction (as LightGBM's predict); classification
  // objectives: the class index with the largest probability (ties: the lowest).
  Tensor predict(const Tensor& X) const override {
    std::vector<double> out = raw(X);
    const int64_t n = X.dim(0), k = imp_.n_groups;
    lightgbm_transform(imp_, out, n);
    std::vector<float> res(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (imp_.n_classes == 0) {
        res[i] = static_cast<float>(out[i]);
      } else if (k == 1) {
        res[i] = out[i] > 0.5 ? 1.0f : 0.0f;
      } else {
        int64_t best = 0;
        for (int64_t c = 1; c < k; ++c) best = out[i * k + c] > out[i * k + best] ? c : best;
        res[i] = static_cast<float>(best);
      }
    }
    return Tensor::from_vector(res, {n});
  }

  // Probabilities [n, n_classes] (binary: 1 - p and p, computed in binary64), rounded to f32.
  Tensor predict_proba(const Tensor& X) const override {
    BL_CHECK(imp_.n_classes >= 2, "lightgbm_model: predict_proba needs a classification objective, the model has ",
             imp_.objective);
    std::vector<double> out = raw(X);
    const int64_t n = X.dim(0), k = imp_.n_groups;
    lightgbm_transform(imp_, out, n);
    const int64_t cols = k == 1 ? 2 : k;
    std::vector<float> p(static_cast<size_t>(n * cols));
    for (int64_t i = 0; i < n; ++i) {
      if (k == 1) {
        p[i * 2] = static_cast<float>(1.0 - out[i]);
        p[i * 2 + 1] = static_cast<float>(out[i]);
      } else {
        for (int64_t c = 0; c < k; ++c) p[i * k + c] = static_cast<float>(out[i * k + c]);
      }
    }
    return Tensor::from_vector(p, {n, cols});
  }

  // Raw scores [n, n_groups] (LightGBM's predict(raw_score=True)) rounded to f32.
  Tensor transform(const Tensor& X) const override {
    std::vector<double> out = raw(X);
    std::vector<float> f(out.begin(), out.end());
    return Tensor::from_vector(f, {X.dim(0), imp_.n_groups});
  }

  double score(const Tensor& X, const Tensor& y) const override {
    return imp_.n_classes >= 2 ? accuracy_score(y, predict(X)) : r2_score(y, predict(X));
  }
  double score_with_weights(const Tensor& X, const Tensor& y, const std::vector<float>& w) const override {
    return imp_.n_classes >= 2 ? accuracy_score(y, predict(X), w) : r2_score(y, predict(X), w);
  }

  std::vector<double> shap_values(const Tensor& X, int64_t* n_cols) const override {
    check_input(X);
    const std::vector<ShapTree> trees = lightgbm_shap_trees(imp_, "lightgbm_model");
    Tensor hx = host_f32(X);
    const int64_t n = hx.dim(0), d = hx.dim(1);
    const float* px = hx.data<float>();
    *n_cols = imp_.n_groups * (d + 1);
    std::vector<double> rows(static_cast<size_t>(n * d));
    for (int64_t i = 0; i < n; ++i) lightgbm_row(px + i * d, d, &rows[i * d]);
    const std::vector<double> base(static_cast<size_t>(imp_.n_groups), 0.0);
    return ensemble_shap(trees, imp_.n_groups, base, n, d, [&](size_t t, int64_t i, uint8_t* left) {
      const LgbTree& tree = imp_.trees[t];
      for (int32_t node = 0; node + 1 < tree.n_leaves(); ++node) left[node] = tree.goes_left(node, &rows[i * d]);
    });
  }

  void save_state(nlohmann::json& state) const override { state["lightgbm_text"] = text_; }

  void load_state(const nlohmann::json& state) override {
    BL_CHECK(state.contains("lightgbm_text") && state["lightgbm_text"].is_string(),
             "lightgbm_model: model state needs lightgbm_text (the imported model's text)");
    std::string text = state["lightgbm_text"].get<std::string>();
    imp_ = import_lightgbm_text(text, "lightgbm_model: state.lightgbm_text");
    text_ = std::move(text);
  }

 private:
  void check_input(const Tensor& X) const {
    BL_CHECK(fitted(), "lightgbm_model: predict before fit (import)");
    check_X(name(), X, /*allow_nan=*/true);
    BL_CHECK(X.dim(1) == imp_.n_features, "lightgbm_model: X has ", X.dim(1), " features, the model expects ",
             imp_.n_features);
  }

  std::vector<double> raw(const Tensor& X) const {
    check_input(X);
    Tensor hx = host_f32(X);
    return lightgbm_raw(imp_, hx.data<float>(), hx.dim(0), hx.dim(1));
  }

  std::string model_file_;
  std::string text_;
  LightgbmImport imp_;
};

}  // namespace

std::unique_ptr<Estimator> make_lightgbm_model() { return std::make_unique<LightgbmModel>(); }

}  // namespace bl::ml
