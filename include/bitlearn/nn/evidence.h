// evidence.h: the neural-training workloads of `bitlearn verify --neural-training`.
//
// Each trains one model (MLP, CNN with BatchNorm / pooling / a residual block, LSTM classifier) on
// the first 4096 Fashion-MNIST training images for a few hundred steps on one device, and reports
// the SHA-256 of the per-step loss bit patterns and of the final checkpoint file. Equal hashes on
// every device and thread count are the evidence that training is bitwise reproducible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::nn {

struct NeuralWorkloadResult {
  std::string name;
  int64_t steps = 0;
  std::string loss_hash;        // SHA-256 of the little-endian loss bit patterns, step order
  std::string checkpoint_hash;  // SHA-256 of the final checkpoint file
  float first_loss = 0, last_loss = 0;
  double seconds = 0;
};

// "nn.mlp", "nn.cnn", "nn.lstm".
std::vector<std::string> neural_workload_names();
// Runs one workload on device; the checkpoint goes to scratch_dir. Throws bl::Error when the
// Fashion-MNIST files are missing from data_dir.
NeuralWorkloadResult run_neural_workload(const std::string& name, Device device,
                                         const std::string& data_dir, const std::string& scratch_dir);
// The committed expected hashes ("" when the workload has none): loss hash, checkpoint hash.
std::pair<std::string, std::string> neural_expected_hashes(const std::string& name);

}  // namespace bl::nn
