// ml/progress.h: progress reports from long fits and predictions (the CLI draws them as a bar on
// stderr), and the warnings a fit gives (scikit-learn's ConvergenceWarning).
//
// An estimator calls report_progress(stage, done, total) from its iteration loop (host side, not
// per element), from any thread: calls are serialized, so a listener need not be thread-safe.
// Progress never changes results.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bl::ml {

// A listener receives (stage, done, total) with 0 <= done <= total; total may be 0 (unknown).
using ProgressListener = std::function<void(const std::string& stage, int64_t done, int64_t total)>;

// Installs the process-wide listener (an empty function removes it). Not thread-safe against
// concurrent fits; the CLI sets it once.
void set_progress_listener(ProgressListener listener);
// Forwards to the listener, if any.
void report_progress(const std::string& stage, int64_t done, int64_t total);

// The row loop of a long prediction (predict, predict_proba, decision_function, transform,
// score_samples): body(begin, end) for the blocks [0, block), [block, 2 block), ... of `rows`, in
// order on the calling thread, reporting (stage, end, rows) after each block. The blocks are the
// caller's own (fixed by the problem, never by the listener), so reporting changes no result.
template <class Body>
void for_row_blocks(const std::string& stage, int64_t rows, int64_t block, Body&& body) {
  if (block < 1) block = 1;
  for (int64_t begin = 0; begin < rows; begin += block) {
    const int64_t end = rows - begin > block ? begin + block : rows;
    body(begin, end);
    report_progress(stage, end, rows);
  }
}

// Warnings. A fit that finishes but may not have done what was asked (an iterative solver stopped by
// its iteration limit before meeting its tolerance) reports a warning; the fitted model is kept, as
// scikit-learn keeps it beside its ConvergenceWarning. A warning goes to the innermost
// WarningCollector alive on the reporting thread, or else to stderr as "bitlearn: warning: ...".
// Warnings never change results.
class WarningCollector {
 public:
  WarningCollector();
  ~WarningCollector();
  WarningCollector(const WarningCollector&) = delete;
  WarningCollector& operator=(const WarningCollector&) = delete;
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  friend void report_warning(const std::string& message);
  std::vector<std::string> messages_;
  WarningCollector* outer_;
};
void report_warning(const std::string& message);
// The convergence warning of an iterative solver: "<stage> stopped at max_iter=N before converging ...".
void warn_not_converged(const std::string& stage, int64_t max_iter);

}  // namespace bl::ml
