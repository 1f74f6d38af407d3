// progress.cpp: the process-wide progress listener (see bitlearn/ml/progress.h).
#include "bitlearn/ml/progress.h"

namespace bl::ml {

namespace {
ProgressListener& listener() {
  static ProgressListener l;
  return l;
}
}  // namespace

void set_progress_listener(ProgressListener l) { listener() = std::move(l); }

void report_progress(const std::string& stage, int64_t done, int64_t total) {
  if (listener()) listener()(stage, done, total);
}

}  // namespace bl::ml
