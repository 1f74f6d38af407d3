// train.h: a minimal training loop with checkpoints and resumption: classification by default, any
// loss of a batch through TrainConfig::loss.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/nn/data.h"
#include "bitlearn/nn/module.h"
#include "bitlearn/nn/optim.h"
#include "bitlearn/nn/schedule.h"

namespace bl::nn {

struct TrainConfig {
  int64_t steps = 100;          // total steps of the run (a resumed run continues up to here)
  int64_t batch_size = 64;
  uint64_t data_seed = 1;       // shuffling seed
  LrSchedule schedule;
  float clip_norm = 0.0f;       // > 0: clip_grad_norm before each update
  float label_smoothing = 0.0f;
  Shape input_shape = {-1, 784};  // each batch of images is reshaped to this
  std::string checkpoint_path;  // non-empty: save here every checkpoint_every steps and at the end
  int64_t checkpoint_every = 0;
  bool resume = false;          // continue from checkpoint_path when it exists
  // Called after each step with (step, loss); may throw to stop.
  std::function<void(int64_t, float)> on_step;
  // The loss of a batch from the model's output and the batch's labels (the rows of data.labels);
  // empty: cross_entropy(output, labels, label_smoothing).
  std::function<ag::Var(const ag::Var& output, const Tensor& labels)> loss;
  // Written into each checkpoint beside rng.data_seed (which this loop sets and checks on resume).
  std::map<std::string, std::string> checkpoint_metadata;
};

struct TrainResult {
  int64_t first_step = 0;        // 0, or the resumed step
  std::vector<float> losses;     // the loss of each step run here
};

// Trains model on data (its tensors on the model's device) with config.loss (cross-entropy by
// default). Each step: batch indices by (data_seed, step), forward, loss, backward, optional clipping,
// optimizer step with lr = schedule.lr(step). A NaN or infinite loss throws bl::Error naming the step.
TrainResult train_classifier(Module& model, Optimizer& optimizer, const Dataset& data,
                             const TrainConfig& config);

// Fraction of samples whose argmax prediction equals the label (evaluation mode, batches of
// batch_size, inputs reshaped to input_shape).
double evaluate_accuracy(Module& model, const Dataset& data, const Shape& input_shape,
                         int64_t batch_size = 1000);

}  // namespace bl::nn
