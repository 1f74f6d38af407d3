// tree_model.cpp: tree arrays, their JSON form, label encoding and scores (see tree_model.h).
#include "ml/tree/tree_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "bitlearn/ml/estimator.h"
#include "contract/arith.h"
#include "contract/rng.h"
#include "core/error.h"
#include "io/json_number.h"

namespace bl::ml {

int32_t Tree::add_node() {
  feature.push_back(-1);
  threshold.push_back(0.0f);
  left.push_back(-1);
  right.push_back(-1);
  default_left.push_back(0);
  value.resize(value.size() + static_cast<size_t>(n_values), 0.0f);
  if (!categorical.empty()) {
    categorical.push_back(0);
    cat_left.resize(cat_left.size() + 4, 0);
  }
  return static_cast<int32_t>(feature.size() - 1);
}

void Tree::set_categorical(int32_t node, const uint64_t bits[4]) {
  if (categorical.empty()) {  // the first categorical node: the arrays now cover every node
    categorical.assign(feature.size(), 0);
    cat_left.assign(feature.size() * 4, 0);
  }
  categorical[node] = 1;
  std::copy(bits, bits + 4, cat_left.begin() + static_cast<std::ptrdiff_t>(node) * 4);
}

int32_t Tree::leaf_of(const float* row) const {
  int32_t node = 0;
  while (feature[node] >= 0) node = goes_left(node, row[feature[node]]) ? left[node] : right[node];
  return node;
}

int64_t Tree::depth() const {
  std::vector<int64_t> d(feature.size(), 0);
  int64_t best = 0;
  for (size_t i = 0; i < feature.size(); ++i) {  // children come after their parent
    if (feature[i] >= 0) {
      d[left[i]] = d[i] + 1;
      d[right[i]] = d[i] + 1;
    }
    best = std::max(best, d[i]);
  }
  return best;
}

void tree_to_json(const Tree& tree, nlohmann::json& out) {
  out["n_values"] = tree.n_values;
  out["feature"] = tree.feature;
  out["left"] = tree.left;
  out["right"] = tree.right;
  out["default_left"] = tree.default_left;
  out["threshold"] = f32_to_hex(tree.threshold);
  out["value"] = f32_to_hex(tree.value);
  if (!tree.cover.empty()) {  // binary64 bits, exact
    std::vector<int64_t> bits(tree.cover.size());
    std::memcpy(bits.data(), tree.cover.data(), bits.size() * sizeof(double));
    out["cover"] = i64_to_hex(bits);
  }
  if (!tree.categorical.empty()) {  // only trees with categorical nodes: the others keep their bytes
    out["categorical"] = tree.categorical;
    std::vector<int64_t> bits(tree.cat_left.size());
    std::memcpy(bits.data(), tree.cat_left.data(), bits.size() * sizeof(uint64_t));
    out["cat_left"] = i64_to_hex(bits);
  }
}

nlohmann::json trees_to_json(const std::vector<Tree>& trees) {
  nlohmann::json list = nlohmann::json::array();
  for (const Tree& t : trees) {
    nlohmann::json j;
    tree_to_json(t, j);
    list.push_back(j);
  }
  return list;
}

Tree tree_from_json(const nlohmann::json& in, int64_t n_features, const std::string& prefix) {
  BL_CHECK(in.is_object(), prefix, ": expected an object");
  for (const char* key : {"n_values", "feature", "left", "right", "default_left", "threshold", "value"}) {
    BL_CHECK(in.contains(key), prefix, ": missing field ", key);
  }
  Tree t;
  t.n_values = io::json_integer<int64_t>(in["n_values"], prefix + ".n_values");
  BL_CHECK(t.n_values >= 1, prefix, ".n_values: expected >= 1");
  t.feature = io::json_integers<int32_t>(in["feature"], prefix + ".feature");
  t.left = io::json_integers<int32_t>(in["left"], prefix + ".left");
  t.right = io::json_integers<int32_t>(in["right"], prefix + ".right");
  t.default_left = io::json_integers<uint8_t>(in["default_left"], prefix + ".default_left");
  t.threshold = f32_from_hex(in["threshold"].get<std::string>(), prefix + ".threshold");
  t.value = f32_from_hex(in["value"].get<std::string>(), prefix + ".value");
  const size_t n = t.feature.size();
  BL_CHECK(n >= 1, prefix, ": a tree needs at least one node");
  BL_CHECK(t.left.size() == n && t.right.size() == n && t.default_left.size() == n &&
               t.threshold.size() == n,
           prefix, ": node arrays have different lengths");
  BL_CHECK(t.value.size() == n * static_cast<size_t>(t.n_values), prefix, ".value: expected ",
           n * t.n_values, " floats, got ", t.value.size());
  for (size_t i = 0; i < n; ++i) {
    if (t.feature[i] < 0) {
      BL_CHECK(t.feature[i] == -1 && t.left[i] == -1 && t.right[i] == -1, prefix, ": node ", i,
               " is a malformed leaf");
      continue;
    }
    BL_CHECK(t.feature[i] < n_features, prefix, ".feature[", i, "] = ", t.feature[i],
             " is out of range (n_features = ", n_features, ")");
    BL_CHECK(t.left[i] > static_cast<int32_t>(i) && t.right[i] > static_cast<int32_t>(i) &&
                 static_cast<size_t>(t.left[i]) < n && static_cast<size_t>(t.right[i]) < n,
             prefix, ": children of node ", i, " are out of range");
    BL_CHECK(t.default_left[i] <= 1, prefix, ".default_left[", i, "]: expected 0 or 1");
  }
  if (in.contains("cover")) {  // optional: files written before the cover was recorded lack it
    BL_CHECK(in["cover"].is_string(), prefix, ".cover: expected a hex string");
    const std::vector<int64_t> bits = i64_from_hex(in["cover"].get<std::string>(), prefix + ".cover");
    BL_CHECK(bits.size() == n, prefix, ".cover: expected ", n, " values, got ", bits.size());
    t.cover.resize(n);
    std::memcpy(t.cover.data(), bits.data(), n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
      BL_CHECK(std::isfinite(t.cover[i]) && t.cover[i] >= 0.0, prefix, ".cover[", i, "] = ", t.cover[i],
               ": expected a finite value >= 0");
    }
  }
  BL_CHECK(in.contains("categorical") == in.contains("cat_left"), prefix,
           ": categorical and cat_left come together");
  if (in.contains("categorical")) {
    t.categorical = io::json_integers<uint8_t>(in["categorical"], prefix + ".categorical");
    BL_CHECK(t.categorical.size() == n, prefix, ".categorical: expected ", n, " entries, got ", t.categorical.size());
    BL_CHECK(in["cat_left"].is_string(), prefix, ".cat_left: expected a hex string");
    const std::vector<int64_t> bits = i64_from_hex(in["cat_left"].get<std::string>(), prefix + ".cat_left");
    BL_CHECK(bits.size() == 4 * n, prefix, ".cat_left: expected ", 4 * n, " words, got ", bits.size());
    t.cat_left.resize(4 * n);
    std::memcpy(t.cat_left.data(), bits.data(), bits.size() * sizeof(uint64_t));
    for (size_t i = 0; i < n; ++i) {
      BL_CHECK(t.categorical[i] <= 1, prefix, ".categorical[", i, "]: expected 0 or 1");
      BL_CHECK(t.categorical[i] == 0 || t.feature[i] >= 0, prefix, ".categorical[", i, "]: a leaf cannot be categorical");
    }
  }
  return t;
}

Tensor host_f32(const Tensor& X) { return X.to(Device::cpu()).contiguous(); }

LabelEncoding encode_labels(const std::string& est, const Tensor& y) {
  Tensor h = y.to(Device::cpu()).contiguous();
  const int64_t n = h.numel();
  std::vector<double> raw(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (h.dtype() == DType::f32) {
      float v = h.data<float>()[i];
      BL_CHECK(std::isfinite(v) && v == std::floor(v), est, ": class label at row ", i, " (", v,
               ") is not an integer");
      raw[i] = v;
    } else if (h.dtype() == DType::i32) {
      raw[i] = h.data<int32_t>()[i];
    } else {
      raw[i] = static_cast<double>(h.data<int64_t>()[i]);
    }
  }
  LabelEncoding enc;
  enc.classes = raw;
  std::sort(enc.classes.begin(), enc.classes.end());
  enc.classes.erase(std::unique(enc.classes.begin(), enc.classes.end()), enc.classes.end());
  BL_CHECK(enc.classes.size() >= 2, est, ": y holds a single class (", enc.classes[0],
           "); a classifier needs at least two");
  enc.y_index.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    enc.y_index[i] = static_cast<int32_t>(
        std::lower_bound(enc.classes.begin(), enc.classes.end(), raw[i]) - enc.classes.begin());
  }
  return enc;
}

Tensor decode_labels(const std::vector<double>& classes, const std::vector<int32_t>& index) {
  std::vector<float> out(index.size());
  for (size_t i = 0; i < index.size(); ++i) out[i] = static_cast<float>(classes[index[i]]);
  return Tensor::from_vector(out, {static_cast<int64_t>(out.size())});
}

std::vector<float> regression_targets(const Tensor& y) {
  Tensor h = y.to(Device::cpu()).contiguous();
  if (h.dtype() != DType::f32) h = h.to(DType::f32);
  return h.to_vector<float>();
}

int32_t argmax_row(const float* p, int64_t k) {
  int32_t best = 0;
  for (int64_t j = 1; j < k; ++j) {
    if (p[j] > p[best]) best = static_cast<int32_t>(j);
  }
  return best;
}

Tensor probability_columns(const std::vector<float>& p, int64_t n, int64_t k) {
  if (k > 1) return Tensor::from_vector(p, {n, k});
  std::vector<float> two(static_cast<size_t>(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    two[2 * i] = bl::sub(1.0f, p[i]);
    two[2 * i + 1] = p[i];
  }
  return Tensor::from_vector(two, {n, 2});
}

std::vector<double> labels_as_doubles(const Tensor& y, const std::string& caller) {
  Tensor h = y.to(Device::cpu()).contiguous();
  std::vector<double> v(static_cast<size_t>(h.numel()));
  for (int64_t i = 0; i < h.numel(); ++i) {
    if (h.dtype() == DType::f32) v[i] = h.data<float>()[i];
    else if (h.dtype() == DType::i32) v[i] = h.data<int32_t>()[i];
    else if (h.dtype() == DType::i64) v[i] = static_cast<double>(h.data<int64_t>()[i]);
    else throw Error(caller + ": y must be f32, i32 or i64, got " + h.str());
  }
  return v;
}

double accuracy_score(const Tensor& y_true, const Tensor& y_pred) {
  std::vector<double> a = labels_as_doubles(y_true, "score"), b = labels_as_doubles(y_pred, "score");
  BL_CHECK(a.size() == b.size() && !a.empty(), "score: y has ", a.size(), " entries, predictions ",
           b.size());
  int64_t hits = 0;
  for (size_t i = 0; i < a.size(); ++i) hits += a[i] == b[i];
  return static_cast<double>(hits) / static_cast<double>(a.size());
}

double r2_score(const Tensor& y_true, const Tensor& y_pred) {
  std::vector<double> a = labels_as_doubles(y_true, "score"), b = labels_as_doubles(y_pred, "score");
  BL_CHECK(a.size() == b.size() && !a.empty(), "score: y has ", a.size(), " entries, predictions ",
           b.size());
  double mean = 0.0;
  for (double v : a) mean += v;
  mean /= static_cast<double>(a.size());
  double ss_res = 0.0, ss_tot = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    ss_res += (a[i] - b[i]) * (a[i] - b[i]);
    ss_tot += (a[i] - mean) * (a[i] - mean);
  }
  if (ss_tot == 0.0) return ss_res == 0.0 ? 1.0 : 0.0;
  return 1.0 - ss_res / ss_tot;
}

namespace {
// y and the predictions as doubles, checked against each other and the weights.
void weighted_score_operands(const Tensor& y_true, const Tensor& y_pred, const std::vector<float>& w,
                             std::vector<double>* a, std::vector<double>* b) {
  *a = labels_as_doubles(y_true, "score");
  *b = labels_as_doubles(y_pred, "score");
  BL_CHECK(a->size() == b->size() && !a->empty(), "score: y has ", a->size(), " entries, predictions ",
           b->size());
  BL_CHECK(w.size() == a->size(), "score: sample_weight has ", w.size(), " entries, y ", a->size());
}
}  // namespace

double accuracy_score(const Tensor& y_true, const Tensor& y_pred, const std::vector<float>& w) {
  std::vector<double> a, b;
  weighted_score_operands(y_true, y_pred, w, &a, &b);
  double hits = 0.0, total = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double wi = w[i];
    if (a[i] == b[i]) hits += wi;
    total += wi;
  }
  BL_CHECK(total > 0.0, "score: sample_weight sums to 0");
  return hits / total;
}

double r2_score(const Tensor& y_true, const Tensor& y_pred, const std::vector<float>& w) {
  std::vector<double> a, b;
  weighted_score_operands(y_true, y_pred, w, &a, &b);
  // Each term is the unweighted one times w_i (exact for w_i = 1), summed in row order.
  double mean = 0.0, total = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    mean += static_cast<double>(w[i]) * a[i];
    total += w[i];
  }
  BL_CHECK(total > 0.0, "score: sample_weight sums to 0");
  mean /= total;
  double ss_res = 0.0, ss_tot = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    ss_res += static_cast<double>(w[i]) * ((a[i] - b[i]) * (a[i] - b[i]));
    ss_tot += static_cast<double>(w[i]) * ((a[i] - mean) * (a[i] - mean));
  }
  if (ss_tot == 0.0) return ss_res == 0.0 ? 1.0 : 0.0;
  return 1.0 - ss_res / ss_tot;
}

uint32_t random_below(uint64_t seed, uint64_t stream, uint64_t i, uint32_t n) {
  uint64_t w = random_u32_element(seed, stream, i);
  return static_cast<uint32_t>((w * n) >> 32);
}

}  // namespace bl::ml
