// lm_training.h: `bitlearn verify --lm-training` (the cross-device language-model training evidence).
#pragma once

#include <cstdint>
#include <string>

namespace bl::cli {

struct LmTrainingOptions {
  int64_t steps = 200;
  int64_t switch_every = 50;  // steps between the device switches of the cpu-cuda-cpu route
  std::string routes;  // comma-separated route names ("" or "all": every route)
  std::string dir;     // scratch folder ("": a new temporary one)
  std::string json;    // all route records as JSON ("": none)
  std::string corpus;  // folder of the fortunes files ("": Debian's /usr/share/games/fortunes)
};

// Runs the evidence of bitlearn/lm_evidence.h, prints one line per route and the
// `lm-training digest`. Returns the exit code: 0 identical, 1 divergent, 2 bad usage or missing data.
int run_lm_training(const LmTrainingOptions& options);

}  // namespace bl::cli
