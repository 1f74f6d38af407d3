// module.h: the base class of every layer: named parameters, buffers, children, train/eval mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bitlearn/autograd.h"

namespace bl::nn {

using NamedVars = std::vector<std::pair<std::string, ag::Var>>;

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Maps the input to the output (shapes are documented by each layer).
  virtual ag::Var forward(const ag::Var& x) = 0;
  ag::Var operator()(const ag::Var& x) { return forward(x); }

  // Trainable parameters as ("child.name", Var) in registration order (a fixed order, which
  // optimizers and checkpoints follow).
  NamedVars named_parameters() const;
  std::vector<ag::Var> parameters() const;
  // Non-trainable state (BatchNorm running statistics), named like parameters.
  NamedVars named_buffers() const;
  // Training mode (batch statistics, dropout) or evaluation mode, for this module and its children.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // The global training step, which dropout masks depend on; set by the training loop.
  void set_step(uint64_t step);
  uint64_t step() const { return step_; }
  // Moves every parameter and buffer to device.
  void to(Device device);
  // Number of trainable scalars.
  int64_t num_parameters() const;

 protected:
  // Registers a trainable parameter holding value; returns its handle.
  ag::Var register_parameter(const std::string& name, Tensor value);
  // Registers a non-trainable buffer.
  ag::Var register_buffer(const std::string& name, Tensor value);
  // Registers a child module; returns it.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> child) {
    children_.emplace_back(name, child);
    return child;
  }

 private:
  NamedVars params_;
  NamedVars buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  uint64_t step_ = 0;
};

// The running stream counter for parameter initialization: each initialized tensor takes the next
// Philox stream under seed, so a model's initial weights are a pure function of (seed, layer order).
struct InitStream {
  uint64_t seed = 0;
  uint64_t next = 0;
  explicit InitStream(uint64_t s) : seed(s) {}
  uint64_t take() { return next++; }
};

}  // namespace bl::nn
