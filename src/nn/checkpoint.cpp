// checkpoint.cpp: model + optimizer state + step in one safetensors file.
#include "bitlearn/nn/checkpoint.h"

#include <set>

#include "bitlearn/safetensors.h"
#include "core/error.h"

namespace bl::nn {

namespace {
constexpr const char* kFormat = "bitlearn.nn.checkpoint.v1";

// A step count of the metadata: decimal digits only (no sign, no trailing text), within int64.
int64_t count_field(const std::string& path, const char* key, const std::string& text) {
  BL_CHECK(!text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos,
           "load_checkpoint: '", path, "' has metadata field '", key, "' = '", text,
           "', expected a count of steps (a non-negative integer)");
  return std::stoll(text);
}
}

void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     int64_t step, const std::map<std::string, std::string>& extra) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : model.named_parameters()) tensors["param." + name] = v.value();
  for (const auto& [name, v] : model.named_buffers()) tensors["buffer." + name] = v.value();
  for (const auto& [name, t] : optimizer.state()) tensors["optim." + name] = t;
  std::map<std::string, std::string> meta = extra;
  meta["format"] = kFormat;
  meta["optimizer"] = optimizer.name();
  meta["optimizer.steps"] = std::to_string(optimizer.steps());
  meta["step"] = std::to_string(step);
  save_safetensors(path, tensors, meta);
}

CheckpointInfo load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer) {
  SafetensorsFile file = SafetensorsFile::open(path);
  const auto& meta = file.metadata();
  auto field = [&](const char* key) -> std::string {
    auto it = meta.find(key);
    BL_CHECK(it != meta.end(), "load_checkpoint: '", path, "' lacks metadata field '", key,
             "' (not a bitlearn training checkpoint?)");
    return it->second;
  };
  BL_CHECK(field("format") == kFormat, "load_checkpoint: '", path, "' has format '", field("format"),
           "', expected '", kFormat, "'");
  BL_CHECK(field("optimizer") == optimizer.name(), "load_checkpoint: '", path, "' holds state of optimizer '",
           field("optimizer"), "' but the optimizer is '", optimizer.name(), "'");
  // Counts first: a bad count is named as such, before any tensor is read.
  CheckpointInfo info;
  info.step = count_field(path, "step", field("step"));
  const int64_t optimizer_steps = count_field(path, "optimizer.steps", field("optimizer.steps"));
  // The training loops take one optimizer step per training step and save both counts together.
  BL_CHECK(optimizer_steps == info.step, "load_checkpoint: '", path, "' has step ", info.step,
           " but optimizer.steps ", optimizer_steps, " (they are saved equal; the file was altered or mixed)");
  std::set<std::string> used;
  // The model's values are set only once everything, the optimizer state included, is accepted.
  std::vector<std::pair<ag::Var, Tensor>> values;
  auto load_into = [&](const std::string& key, ag::Var v) {
    BL_CHECK(file.has(key), "load_checkpoint: '", path, "' lacks tensor '", key,
             "' (a checkpoint of another model?)");
    BL_CHECK(file.shape(key) == v.shape(), "load_checkpoint: tensor '", key, "' in '", path, "' has shape ",
             shape_str(file.shape(key)), " but the model expects ", shape_str(v.shape()));
    BL_CHECK(file.dtype(key) == "F32", "load_checkpoint: tensor '", key, "' in '", path, "' is ",
             file.dtype(key), ", expected F32");
    values.emplace_back(v, file.get(key).to(v.device()));
    used.insert(key);
  };
  for (const auto& [name, v] : model.named_parameters()) load_into("param." + name, v);
  for (const auto& [name, v] : model.named_buffers()) load_into("buffer." + name, v);
  std::map<std::string, Tensor> state;
  for (const std::string& key : file.names()) {
    if (key.rfind("optim.", 0) == 0) {
      // Every optimizer slot is saved as F32; another dtype means the file was altered (a reader
      // would otherwise widen it and continue from other values).
      BL_CHECK(file.dtype(key) == "F32", "load_checkpoint: tensor '", key, "' in '", path, "' is ",
               file.dtype(key), ", expected F32 (optimizer state is saved as F32)");
      state[key.substr(6)] = file.get(key);
      used.insert(key);
    }
  }
  for (const std::string& key : file.names())
    BL_CHECK(used.count(key) == 1, "load_checkpoint: '", path, "' holds tensor '", key,
             "' that this model does not have (a checkpoint of another model?)");
  try {
    optimizer.load_state(state, optimizer_steps);
  } catch (const Error& e) {
    throw Error(detail::concat("load_checkpoint: '", path, "': ", e.what(), " (entry X is the tensor 'optim.X')"));
  }
  for (auto& [var, value] : values) var.set_value(value);
  info.metadata = meta;
  return info;
}

}  // namespace bl::nn
