// cmd_train_lm.h: the language-model path of `bitlearn train` (--model gpt2, llama or a preset
// of bitlearn/lm.h), which runs bl::lm::train.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "bitlearn/lm.h"

namespace bl::cli {

// The options of a language-model run as the command line gave them.
struct LmTrainArgs {
  lm::TrainOptions options;
  std::string sampler = "random";
  bool quiet = false;
};

// True when name is a model the language-model path trains: "gpt2", "llama" or a preset name.
bool is_lm_model(const std::string& name);

// Adds to cmd the options that only the language-model path reads, stored into args; returns
// them so that the classifier path can refuse them by name.
std::vector<CLI::Option*> add_lm_only_options(CLI::App* cmd, LmTrainArgs* args);

// Runs bl::lm::train: prints a start line (model, parameters, device, threads, steps, batch,
// sequence length, shards, micro-batches) and at the end the final loss, the final parameter and
// checkpoint SHA-256 and the tokens per second. Bad input throws bl::Error.
void run_lm_train(LmTrainArgs& args);

}  // namespace bl::cli
