// xgboost_json.cpp: XGBoost JSON model import (see xgboost_json.h).
#include "io/xgboost_json.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"
#include "io/json_number.h"

namespace bl::ml {

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& path,
                            const std::string& source) {
  BL_CHECK(j.is_object() && j.contains(key), source, ": XGBoost model has no field ", path, ".", key);
  return j[key];
}

// "[4.25E-1]", "[a,b,c]" or "0.5": the floats of a base_score text.
std::vector<float> parse_float_list(const std::string& text, const std::string& what,
                                    const std::string& source) {
  std::string s = text;
  s.erase(std::remove(s.begin(), s.end(), '['), s.end());
  s.erase(std::remove(s.begin(), s.end(), ']'), s.end());
  std::vector<float> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    float v = std::strtof(part.c_str(), &end);
    BL_CHECK(!part.empty() && end == part.c_str() + part.size(), source, ": ", what, " = '", text,
             "' is not a number or list of numbers");
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int64_t int_text(const nlohmann::json& j, const std::string& what, const std::string& source) {
  if (j.is_number_integer()) return j.get<int64_t>();
  BL_CHECK(j.is_string(), source, ": ", what, " is neither a number nor a string");
  const std::string s = j.get<std::string>();
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  BL_CHECK(!s.empty() && end == s.c_str() + s.size(), source, ": ", what, " = '", s, "' is not an integer");
  return v;
}

enum class Link { identity, logit, log };

Link link_of(const std::string& objective) {
  if (objective == "binary:logistic" || objective == "reg:logistic") return Link::logit;
  if (objective == "count:poisson" || objective == "reg:gamma" || objective == "reg:tweedie") return Link::log;
  return Link::identity;
}

}  // namespace

const std::vector<std::string>& xgboost_objectives() {
  static const std::vector<std::string> names = {
      "reg:squarederror", "reg:squaredlogerror", "reg:pseudohubererror", "reg:absoluteerror",
      "reg:logistic",     "binary:logistic",     "binary:logitraw",      "count:poisson",
      "reg:gamma",        "reg:tweedie",         "multi:softprob",       "multi:softmax"};
  return names;
}

namespace {

// The import proper; nlohmann's exceptions (a field of the wrong JSON type) are turned into
// bl::Error by import_xgboost_json.
XgboostImport import_fields(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(source + ": not a valid XGBoost JSON model (parse error: " + e.what() + ")");
  }
  BL_CHECK(j.is_object() && j.contains("learner"), source,
           ": not an XGBoost JSON model (no field learner)");
  const auto& version = field(j, "version", "", source);
  BL_CHECK(version.is_array() && !version.empty() && version[0].is_number_integer(), source,
           ": field version must be [major, minor, patch]");
  const int64_t major = version[0].get<int64_t>();
  BL_CHECK(major >= 1 && major <= 3, source, ": field version = ", version.dump(),
           ": this build reads XGBoost JSON models of versions 1.x to 3.x");
  const auto& learner = j["learner"];
  XgboostImport out;
  const auto& objective = field(field(learner, "objective", "learner", source), "name",
                                "learner.objective", source);
  out.objective = objective.get<std::string>();
  const auto& known = xgboost_objectives();
  if (std::find(known.begin(), known.end(), out.objective) == known.end()) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Error(source + ": field learner.objective.name = '" + out.objective +
                "' is not supported (supported: " + list + ")");
  }
  const auto& lmp = field(learner, "learner_model_param", "learner", source);
  out.n_features = int_text(field(lmp, "num_feature", "learner.learner_model_param", source),
                            "learner.learner_model_param.num_feature", source);
  BL_CHECK(out.n_features >= 1 && out.n_features <= INT32_MAX, source,
           ": learner.learner_model_param.num_feature must lie in [1, 2^31 - 1] (split features are int32)");
  const int64_t num_class = int_text(field(lmp, "num_class", "learner.learner_model_param", source),
                                     "learner.learner_model_param.num_class", source);
  if (lmp.contains("num_target")) {
    BL_CHECK(int_text(lmp["num_target"], "num_target", source) == 1, source,
             ": field learner.learner_model_param.num_target must be 1 (multi-target models are not supported)");
  }
  const bool multi = out.objective.rfind("multi:", 0) == 0;
  BL_CHECK(!multi || num_class >= 2, source, ": learner.learner_model_param.num_class = ", num_class,
           ": a multi:* objective needs >= 2 classes");
  const int64_t groups = multi ? num_class : 1;
  out.n_classes = multi ? num_class : (out.objective.rfind("binary:", 0) == 0 ? 2 : 0);

  std::vector<float> base = parse_float_list(
      field(lmp, "base_score", "learner.learner_model_param", source).get<std::string>(),
      "learner.learner_model_param.base_score", source);
  BL_CHECK(base.size() == 1 || static_cast<int64_t>(base.size()) == groups, source,
           ": learner.learner_model_param.base_score holds ", base.size(), " values, expected 1 or ", groups);

  const auto& booster = field(learner, "gradient_booster", "learner", source);
  const std::string booster_name = field(booster, "name", "learner.gradient_booster", source).get<std::string>();
  BL_CHECK(booster_name == "gbtree", source, ": field learner.gradient_booster.name = '", booster_name,
           "' is not supported (gbtree only)");
  const auto& model = field(booster, "model", "learner.gradient_booster", source);
  if (model.contains("gbtree_model_param") && model["gbtree_model_param"].contains("num_parallel_tree")) {
    BL_CHECK(int_text(model["gbtree_model_param"]["num_parallel_tree"], "num_parallel_tree", source) == 1, source,
             ": field learner.gradient_booster.model.gbtree_model_param.num_parallel_tree must be 1");
  }
  const auto& trees = field(model, "trees", "learner.gradient_booster.model", source);
  const auto& info = field(model, "tree_info", "learner.gradient_booster.model", source);
  BL_CHECK(trees.is_array() && info.is_array() && trees.size() == info.size() && !trees.empty(), source,
           ": learner.gradient_booster.model.trees and tree_info must be non-empty lists of equal length");
  BL_CHECK(trees.size() % static_cast<size_t>(groups) == 0, source, ": ", trees.size(),
           " trees are not a multiple of num_class = ", groups);
  // The base margins are sized by num_class only now that the file's trees bound it (a multi:*
  // model holds at least one tree per class), so a huge num_class cannot size an allocation.
  out.model.n_groups = groups;
  for (int64_t k = 0; k < groups; ++k) {
    float b = base.size() == 1 ? base[0] : base[k];
    switch (link_of(out.objective)) {
      case Link::logit:
        BL_CHECK(b > 0.0f && b < 1.0f, source, ": base_score ", b, " must be in (0, 1) for ", out.objective);
        b = bl::neg(bl::log(bl::sub(bl::div(1.0f, b), 1.0f)));
        break;
      case Link::log:
        BL_CHECK(b > 0.0f, source, ": base_score ", b, " must be > 0 for ", out.objective);
        b = bl::log(b);
        break;
      default:
        break;
    }
    out.model.base.push_back(b);
  }
  for (size_t t = 0; t < trees.size(); ++t) {
    const std::string path = "learner.gradient_booster.model.trees[" + std::to_string(t) + "]";
    BL_CHECK(io::json_integer<int64_t>(info[t], source + ": learner.gradient_booster.model.tree_info[" + std::to_string(t) + "]") == static_cast<int64_t>(t) % groups, source,
             ": learner.gradient_booster.model.tree_info[", t, "] = ", info[t].dump(),
             ": expected trees in iteration-major, class-minor order");
    const auto& jt = trees[t];
    const auto left = io::json_integers<int64_t>(field(jt, "left_children", path, source), source + ": " + path + ".left_children");
    const auto right = io::json_integers<int64_t>(field(jt, "right_children", path, source), source + ": " + path + ".right_children");
    const auto index = io::json_integers<int64_t>(field(jt, "split_indices", path, source), source + ": " + path + ".split_indices");
    const auto cond = field(jt, "split_conditions", path, source).get<std::vector<double>>();
    const auto dleft = io::json_integers<int64_t>(field(jt, "default_left", path, source), source + ": " + path + ".default_left");
    const size_t n = left.size();
    BL_CHECK(n >= 1 && right.size() == n && index.size() == n && cond.size() == n && dleft.size() == n,
             source, ": ", path, ": node arrays are empty or of different lengths");
    if (jt.contains("split_type")) {
      for (auto v : io::json_integers<int64_t>(jt["split_type"], source + ": " + path + ".split_type")) {
        BL_CHECK(v == 0, source, ": ", path, ".split_type: categorical splits are not supported");
      }
    }
    if (jt.contains("tree_param") && jt["tree_param"].contains("size_leaf_vector")) {
      int64_t s = int_text(jt["tree_param"]["size_leaf_vector"], path + ".tree_param.size_leaf_vector", source);
      BL_CHECK(s <= 1, source, ": ", path, ".tree_param.size_leaf_vector = ", s, ": vector leaves are not supported");
    }
    // XGBoost node ids may not follow our "children after parent" order: renumber breadth-first.
    Tree tree;
    std::vector<int64_t> queue = {0}, ours = {tree.add_node()};
    for (size_t q = 0; q < queue.size(); ++q) {
      const int64_t x = queue[q];
      const int32_t id = static_cast<int32_t>(ours[q]);
      BL_CHECK(q < n, source, ": ", path, ": the nodes do not form a tree");
      if (left[x] == -1) {
        BL_CHECK(right[x] == -1, source, ": ", path, ": node ", x, " has one child");
        tree.value[id] = static_cast<float>(cond[x]);
        continue;
      }
      BL_CHECK(left[x] > 0 && right[x] > 0 && static_cast<size_t>(left[x]) < n && static_cast<size_t>(right[x]) < n,
               source, ": ", path, ": children of node ", x, " are out of range");
      BL_CHECK(index[x] >= 0 && index[x] < out.n_features, source, ": ", path, ".split_indices[", x, "] = ",
               index[x], " is out of range (num_feature = ", out.n_features, ")");
      const float c = static_cast<float>(cond[x]);
      tree.feature[id] = static_cast<int32_t>(index[x]);
      tree.threshold[id] = next_below(c);  // x < c  <=>  x <= next_below(c)
      tree.default_left[id] = dleft[x] != 0 ? 1 : 0;
      const int32_t l = tree.add_node();
      const int32_t r = tree.add_node();
      tree.left[id] = l;
      tree.right[id] = r;
      queue.push_back(left[x]);
      ours.push_back(l);
      queue.push_back(right[x]);
      ours.push_back(r);
    }
    out.model.trees.push_back(std::move(tree));
  }
  return out;
}

}  // namespace

XgboostImport import_xgboost_json(const std::string& text, const std::string& source) {
  try {
    return import_fields(text, source);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": corrupt XGBoost JSON model (a field of the wrong type: " + e.what() + ")");
  }
}

void xgboost_transform(const std::string& objective, std::vector<float>& raw, int64_t n, int64_t k) {
  if (objective == "multi:softprob" || objective == "multi:softmax") {
    raw_to_probability(raw, n, k);
    return;
  }
  const Link link = link_of(objective);
  for (float& v : raw) {
    if (link == Link::logit) v = bl::sigmoid(v);
    else if (link == Link::log) v = bl::exp(v);
  }
}

}  // namespace bl::ml
