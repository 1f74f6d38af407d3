// tape.cpp: Var handles, recording of nodes and the reverse sweep.
#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "bitlearn/autograd.h"
#include "core/error.h"

namespace bl::ag {

namespace {
thread_local bool t_grad_enabled = true;
std::atomic<uint64_t> g_sequence{0};
}  // namespace

Var::Var(Tensor value, bool requires_grad) : impl_(std::make_shared<VarImpl>()) {
  BL_CHECK(value.defined(), "Var: the value is an undefined Tensor");
  BL_CHECK(!requires_grad || value.dtype() == DType::f32,
           "Var: only f32 values can require a gradient, got ", value.str());
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
}

Var Var::from_impl(std::shared_ptr<VarImpl> impl) {
  Var v;
  v.impl_ = std::move(impl);
  return v;
}

const Tensor& Var::value() const {
  BL_CHECK(impl_ != nullptr, "Var: use of an undefined Var");
  return impl_->value;
}

void Var::set_value(Tensor value) {
  BL_CHECK(impl_ != nullptr, "Var::set_value: undefined Var");
  BL_CHECK(value.shape() == impl_->value.shape(), "Var::set_value: shape ", shape_str(value.shape()),
           " differs from the current ", shape_str(impl_->value.shape()));
  impl_->value = std::move(value);
}

const Tensor& Var::grad() const {
  BL_CHECK(impl_ != nullptr, "Var: use of an undefined Var");
  return impl_->grad;
}

void Var::set_grad(Tensor grad) {
  BL_CHECK(impl_ != nullptr, "Var::set_grad: undefined Var");
  impl_->grad = std::move(grad);
}

void Var::zero_grad() {
  if (impl_) impl_->grad = Tensor();
}

bool Var::requires_grad() const { return impl_ != nullptr && impl_->requires_grad; }

NoGradGuard::NoGradGuard() : previous_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = previous_; }
bool grad_enabled() { return t_grad_enabled; }

Var record(const char* name, Tensor value, std::vector<Var> inputs, BackwardFn backward) {
  auto impl = std::make_shared<VarImpl>();
  impl->value = std::move(value);
  bool needs = false;
  if (t_grad_enabled)
    for (const Var& in : inputs) needs = needs || in.requires_grad();
  if (needs) {
    impl->requires_grad = true;
    auto node = std::make_shared<Node>();
    node->name = name;
    node->sequence = g_sequence.fetch_add(1);
    node->inputs = std::move(inputs);
    node->backward = std::move(backward);
    impl->node = std::move(node);
  }
  return Var::from_impl(std::move(impl));
}

namespace {

// Adds a gradient contribution: the first one is kept as is, later ones are added in arrival order.
void accumulate(Tensor& slot, const Tensor& g) {
  if (!slot.defined())
    slot = g;
  else
    slot = bl::add(slot, g);
}

}  // namespace

void backward(const Var& root) {
  BL_CHECK(root.defined(), "backward: the root is an undefined Var");
  BL_CHECK(root.value().numel() == 1, "backward: the root must hold one element (a loss), got ",
           root.value().str());
  BL_CHECK(root.value().dtype() == DType::f32, "backward: the root must be f32, got ",
           root.value().str());
  if (!root.requires_grad()) return;
  backward(root, Tensor::full(root.shape(), 1.0, DType::f32, root.device()));
}

void backward(const Var& root, const Tensor& seed) {
  BL_CHECK(root.defined(), "backward: the root is an undefined Var");
  BL_CHECK(seed.defined() && seed.shape() == root.shape() && seed.dtype() == DType::f32,
           "backward: the seed gradient must be f32 of the root's shape ", shape_str(root.shape()));
  if (!root.requires_grad()) return;
  if (!root.impl()->node) {
    accumulate(root.impl()->grad, seed);
    return;
  }
  // Every node reachable from the root.
  std::vector<Node*> nodes;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack{root.impl()->node.get()};
  seen.insert(stack.back());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    nodes.push_back(n);
    for (const Var& in : n->inputs) {
      Node* m = in.impl()->node.get();
      if (m != nullptr && seen.insert(m).second) stack.push_back(m);
    }
  }
  // Reverse creation order is a topological order (a node is created after its inputs).
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->sequence > b->sequence; });
  std::unordered_map<Node*, Tensor> pending;
  pending[root.impl()->node.get()] = seed;
  for (Node* n : nodes) {
    auto it = pending.find(n);
    if (it == pending.end()) continue;
    Tensor g = std::move(it->second);
    pending.erase(it);
    std::vector<Tensor> grads = n->backward(g);
    BL_CHECK(grads.size() == n->inputs.size(), "backward: the rule of ", n->name, " returned ",
             grads.size(), " gradients for ", n->inputs.size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      const Var& in = n->inputs[i];
      if (!in.requires_grad() || !grads[i].defined()) continue;
      BL_CHECK(grads[i].shape() == in.shape(), "backward: the rule of ", n->name,
               " gave a gradient of shape ", shape_str(grads[i].shape()), " for input ", i,
               " of shape ", shape_str(in.shape()));
      Node* m = in.impl()->node.get();
      if (m != nullptr)
        accumulate(pending[m], grads[i]);
      else
        accumulate(in.impl()->grad, grads[i]);
    }
  }
}

}  // namespace bl::ag
