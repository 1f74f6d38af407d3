// op_profile.cpp: the per-op totals of op_profile.h and their print-out at exit.
#include "ops/op_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/allocator.h"

namespace bl::op_profile {
namespace {

struct Totals {
  std::mutex mu;
  std::map<std::string, std::pair<int64_t, double>> by_name;  // calls, seconds
};

Totals& totals() {
  static Totals* t = new Totals();  // never destroyed: ops may run during static destruction
  return *t;
}

void print_totals() {
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<std::pair<std::string, std::pair<int64_t, double>>> rows(t.by_name.begin(), t.by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  double all = 0.0;
  for (const auto& r : rows) all += r.second.second;
  std::fprintf(stderr, "op profile (BITLEARN_OP_PROFILE=1): %.3f s in %zu ops\n", all, rows.size());
  std::fprintf(stderr, "%12s %10s %9s %6s  %s\n", "seconds", "calls", "us/call", "share", "op");
  for (const auto& r : rows) {
    const double s = r.second.second;
    const int64_t n = r.second.first;
    std::fprintf(stderr, "%12.4f %10lld %9.1f %5.1f%%  %s\n", s, static_cast<long long>(n), 1e6 * s / n,
                 all > 0 ? 100.0 * s / all : 0.0, r.first.c_str());
  }
}

}  // namespace

bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("BITLEARN_OP_PROFILE");
    const bool yes = v != nullptr && std::strcmp(v, "1") == 0;
    if (yes) std::atexit(print_totals);
    return yes;
  }();
  return on;
}

void wait(Device d) { synchronize(d); }

void add(const std::string& name, double seconds) {
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.mu);
  auto& e = t.by_name[name];
  e.first += 1;
  e.second += seconds;
}

}  // namespace bl::op_profile
