// module.cpp: parameter and buffer registries of Module.
#include "bitlearn/nn/module.h"

#include "core/error.h"

namespace bl::nn {

NamedVars Module::named_parameters() const {
  NamedVars out = params_;
  for (const auto& [name, child] : children_)
    for (auto& [n, v] : child->named_parameters()) out.emplace_back(name + "." + n, v);
  return out;
}

std::vector<ag::Var> Module::parameters() const {
  std::vector<ag::Var> out;
  for (auto& [n, v] : named_parameters()) out.push_back(v);
  return out;
}

NamedVars Module::named_buffers() const {
  NamedVars out = buffers_;
  for (const auto& [name, child] : children_)
    for (auto& [n, v] : child->named_buffers()) out.emplace_back(name + "." + n, v);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::set_step(uint64_t step) {
  step_ = step;
  for (auto& [name, child] : children_) child->set_step(step);
}

void Module::to(Device device) {
  for (auto& [n, v] : named_parameters()) v.set_value(v.value().to(device));
  for (auto& [n, v] : named_buffers()) v.set_value(v.value().to(device));
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [name, v] : named_parameters()) n += v.value().numel();
  return n;
}

ag::Var Module::register_parameter(const std::string& name, Tensor value) {
  for (auto& [n, v] : params_) BL_CHECK(n != name, "Module: parameter '", name, "' registered twice");
  ag::Var v(std::move(value), true);
  params_.emplace_back(name, v);
  return v;
}

ag::Var Module::register_buffer(const std::string& name, Tensor value) {
  ag::Var v(std::move(value), false);
  buffers_.emplace_back(name, v);
  return v;
}

}  // namespace bl::nn
