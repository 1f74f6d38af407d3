// progress_bar.cpp: ProgressBar (progress_bar.h).
#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

#include "bitlearn/ml/progress.h"

namespace bl::cli {

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled && ::isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar::~ProgressBar() {
  if (listening_) bl::ml::set_progress_listener({});
  clear();
}

void ProgressBar::update(const std::string& stage, int64_t done, int64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::milliseconds(500)) return;
  if (drawn_ && now - last_ < std::chrono::milliseconds(100) && done != total) return;
  last_ = now;
  drawn_ = true;
  const int width = 30;
  const int filled = total > 0 ? static_cast<int>(width * done / total) : 0;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(width, '.');
  if (total > 0) {
    std::fprintf(stderr, "\r[%s] %3d%% %-32s", bar.c_str(), static_cast<int>(100 * done / total), stage.c_str());
  } else {
    std::fprintf(stderr, "\r[%s] %lld %-32s", bar.c_str(), static_cast<long long>(done), stage.c_str());
  }
  std::fflush(stderr);
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%*s\r", 72, "");
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressBar::listen_to_library() {
  if (!enabled_) return;
  listening_ = true;
  bl::ml::set_progress_listener(
      [this](const std::string& stage, int64_t done, int64_t total) { update(stage, done, total); });
}

}  // namespace bl::cli
