// train.cpp: the training loop (classification by default) with checkpoints and resumption.
#include "bitlearn/nn/train.h"

#include <sys/stat.h>

#include "bitlearn/nn/checkpoint.h"
#include "bitlearn/nn/loss.h"
#include "core/error.h"

namespace bl::nn {

namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TrainResult train_classifier(Module& model, Optimizer& optimizer, const Dataset& data,
                             const TrainConfig& config) {
  BL_CHECK(data.size() > 0, "train_classifier: empty data set");
  BL_CHECK(config.batch_size >= 1 && config.batch_size <= data.size(), "train_classifier: batch_size ",
           config.batch_size, " must lie in [1, ", data.size(), "]");
  TrainResult result;
  std::map<std::string, std::string> extra = config.checkpoint_metadata;
  extra["rng.data_seed"] = std::to_string(config.data_seed);
  if (config.resume && !config.checkpoint_path.empty() && file_exists(config.checkpoint_path)) {
    CheckpointInfo info = load_checkpoint(config.checkpoint_path, model, optimizer);
    auto it = info.metadata.find("rng.data_seed");
    BL_CHECK(it != info.metadata.end() && it->second == extra["rng.data_seed"], "train_classifier: checkpoint '",
             config.checkpoint_path, "' was written with another data seed");
    result.first_step = info.step;
  }
  Device device = data.images.device();
  model.train(true);
  for (int64_t step = result.first_step; step < config.steps; ++step) {
    Tensor idx = batch_indices(data.size(), config.batch_size, step, config.data_seed).to(device);
    Tensor x = bl::index_select(data.images, 0, idx).reshape(config.input_shape);
    Tensor y = bl::index_select(data.labels, 0, idx);
    model.set_step(static_cast<uint64_t>(step));
    optimizer.zero_grad();
    ag::Var logits = model.forward(ag::Var(x));
    ag::Var loss = config.loss ? config.loss(logits, y) : cross_entropy(logits, y, config.label_smoothing);
    float loss_value = static_cast<float>(loss.item());
    check_finite_loss(loss_value, static_cast<uint64_t>(step));
    ag::backward(loss);
    if (config.clip_norm > 0.0f) clip_grad_norm(optimizer.params(), config.clip_norm);
    optimizer.set_lr(config.schedule.lr(step));
    optimizer.step();
    result.losses.push_back(loss_value);
    if (config.on_step) config.on_step(step, loss_value);
    bool last = step + 1 == config.steps;
    bool periodic = config.checkpoint_every > 0 && (step + 1) % config.checkpoint_every == 0;
    if (!config.checkpoint_path.empty() && (last || periodic))
      save_checkpoint(config.checkpoint_path, model, optimizer, step + 1, extra);
  }
  return result;
}

double evaluate_accuracy(Module& model, const Dataset& data, const Shape& input_shape, int64_t batch_size) {
  BL_CHECK(data.size() > 0, "evaluate_accuracy: empty data set");
  ag::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  int64_t correct = 0, n = data.size();
  for (int64_t start = 0; start < n; start += batch_size) {
    int64_t end = std::min(n, start + batch_size);
    Tensor x = data.images.slice(0, start, end).reshape(input_shape);
    Tensor pred = bl::argmax(model.forward(ag::Var(x)).value(), 1);
    Tensor hit = bl::cast(bl::eq(pred, data.labels.slice(0, start, end)), DType::f32);
    correct += static_cast<int64_t>(bl::sum(hit).item());
  }
  model.train(was_training);
  return static_cast<double>(correct) / static_cast<double>(n);
}

}  // namespace bl::nn
