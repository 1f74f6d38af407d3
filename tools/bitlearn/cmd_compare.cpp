// `bitlearn compare A.json B.json`: compares two `bitlearn verify --json` reports (from different
// machines or devices) check by check. Prints the first differing check, then every difference.
// Exit codes: 0 identical; 1 different; 2 unreadable or corrupt report.
#include <cstdio>
#include <string>

#include "bitlearn/verify.h"
#include "command.h"
#include "core/error.h"

namespace {

int run_compare(const std::string& path_a, const std::string& path_b) {
  using namespace bl::verify;
  Report a, b;
  try {
    a = read_report_json(path_a);
    b = read_report_json(path_b);
  } catch (const bl::Error& e) {
    std::fprintf(stderr, "bitlearn compare: %s\n", e.what());
    return 2;
  }
  std::printf("A: %s (%s, suite %s, %zu device run(s), digest %s)\n", path_a.c_str(),
              a.contract_profile.c_str(), suite_name(a.suite), a.runs.size(),
              a.runs[0].digest.substr(0, 16).c_str());
  std::printf("B: %s (%s, suite %s, %zu device run(s), digest %s)\n", path_b.c_str(),
              b.contract_profile.c_str(), suite_name(b.suite), b.runs.size(),
              b.runs[0].digest.substr(0, 16).c_str());
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
      "compare", "Compare two `bitlearn verify --json` reports (exit 0 identical, 1 different, 2 "
                 "unreadable)");
  cmd->add_option("reports", *paths, "A.json B.json")->required()->expected(2);
  cmd->callback([paths] {
    int code = run_compare((*paths)[0], (*paths)[1]);
    std::fflush(stdout);
    if (code != 0) throw bl::cli::CommandExit{code};
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
