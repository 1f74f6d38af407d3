// neural_training.h: `bitlearn verify --neural-training` (opt-in training workloads).
#pragma once

#include <string>
#include <vector>

namespace bl::cli {

// Runs the neural-training workloads (bitlearn/nn/evidence.h) on each device name ("cpu",
// "cuda:0", ...; "all" = cpu and every CUDA device) and compares their hashes with the committed
// ones and with each other. write_expected non-empty: writes the CPU hashes there instead.
// Returns the exit code (0 identical, 1 divergent, 3 incomplete, 2 bad usage).
int run_neural_training(const std::string& device, int threads, const std::string& data_dir,
                        const std::string& write_expected);

}  // namespace bl::cli
