// Text and JSON reports of the accuracy run.
#include "report.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace mathcheck {

namespace {

std::string hex(uint32_t b) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", b);
  return buf;
}

std::string value(uint32_t b) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(bl::float_of(b)));
  return buf;
}

}  // namespace

void print_report(const FnReport& r, bool verbose) {
  const bool binary = bl::math_arity(r.fn) == 2;
  std::printf("%-10s %s  inputs %" PRIu64 "  max error %.6f ulp  not correctly rounded %" PRIu64
              "  not faithful %" PRIu64 "  wrong zero sign %" PRIu64 "  NaN mismatch %" PRIu64
              "  non-canonical NaN %" PRIu64 "  mpfr %" PRIu64 "  %.1f s\n",
              bl::math_fn_name(r.fn), r.passed() ? "OK  " : "FAIL", r.inputs, r.max_err_ulps,
              r.not_correctly_rounded, r.not_faithful, r.wrong_zero_sign, r.nan_mismatch,
              r.noncanonical_nan, r.mpfr_evaluations, r.wall_seconds);
  if (binary)
    std::printf("           worst: x=%s (%s) y=%s (%s) -> ours %s (%s), expected %s (%s)\n",
                hex(bl::bits_of(r.worst_x)).c_str(), value(bl::bits_of(r.worst_x)).c_str(),
                hex(bl::bits_of(r.worst_y)).c_str(), value(bl::bits_of(r.worst_y)).c_str(),
                hex(r.worst_ours).c_str(), value(r.worst_ours).c_str(),
                hex(r.worst_expected).c_str(), value(r.worst_expected).c_str());
  else
    std::printf("           worst: x=%s (%s) -> ours %s (%s), expected %s (%s)\n",
                hex(bl::bits_of(r.worst_x)).c_str(), value(bl::bits_of(r.worst_x)).c_str(),
                hex(r.worst_ours).c_str(), value(r.worst_ours).c_str(),
                hex(r.worst_expected).c_str(), value(r.worst_expected).c_str());
  size_t shown = 0, hidden = 0;
  for (const SpecialResult& s : r.specials) {
    const bool named = s.input.label != "integer" && s.input.label != "half" &&
                       s.input.label != "power of two" && s.input.label != "near k*pi/2" &&
                       s.input.label != "grid";
    if (!(verbose || !s.ok || named)) {
      ++hidden;
      continue;
    }
    if (binary)
      std::printf("    %s (%s), %s (%s) -> %s expected %s %s [%s]\n",
                  hex(bl::bits_of(s.input.x)).c_str(), value(bl::bits_of(s.input.x)).c_str(),
                  hex(bl::bits_of(s.input.y)).c_str(), value(bl::bits_of(s.input.y)).c_str(),
                  hex(s.ours).c_str(), hex(s.expected).c_str(), s.ok ? "ok" : "MISMATCH",
                  s.input.label.c_str());
    else
      std::printf("    %s %-14s -> %s expected %s %-8s %.3f ulp [%s]\n",
                  hex(bl::bits_of(s.input.x)).c_str(), value(bl::bits_of(s.input.x)).c_str(),
                  hex(s.ours).c_str(), hex(s.expected).c_str(), s.ok ? "ok" : "MISMATCH",
                  s.err_ulps, s.input.label.c_str());
    ++shown;
  }
  if (hidden) std::printf("    (%zu more special values match; --verbose or --json lists them)\n", hidden);
}

void write_json(const std::string& path, const std::vector<FnReport>& reports,
                const CheckOptions& opts) {
  nlohmann::json j;
  j["mode"] = opts.exhaustive ? "exhaustive" : "sample";
  j["sample"] = opts.sample;
  j["oracle"] = opts.force_mpfr ? "mpfr" : "float64 with mpfr near rounding boundaries";
  bool all_ok = true;
  nlohmann::json fns = nlohmann::json::array();
  for (const FnReport& r : reports) {
    all_ok = all_ok && r.passed();
    nlohmann::json f;
    f["name"] = bl::math_fn_name(r.fn);
    f["passed"] = r.passed();
    f["inputs"] = r.inputs;
    f["max_error_ulps"] = r.max_err_ulps;
    f["worst"] = {{"x", hex(bl::bits_of(r.worst_x))},
                  {"ours", hex(r.worst_ours)},
                  {"expected", hex(r.worst_expected)}};
    if (bl::math_arity(r.fn) == 2) f["worst"]["y"] = hex(bl::bits_of(r.worst_y));
    f["not_correctly_rounded"] = r.not_correctly_rounded;
    f["not_faithful"] = r.not_faithful;
    f["wrong_zero_sign"] = r.wrong_zero_sign;
    f["nan_mismatch"] = r.nan_mismatch;
    f["noncanonical_nan"] = r.noncanonical_nan;
    f["mpfr_evaluations"] = r.mpfr_evaluations;
    f["wall_seconds"] = r.wall_seconds;
    nlohmann::json sp = nlohmann::json::array();
    for (const SpecialResult& s : r.specials) {
      nlohmann::json e = {{"x", hex(bl::bits_of(s.input.x))},
                          {"ours", hex(s.ours)},
                          {"expected", hex(s.expected)},
                          {"ok", s.ok},
                          {"label", s.input.label}};
      if (bl::math_arity(r.fn) == 2) e["y"] = hex(bl::bits_of(s.input.y));
      sp.push_back(e);
    }
    f["specials"] = sp;
    fns.push_back(f);
  }
  j["functions"] = fns;
  j["passed"] = all_ok;
  std::ofstream out(path);
  BL_CHECK(out.good(), "bitlearn_math_check: cannot open JSON output file '", path, "'");
  out << j.dump(1) << "\n";
  BL_CHECK(out.good(), "bitlearn_math_check: failed writing JSON output file '", path, "'");
}

}  // namespace mathcheck
