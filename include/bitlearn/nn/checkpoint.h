// checkpoint.h: training checkpoints as one safetensors file.
//
// Tensors: "param.<name>" (model parameters), "buffer.<name>" (e.g. BatchNorm running statistics)
// and "optim.<slot>.<name>" (optimizer state). Metadata: format, optimizer name, step and the RNG
// counters (seeds; every random draw of bitlearn is a pure function of seed and step, so the step
// is the counter). The same state always gives the same bytes; the file is written atomically.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "bitlearn/nn/module.h"
#include "bitlearn/nn/optim.h"

namespace bl::nn {

struct CheckpointInfo {
  int64_t step = 0;
  std::map<std::string, std::string> metadata;  // every entry, incl. the caller's extras
};

// Writes model + optimizer state + step (+ extra metadata, e.g. "rng.seed") to path atomically.
void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     int64_t step, const std::map<std::string, std::string>& extra = {});
// Restores model and optimizer (on their current devices) from path. A file from another model
// (a missing, extra or misshapen tensor), another optimizer, or a truncated file: bl::Error naming
// the path and the entry.
CheckpointInfo load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer);

}  // namespace bl::nn
