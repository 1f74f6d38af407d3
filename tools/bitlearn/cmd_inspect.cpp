// `bitlearn inspect model.json [--tree N | --all-trees] [--max-values K]`
// Prints a model file readably: its SHA-256, the estimator and contract profile, the parameters,
// the columns it was fitted on, a linear model's coefficients per feature in decimal, trees as
// indented text (split feature by name, threshold, where NaN goes, leaf values), and the other
// state fields decoded from their hex: binary32, or binary64 for the fields that hold binary64
// values (those named *_f64, and the few older ones listed below). Exit codes: 0 done; 2 bad input.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "command.h"
#include "core/digest.h"
#include "core/error.h"
#include "bitlearn/version.h"
#include "ml/tree/tree_model.h"
#include "model_file.h"
#include "io/json_number.h"

namespace {

struct InspectArgs {
  std::string model;
  int64_t tree = 0;
  bool all_trees = false;
  int64_t max_values = 12;
};

std::string num(float v) { return bl::float_to_text(v); }

std::string feature_name(const std::vector<std::string>& names, int64_t f) {
  return f >= 0 && f < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(f)] : "x" + std::to_string(f);
}

// Whether v is a string of k * digits lowercase hex digits (k >= 1): values stored as hex.
bool hex_text(const nlohmann::json& v, size_t digits) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() % digits != 0) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A state field that holds binary32 values as hex (a string of 8k hex digits), decoded; else empty.
bool hex_floats(const nlohmann::json& v, const std::string& field, std::vector<float>* out) {
  if (!hex_text(v, 8)) return false;
  *out = bl::ml::f32_from_hex(v.get<std::string>(), field);
  return true;
}

std::string value_list(const std::vector<float>& v, size_t begin, size_t count) {
  std::string s = "[";
  for (size_t i = 0; i < count; ++i) s += (i ? ", " : "") + num(v[begin + i]);
  return s + "]";
}

// Shortest decimal text of a binary64 value that reads back (strtod) to the same bits.
std::string num64(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// Whether state field `key` of estimator `name` holds binary64 values (16 hex digits each, as
// f64_to_hex writes them): every field named *_f64, and these fields, named before that rule.
bool binary64_field(const std::string& name, const std::string& key) {
  if (key.size() > 4 && key.compare(key.size() - 4, 4, "_f64") == 0) return true;
  static const std::set<std::string> arima = {"y", "exog", "params", "sigma2", "llf", "aic", "bic"};
  static const std::set<std::string> hgb = {"train_score", "validation_score"};
  static const std::map<std::string, std::set<std::string>> older = {
      {"arima", arima},
      {"sarimax", arima},
      {"hist_gradient_boosting_classifier", hgb},
      {"hist_gradient_boosting_regressor", hgb},
      {"gaussian_process_regressor", {"alpha", "y_mean_std", "dual_alpha", "log_marginal_likelihood"}},
      {"gaussian_process_classifier", {"log_marginal_likelihoods", "log_marginal_likelihood"}},
      {"tsne", {"kl_divergence", "learning_rate_used"}},
      {"umap", {"a", "b", "graph_data"}},
  };
  const auto it = older.find(name);
  return it != older.end() && it->second.count(key) > 0;
}

// A binary64 state field (a string of 16k hex digits), decoded; false (and nothing read) otherwise.
bool hex_doubles(const nlohmann::json& v, const std::string& field, std::vector<double>* out) {
  if (!hex_text(v, 16)) return false;
  const std::vector<int64_t> bits = bl::ml::i64_from_hex(v.get<std::string>(), field);
  out->resize(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&(*out)[i], &bits[i], sizeof(double));
  return true;
}

void print_tree(const bl::ml::Tree& t, const std::vector<std::string>& names, const std::vector<std::string>& classes) {
  struct Item {
    int32_t node;
    int depth;
    std::string edge;
  };
  std::vector<Item> stack = {{0, 0, ""}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    std::string pad;
    for (int d = 0; d < it.depth; ++d) pad += "|   ";
    const int32_t n = it.node;
    if (!it.edge.empty()) std::printf("%s|--- %s\n", pad.c_str(), it.edge.c_str());
    const std::string inner = it.edge.empty() ? pad : pad + "|   ";
    if (t.feature[n] < 0) {
      const size_t k = static_cast<size_t>(t.n_values);
      std::string leaf = "leaf " + std::to_string(n) + ": value " + value_list(t.value, static_cast<size_t>(n) * k, k);
      if (!classes.empty() && k == classes.size()) {
        size_t best = 0;
        for (size_t c = 1; c < k; ++c)
          if (t.value[n * k + c] > t.value[n * k + best]) best = c;
        leaf += " -> class " + classes[best];
      }
      std::printf("%s|--- %s\n", inner.c_str(), leaf.c_str());
      continue;
    }
    const std::string f = feature_name(names, t.feature[n]), thr = num(t.threshold[n]);
    if (t.is_categorical(static_cast<int32_t>(n))) {  // categories going left (hist boosting)
      std::string set;  // codes as ranges: 0,3,20-255
      auto bit = [&](int c) { return c < 256 && ((t.cat_left[static_cast<size_t>(n) * 4 + c / 64] >> (c % 64)) & 1u); };
      for (int c = 0; c < 256; ++c) {
        if (!bit(c)) continue;
        int e = c;
        while (bit(e + 1)) ++e;
        set += (set.empty() ? "" : ",") + std::to_string(c) + (e > c ? "-" + std::to_string(e) : "");
        c = e;
      }
      const char* nan_l = t.default_left[n] ? "  (NaN, unseen too)" : "";
      const char* nan_r = t.default_left[n] ? "" : "  (NaN, unseen too)";
      stack.push_back({t.right[n], it.edge.empty() ? it.depth : it.depth + 1, f + " not in {" + set + "}" + nan_r});
      stack.push_back({t.left[n], it.edge.empty() ? it.depth : it.depth + 1, f + " in {" + set + "}" + nan_l});
      continue;
    }
    // Pushed right first, so the left branch prints first.
    stack.push_back({t.right[n], it.edge.empty() ? it.depth : it.depth + 1,
                     f + " > " + thr + (t.default_left[n] ? "" : "  (NaN too)")});
    stack.push_back({t.left[n], it.edge.empty() ? it.depth : it.depth + 1,
                     f + " <= " + thr + (t.default_left[n] ? "  (NaN too)" : "")});
  }
}

void run_inspect(const InspectArgs& a) {
  BL_CHECK(a.max_values >= 0, "--max-values must be >= 0, got ", a.max_values);
  const std::string bytes = bl::read_file_text(a.model, "model file");
  bl::cli::ModelFile m = bl::cli::read_model_file(a.model);
  std::printf("model file   %s\n", a.model.c_str());
  std::printf("sha256       %s\n", bl::sha256_hex(bytes.data(), bytes.size()).c_str());
  std::printf("estimator    %s\n", m.estimator->name().c_str());
  std::printf("format       %s version %s; contract profile %s\n", m.json.value("format", "?").c_str(),
              m.json.contains("version") ? m.json["version"].dump().c_str() : "?", bl::kContractProfile);
  std::printf("parameters  ");
  for (const auto& [k, v] : m.estimator->get_params()) std::printf(" %s=%s", k.c_str(), v.c_str());
  std::printf("\n");
  if (!m.target.empty()) std::printf("target       %s\n", m.target.c_str());
  if (!m.features.empty()) {
    std::printf("features     %zu:", m.features.size());
    for (const auto& f : m.features) std::printf(" %s", f.c_str());
    std::printf("\n");
  }
  std::vector<std::string> class_names;  // as the user wrote the labels (text labels by name)
  for (double c : m.classes) class_names.push_back(m.label_text(c));
  if (!class_names.empty()) {
    std::printf("classes     ");
    for (const std::string& c : class_names) std::printf(" %s", bl::csv_field(c).c_str());
    std::printf("\n");
  }
  const nlohmann::json& state = m.json.at("state");
  // A linear model: coefficients per output and feature, and the intercepts.
  std::vector<float> coef, intercept;
  if (state.contains("coef") && hex_floats(state["coef"], "state.coef", &coef) && state.contains("n_features")) {
    const int64_t d = bl::io::json_integer<int64_t>(state["n_features"], "state.n_features");
    const int64_t outputs = d > 0 ? static_cast<int64_t>(coef.size()) / d : 0;
    if (state.contains("intercept")) hex_floats(state["intercept"], "state.intercept", &intercept);
    std::printf("\ncoefficients (%lld output%s x %lld features)\n", static_cast<long long>(outputs),
                outputs == 1 ? "" : "s", static_cast<long long>(d));
    for (int64_t o = 0; o < outputs; ++o) {
      if (outputs > 1) std::printf("  output %lld\n", static_cast<long long>(o));
      for (int64_t f = 0; f < d; ++f)
        std::printf("  %-24s %s\n", feature_name(m.features, f).c_str(), num(coef[o * d + f]).c_str());
      if (o < static_cast<int64_t>(intercept.size())) std::printf("  %-24s %s\n", "(intercept)", num(intercept[o]).c_str());
    }
  }
  // Trees.
  if (state.contains("trees") && state["trees"].is_array() && !state["trees"].empty()) {
    const auto& trees = state["trees"];
    const int64_t n_trees = static_cast<int64_t>(trees.size());
    BL_CHECK(a.tree >= 0 && a.tree < n_trees, "--tree ", a.tree, ": the model has trees 0..", n_trees - 1);
    const int64_t d = state.contains("n_features") ? bl::io::json_integer<int64_t>(state["n_features"], "state.n_features")
                                                  : static_cast<int64_t>(m.features.size());
    const int64_t first = a.all_trees ? 0 : a.tree, last = a.all_trees ? n_trees - 1 : a.tree;
    for (int64_t t = first; t <= last; ++t) {
      bl::ml::Tree tree = bl::ml::tree_from_json(trees[static_cast<size_t>(t)], d, "state.trees[" + std::to_string(t) + "]");
      std::printf("\ntree %lld of %lld (%lld nodes, depth %lld)\n", static_cast<long long>(t), static_cast<long long>(n_trees),
                  static_cast<long long>(tree.n_nodes()), static_cast<long long>(tree.depth()));
      print_tree(tree, m.features, class_names);
    }
    if (!a.all_trees && n_trees > 1) std::printf("(--tree N shows another tree, --all-trees every one)\n");
  }
  // Everything else in the state, decoded.
  std::printf("\nstate\n");
  for (const auto& [k, v] : state.items()) {
    if (k == "coef" || k == "intercept" || k == "trees" || k == "classes") continue;
    std::vector<float> f;
    std::vector<double> d;
    if (binary64_field(m.estimator->name(), k) && hex_doubles(v, "state." + k, &d)) {
      const size_t shown = std::min<size_t>(d.size(), static_cast<size_t>(std::max<int64_t>(a.max_values, 0)));
      std::string list = "[";
      for (size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + num64(d[i]);
      std::printf("  %-20s %zu binary64: %s]%s\n", k.c_str(), d.size(), list.c_str(), shown < d.size() ? " ..." : "");
    } else if (hex_floats(v, "state." + k, &f)) {
      const size_t shown = std::min<size_t>(f.size(), static_cast<size_t>(std::max<int64_t>(a.max_values, 0)));
      std::printf("  %-20s %zu binary32: %s%s\n", k.c_str(), f.size(), value_list(f, 0, shown).c_str(),
                  shown < f.size() ? " ..." : "");
    } else if (v.is_array()) {
      std::printf("  %-20s a list of %zu\n", k.c_str(), v.size());
    } else {
      std::string text = v.dump();
      if (text.size() > 100) text = text.substr(0, 100) + " ...";
      std::printf("  %-20s %s\n", k.c_str(), text.c_str());
    }
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<InspectArgs>();
  auto* cmd = root.add_subcommand("inspect", "Print a model file readably: SHA-256, parameters, coefficients, trees");
  cmd->add_option("model", a->model, "model file written by `bitlearn fit`")->required();
  cmd->add_option("--tree", a->tree, "which tree of an ensemble to print (default 0)");
  cmd->add_flag("--all-trees", a->all_trees, "print every tree");
  cmd->add_option("--max-values", a->max_values, "values shown per state array (default 12)");
  cmd->callback([a] { run_inspect(*a); });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
