// progress_bar.h: the progress bar the program draws on stderr for long fits, predictions and
// generations: "[#####.........]  45% stage", at most every 100 ms, once the work has run 0.5 s
// (short work draws nothing), and only when stderr is a terminal (a log file or a pipe gets none).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bl::cli {

class ProgressBar {
 public:
  // enabled: the caller's wish (false with --quiet); the bar is drawn only on a terminal.
  explicit ProgressBar(bool enabled);
  ~ProgressBar();  // clears the bar if one was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // done of total (total <= 0: a count without an end).
  void update(const std::string& stage, int64_t done, int64_t total);
  // Clears the bar now (before printing a summary).
  void clear();
  // While this object lives, the library's progress reports (bl::ml::report_progress) draw it.
  void listen_to_library();

 private:
  bool enabled_, drawn_ = false, listening_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace bl::cli
