// `bitlearn compare A.json B.json`: compares two `bitlearn verify --json` reports (from different
// machines or devices) check by check, or two language-model training reports (`bitlearn train
// --report`, format bitlearn.lm.train.v1) step by step. Prints the first difference.
// A verify report must agree with itself (its digests are recomputed from its check hashes on reading).
// Exit codes: 0 identical; 1 different; 2 unreadable, corrupt, self-contradicting, or not comparable
// (two kinds of report, or two suites or contract profiles).
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "bitlearn/verify.h"
#include "command.h"
#include "core/error.h"
#include "bitlearn/io.h"
#include "io/json_number.h"

namespace {

constexpr const char* kLmFormat = "bitlearn.lm.train.v1";

// The JSON of the file at path, or a null value when it cannot be read or parsed (*why says which).
nlohmann::json read_json(const std::string& path, std::string* why) {
  std::string text;
  try {
    text = bl::read_file_text(path, "report");
  } catch (const bl::Error& e) {
    *why = e.what();
    return nullptr;
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    *why = "'" + path + "' is not JSON: " + e.what();
    return nullptr;
  }
}

bool is_lm_report(const nlohmann::json& j) {
  return j.is_object() && j.contains("format") && j["format"].is_string() && j["format"] == kLmFormat;
}

// One step of a training report: the fields that must agree, as strings ("" when absent).
struct LmStep {
  std::map<std::string, std::string> fields;
};

struct LmReport {
  std::string model, device, final_params_sha256, checkpoint_sha256;
  int64_t parameters = -1, last_step = 0;
  std::map<int64_t, LmStep> steps;
};

// The fields compared step by step, in the order a difference is reported.
const char* const kStepFields[] = {"loss_bits", "grad_norm_bits", "lr_bits", "val_loss_bits", "params_sha256"};

std::string str_field(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  BL_CHECK(j[key].is_string(), "field '", key, "' is not a string");
  return j[key].get<std::string>();
}

LmReport parse_lm_report(const nlohmann::json& j, const std::string& path) {
  LmReport r;
  try {
    r.model = str_field(j, "model");
    r.device = str_field(j, "device");
    r.final_params_sha256 = str_field(j, "final_params_sha256");
    r.checkpoint_sha256 = str_field(j, "checkpoint_sha256");
    if (j.contains("parameters")) r.parameters = bl::io::json_integer<int64_t>(j.at("parameters"), "parameters");
    r.last_step = bl::io::json_integer<int64_t>(j.at("last_step"), "last_step");
    BL_CHECK(j.at("steps").is_array(), "'steps' is not a list");
    for (const nlohmann::json& e : j.at("steps")) {
      BL_CHECK(e.is_object(), "an entry of 'steps' is not an object");
      const int64_t step = bl::io::json_integer<int64_t>(e.at("step"), "steps[].step");
      BL_CHECK(r.steps.count(step) == 0, "step ", step, " appears twice");
      LmStep s;
      for (const char* f : kStepFields) s.fields[f] = str_field(e, f);
      BL_CHECK(!s.fields["loss_bits"].empty(), "step ", step, " has no loss_bits");
      r.steps[step] = s;
    }
  } catch (const nlohmann::json::exception& e) {
    throw bl::Error(bl::detail::concat("'", path, "' is a corrupt language-model training report: ", e.what()));
  } catch (const bl::Error& e) {
    throw bl::Error(bl::detail::concat("'", path, "' is a corrupt language-model training report: ", e.what()));
  }
  return r;
}

std::string step_range(const LmReport& r) {
  if (r.steps.empty()) return "no steps";
  return "steps " + std::to_string(r.steps.begin()->first) + ".." + std::to_string(r.steps.rbegin()->first);
}

int compare_lm(const std::string& path_a, const nlohmann::json& ja, const std::string& path_b,
               const nlohmann::json& jb) {
  LmReport a, b;
  try {
    a = parse_lm_report(ja, path_a);
    b = parse_lm_report(jb, path_b);
  } catch (const bl::Error& e) {
    std::fprintf(stderr, "bitlearn compare: %s\n", e.what());
    return 2;
  }
  std::printf("A: %s (language-model training, %s on %s, %s)\n", path_a.c_str(), a.model.c_str(), a.device.c_str(),
              step_range(a).c_str());
  std::printf("B: %s (language-model training, %s on %s, %s)\n", path_b.c_str(), b.model.c_str(), b.device.c_str(),
              step_range(b).c_str());
  std::vector<int64_t> overlap;
  for (const auto& [step, s] : a.steps)
    if (b.steps.count(step)) overlap.push_back(step);
  if (overlap.empty()) {
    std::fprintf(stderr, "bitlearn compare: the reports have no step in common (A: %s, B: %s)\n",
                 step_range(a).c_str(), step_range(b).c_str());
    return 2;
  }
  const std::string range = std::to_string(overlap.front()) + ".." + std::to_string(overlap.back());
  if (overlap.size() != a.steps.size() || overlap.size() != b.steps.size())
    std::printf("overlap: steps %s (%zu steps in both reports)\n", range.c_str(), overlap.size());

  std::vector<std::string> diffs;
  auto differ = [&](const std::string& what, const std::string& va, const std::string& vb) {
    diffs.push_back(what + ": A " + (va.empty() ? "(none)" : va) + ", B " + (vb.empty() ? "(none)" : vb));
  };
  if (a.parameters >= 0 && b.parameters >= 0 && a.parameters != b.parameters)
    differ("parameters", std::to_string(a.parameters), std::to_string(b.parameters));
  size_t hashed = 0, differing_steps = 0;
  for (int64_t step : overlap) {
    const LmStep& sa = a.steps[step];
    const LmStep& sb = b.steps[step];
    bool step_differs = false;
    for (const char* f : kStepFields) {
      const std::string& va = sa.fields.at(f);
      const std::string& vb = sb.fields.at(f);
      if (va.empty() || vb.empty()) continue;  // compared where both reports have the field
      if (std::string(f) == "params_sha256") ++hashed;
      if (va != vb) {
        if (!step_differs) differ("step " + std::to_string(step) + " " + f, va, vb);
        step_differs = true;
      }
    }
    if (step_differs) ++differing_steps;
  }
  // The final hashes describe the end of each run: compared when both end at the same step.
  bool finals_compared = false;
  if (a.last_step == b.last_step) {
    finals_compared = true;
    if (!a.final_params_sha256.empty() && !b.final_params_sha256.empty() &&
        a.final_params_sha256 != b.final_params_sha256)
      differ("final_params_sha256", a.final_params_sha256, b.final_params_sha256);
    if (!a.checkpoint_sha256.empty() && !b.checkpoint_sha256.empty() && a.checkpoint_sha256 != b.checkpoint_sha256)
      differ("checkpoint_sha256", a.checkpoint_sha256, b.checkpoint_sha256);
  }
  if (diffs.empty()) {
    std::string finals;
    if (!finals_compared) {
      finals = "; final hashes not compared (A ends at step " + std::to_string(a.last_step) + ", B at " +
               std::to_string(b.last_step) + ")";
    } else {
      finals = "; final params sha256 " +
               (a.final_params_sha256.empty() || b.final_params_sha256.empty() ? std::string("not in both")
                                                                               : a.final_params_sha256);
      finals += ", checkpoint sha256 " +
                (a.checkpoint_sha256.empty() || b.checkpoint_sha256.empty() ? std::string("not in both")
                                                                            : a.checkpoint_sha256);
    }
    std::printf("IDENTICAL: %zu steps (%s): loss, grad_norm and lr bits agree, %zu params_sha256 agree%s\n",
                overlap.size(), range.c_str(), hashed, finals.c_str());
    return 0;
  }
  std::printf("first difference: %s\n", diffs[0].c_str());
  std::printf("%zu of %zu common steps differ; %zu difference(s):\n", differing_steps, overlap.size(), diffs.size());
  for (const std::string& d : diffs) std::printf("  %s\n", d.c_str());
  return 1;
}

int run_compare(const std::string& path_a, const std::string& path_b) {
  using namespace bl::verify;
  {
    std::string why_a, why_b;
    const nlohmann::json ja = read_json(path_a, &why_a);
    const nlohmann::json jb = read_json(path_b, &why_b);
    const bool lm_a = is_lm_report(ja), lm_b = is_lm_report(jb);
    if (lm_a && lm_b) return compare_lm(path_a, ja, path_b, jb);
    if (lm_a || lm_b) {
      const std::string& other = lm_a ? path_b : path_a;
      const std::string& why = lm_a ? why_b : why_a;
      if (!why.empty())
        std::fprintf(stderr, "bitlearn compare: %s\n", why.c_str());
      else
        std::fprintf(stderr,
                     "bitlearn compare: '%s' is a language-model training report (%s) but '%s' is not: "
                     "reports of different kinds cannot be compared\n",
                     (lm_a ? path_a : path_b).c_str(), kLmFormat, other.c_str());
      return 2;
    }
  }
  Report a, b;
  try {
    a = read_report_json(path_a);
    b = read_report_json(path_b);
  } catch (const bl::Error& e) {
    std::fprintf(stderr, "bitlearn compare: %s\n", e.what());
    return 2;
  }
  // A report without a single check result compares nothing: saying IDENTICAL would vouch for
  // checks that never ran.
  for (const auto* r : {&a, &b}) {
    size_t n = 0;
    for (const auto& run : r->runs) n += run.checks.size();
    if (n == 0) {
      std::fprintf(stderr, "bitlearn compare: '%s' holds no check results: nothing to compare\n",
                   (r == &a ? path_a : path_b).c_str());
      return 2;
    }
  }
  std::printf("A: %s (%s, suite %s, %zu device run(s), digest %s)\n", path_a.c_str(),
              a.contract_profile.c_str(), suite_name(a.suite), a.runs.size(), a.runs[0].digest.c_str());
  std::printf("B: %s (%s, suite %s, %zu device run(s), digest %s)\n", path_b.c_str(),
              b.contract_profile.c_str(), suite_name(b.suite), b.runs.size(), b.runs[0].digest.c_str());
  // Reports of two suites or two contract profiles hash different computations: every check would
  // "differ", and listing those differences would only hide that the reports cannot be compared.
  if (a.suite != b.suite || a.contract_profile != b.contract_profile) {
    std::fflush(stdout);
    std::fprintf(stderr, "bitlearn compare: not comparable: A is a %s report of %s, B a %s report of %s; "
                 "compare reports of the same suite and contract profile\n",
                 suite_name(a.suite), a.contract_profile.c_str(), suite_name(b.suite), b.contract_profile.c_str());
    return 2;
  }
  std::vector<std::string> diffs = compare_reports(a, b);
  if (diffs.empty()) {
    size_t n = 0;
    for (const auto& r : a.runs) n += r.checks.size();
    std::printf("IDENTICAL: every check hash agrees (%zu check results)\n", n);
    return 0;
  }
  std::printf("first difference: %s\n", diffs[0].c_str());
  std::printf("%zu difference(s):\n", diffs.size());
  for (const std::string& d : diffs) std::printf("  %s\n", d.c_str());
  return 1;
}

void setup(CLI::App& root) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* cmd = root.add_subcommand(
      "compare", "Compare two `bitlearn verify --json` reports, or two `bitlearn train --report` language-model "
                 "reports (exit 0 identical, 1 different, 2 unreadable, self-contradicting or not comparable)");
  cmd->add_option("reports", *paths, "A.json B.json")->required()->expected(2);
  cmd->callback([paths] {
    int code = run_compare((*paths)[0], (*paths)[1]);
    std::fflush(stdout);
    if (code != 0) throw bl::cli::CommandExit{code};
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
