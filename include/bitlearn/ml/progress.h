// ml/progress.h: progress reports from long fits (the CLI draws them as a bar on stderr).
//
// An estimator calls report_progress(stage, done, total) from its iteration loop (host side, not
// per element); the call is cheap when no listener is set. Progress never changes results.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace bl::ml {

// A listener receives (stage, done, total) with 0 <= done <= total; total may be 0 (unknown).
using ProgressListener = std::function<void(const std::string& stage, int64_t done, int64_t total)>;

// Installs the process-wide listener (an empty function removes it). Not thread-safe against
// concurrent fits; the CLI sets it once.
void set_progress_listener(ProgressListener listener);
// Forwards to the listener, if any.
void report_progress(const std::string& stage, int64_t done, int64_t total);

}  // namespace bl::ml
