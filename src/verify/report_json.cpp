// report_json.cpp: the JSON report of `bitlearn verify --json` and `bitlearn compare`.
//
// Format "bitlearn.verify.report.v1":
//   { "format", "version", "contract_profile", "suite", "threads", "cpu_isa",
//     "runs": [ { "device", "digest", "seconds",
//                 "checks": [ { "name", "state", "hash", "expected", "reason", "seconds" } ] } ],
//     "skipped_devices": [ "..." ], "cross_device_divergences": [ "..." ],
//     "digest": <digest of runs[0]> }
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bitlearn/io.h"
#include "bitlearn/verify.h"
#include "core/error.h"
#include "io/json_array.h"
#include "io/json_number.h"

namespace bl::verify {

namespace {

constexpr const char* kReportFormat = "bitlearn.verify.report.v1";

bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

State parse_state(const std::string& s, const std::string& path) {
  if (s == "IDENTICAL") return State::identical;
  if (s == "DIVERGENT") return State::divergent;
  if (s == "SKIPPED") return State::skipped;
  throw Error("verify report " + path + ": unknown check state '" + s + "'");
}

// Reads a required member of the given JSON type, with an error naming the file and the member.
const nlohmann::json& member(const nlohmann::json& obj, const char* key, nlohmann::json::value_t type,
                             const std::string& path) {
  BL_CHECK(obj.is_object() && obj.contains(key), "verify report ", path, ": missing member '", key,
           "'");
  const nlohmann::json& v = obj.at(key);
  bool ok = v.type() == type ||
            (type == nlohmann::json::value_t::number_float && v.is_number()) ||
            (type == nlohmann::json::value_t::number_integer && v.is_number_integer());
  BL_CHECK(ok, "verify report ", path, ": member '", key, "' has the wrong type (", v.type_name(),
           ")");
  return v;
}

}  // namespace

void write_report_json(const Report& report, const std::string& path) {
  nlohmann::ordered_json j;
  j["format"] = kReportFormat;
  j["version"] = report.version;
  j["contract_profile"] = report.contract_profile;
  j["suite"] = suite_name(report.suite);
  j["threads"] = report.threads;
  j["cpu_isa"] = report.cpu_isa;
  j["runs"] = json_object_array(report.runs, [](const DeviceRun& run, nlohmann::ordered_json& r) {
    r["device"] = run.device;
    r["digest"] = run.digest;
    r["seconds"] = run.seconds;
    r["checks"] = json_object_array(run.checks, [](const CheckResult& c, nlohmann::ordered_json& cj) {
      cj["name"] = c.name;
      cj["state"] = state_name(c.state);
      cj["hash"] = c.hash;
      cj["expected"] = c.expected;
      cj["reason"] = c.reason;
      if (c.cpu_only) cj["cpu_only"] = true;
      cj["seconds"] = c.seconds;
    });
  });
  j["skipped_devices"] = report.skipped_devices;
  j["cross_device_divergences"] = report.cross_device_divergences;
  j["digest"] = report.runs.empty() ? std::string() : report.runs[0].digest;

  // Atomic (a reader never sees half a file); a device such as /dev/stdout is written in place.
  write_file_atomic(path, j.dump(2) + "\n", "verify --json report");
}

Report read_report_json(const std::string& path) {
  const std::string text = read_file_text(path, "verify report");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error("verify report " + path + ": not valid JSON (" + e.what() + ")");
  }
  using vt = nlohmann::json::value_t;
  BL_CHECK(j.is_object(), "verify report ", path, ": the top level is not a JSON object");
  std::string format = member(j, "format", vt::string, path).get<std::string>();
  BL_CHECK(format == kReportFormat, "verify report ", path, ": format is '", format, "', expected '",
           kReportFormat, "'");
  Report r;
  r.version = member(j, "version", vt::string, path).get<std::string>();
  r.contract_profile = member(j, "contract_profile", vt::string, path).get<std::string>();
  std::string suite = member(j, "suite", vt::string, path).get<std::string>();
  BL_CHECK(suite == "quick" || suite == "full", "verify report ", path, ": unknown suite '", suite,
           "'");
  r.suite = suite == "quick" ? Suite::quick : Suite::full;
  r.threads = io::json_integer<int>(member(j, "threads", vt::number_integer, path), "verify report " + path + ": threads");
  if (j.contains("cpu_isa") && j["cpu_isa"].is_string()) r.cpu_isa = j["cpu_isa"];
  // A name seen twice would let one entry hide the other (compare would read only one of them), so a
  // report holding a device run or a check twice is corrupt.
  std::set<std::string> devices;
  for (const auto& rj : member(j, "runs", vt::array, path)) {
    DeviceRun run;
    run.device = member(rj, "device", vt::string, path).get<std::string>();
    BL_CHECK(devices.insert(run.device).second, "verify report ", path, ": corrupt report: device run '",
             run.device, "' appears twice");
    std::set<std::string> names;
    run.digest = member(rj, "digest", vt::string, path).get<std::string>();
    BL_CHECK(is_hex64(run.digest), "verify report ", path, ": device ", run.device,
             " has a malformed digest");
    for (const auto& cj : member(rj, "checks", vt::array, path)) {
      CheckResult c;
      c.name = member(cj, "name", vt::string, path).get<std::string>();
      BL_CHECK(names.insert(c.name).second, "verify report ", path, ": corrupt report: check '", c.name,
               "' appears twice in device run '", run.device, "'");
      c.device = run.device;
      c.state = parse_state(member(cj, "state", vt::string, path).get<std::string>(), path);
      c.hash = member(cj, "hash", vt::string, path).get<std::string>();
      BL_CHECK(c.hash.empty() || is_hex64(c.hash), "verify report ", path, ": check ", c.name,
               " has a malformed hash");
      if (cj.contains("expected") && cj["expected"].is_string()) c.expected = cj["expected"];
      if (cj.contains("reason") && cj["reason"].is_string()) c.reason = cj["reason"];
      if (cj.contains("cpu_only") && cj["cpu_only"].is_boolean()) c.cpu_only = cj["cpu_only"];
      // A check's state must follow from its hashes: IDENTICAL means the hash the program expects.
      BL_CHECK(c.state != State::identical || (!c.hash.empty() && c.hash == c.expected), "verify report ", path,
               ": self-contradicting report: check '", c.name, "' in device run '", run.device,
               "' is marked IDENTICAL but its hash ", c.hash.empty() ? std::string("is empty") : c.hash,
               " is not the expected ", c.expected.empty() ? std::string("(none recorded)") : c.expected);
      BL_CHECK(c.state != State::divergent || !c.hash.empty(), "verify report ", path,
               ": self-contradicting report: check '", c.name, "' in device run '", run.device,
               "' is marked DIVERGENT but has no hash");
      run.checks.push_back(c);
    }
    // The digest is a function of the check hashes: recomputed here, so a report whose hashes were
    // changed cannot keep claiming the digest of the run that wrote it.
    const std::string recomputed = suite_digest(run.checks);
    BL_CHECK(recomputed == run.digest, "verify report ", path, ": self-contradicting report: device run '",
             run.device, "' claims digest ", run.digest, " but its check hashes give ", recomputed);
    r.runs.push_back(run);
  }
  BL_CHECK(!r.runs.empty(), "verify report ", path, ": no device runs");
  if (j.contains("digest")) {
    BL_CHECK(j["digest"].is_string() && j["digest"].get<std::string>() == r.runs[0].digest, "verify report ",
             path, ": self-contradicting report: the top-level digest is not the digest of its first device run (",
             r.runs[0].digest, ")");
  }
  if (j.contains("skipped_devices") && j["skipped_devices"].is_array())
    for (const auto& s : j["skipped_devices"])
      if (s.is_string()) r.skipped_devices.push_back(s.get<std::string>());
  if (j.contains("cross_device_divergences") && j["cross_device_divergences"].is_array())
    for (const auto& s : j["cross_device_divergences"])
      if (s.is_string()) r.cross_device_divergences.push_back(s.get<std::string>());
  return r;
}

std::vector<std::string> compare_reports(const Report& a, const Report& b) {
  std::vector<std::string> diffs;
  if (a.contract_profile != b.contract_profile)
    diffs.push_back("contract profile: A " + a.contract_profile + " != B " + b.contract_profile);
  if (a.suite != b.suite)
    diffs.push_back(std::string("suite: A ") + suite_name(a.suite) + " != B " + suite_name(b.suite) +
                    " (their hashes are not comparable)");
  for (const DeviceRun& ra : a.runs) {
    for (const DeviceRun& rb : b.runs) {
      const std::string tag_a = "A[" + ra.device + "]";
      const std::string tag_b = "B[" + rb.device + "]";
      for (const CheckResult& ca : ra.checks) {
        const CheckResult* cb = nullptr;
        for (const CheckResult& c : rb.checks)
          if (c.name == ca.name) cb = &c;
        if (cb == nullptr) {
          diffs.push_back(ca.name + ": only in " + tag_a);
        } else if (ca.hash.empty() || cb->hash.empty()) {
          diffs.push_back(ca.name + ": not run on " + (ca.hash.empty() ? tag_a : tag_b) + " (" +
                          (ca.hash.empty() ? ca.reason : cb->reason) + ")");
        } else if (ca.hash != cb->hash) {
          diffs.push_back(ca.name + ": " + tag_a + " " + ca.hash + " != " + tag_b + " " + cb->hash);
        }
      }
      for (const CheckResult& cb : rb.checks) {
        bool found = false;
        for (const CheckResult& c : ra.checks) found = found || c.name == cb.name;
        if (!found) diffs.push_back(cb.name + ": only in " + tag_b);
      }
    }
  }
  return diffs;
}

}  // namespace bl::verify
