// progress.cpp: the process-wide progress listener (see bitlearn/ml/progress.h).
#include "bitlearn/ml/progress.h"

#include <cstdio>
#include <mutex>

namespace bl::ml {

namespace {
ProgressListener& listener() {
  static ProgressListener l;
  return l;
}
}  // namespace

void set_progress_listener(ProgressListener l) { listener() = std::move(l); }

void report_progress(const std::string& stage, int64_t done, int64_t total) {
  // Serialized: a forest reports from the pool's threads, and a listener need not be thread-safe.
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (listener()) listener()(stage, done, total);
}

namespace {
thread_local WarningCollector* innermost = nullptr;
}  // namespace

WarningCollector::WarningCollector() : outer_(innermost) { innermost = this; }
WarningCollector::~WarningCollector() { innermost = outer_; }

void report_warning(const std::string& message) {
  if (innermost != nullptr) {
    innermost->messages_.push_back(message);
  } else {
    std::fprintf(stderr, "bitlearn: warning: %s\n", message.c_str());
  }
}

void warn_not_converged(const std::string& stage, int64_t max_iter) {
  report_warning(stage + " stopped at max_iter=" + std::to_string(max_iter) +
                 " before converging; raise max_iter, loosen tol, or scale the features (ConvergenceWarning)");
}

}  // namespace bl::ml
