// autograd.h: reverse-mode automatic differentiation over the Tensor ops.
//
// A Var holds a Tensor value and, when it takes part in a differentiable computation, the node of
// the tape that made it. Every forward and every backward rule is built from the ops of
// bitlearn/ops.h, so gradients are bitwise identical on every device and thread count. backward()
// walks the nodes in reverse creation order; where a value feeds several consumers, their gradient
// contributions are added in that order (latest consumer first), a fixed function of the graph.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/ops.h"
#include "bitlearn/tensor.h"

namespace bl::ag {

struct VarImpl;
struct Node;

// A differentiable value: a shared handle (copies refer to the same value, gradient and node).
class Var {
 public:
  Var() = default;
  // A leaf holding value; requires_grad marks it as a parameter whose .grad() backward fills.
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  // The current value (a Tensor view; replacing it with set_value keeps the Var's identity).
  const Tensor& value() const;
  // Replaces the value of a leaf (optimizers use this); the shape must stay the same.
  void set_value(Tensor value);
  // The accumulated gradient of a leaf (undefined until backward reached it).
  const Tensor& grad() const;
  void set_grad(Tensor grad);
  // Forgets the gradient (the next backward starts from nothing).
  void zero_grad();
  bool requires_grad() const;
  const Shape& shape() const { return value().shape(); }
  int64_t dim(int64_t d) const { return value().dim(d); }
  Device device() const { return value().device(); }
  // The value's single element as double (a host read).
  double item() const { return value().item(); }

  // Internal: the implementation record.
  const std::shared_ptr<VarImpl>& impl() const { return impl_; }
  static Var from_impl(std::shared_ptr<VarImpl> impl);

 private:
  std::shared_ptr<VarImpl> impl_;
};

// One recorded operation: its inputs and the rule mapping the output gradient to input gradients
// (one Tensor per input; undefined where an input needs none).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_out)>;

struct Node {
  const char* name = "";
  uint64_t sequence = 0;       // creation order on the tape
  std::vector<Var> inputs;
  BackwardFn backward;
};

struct VarImpl {
  Tensor value;
  Tensor grad;
  bool requires_grad = false;
  std::shared_ptr<Node> node;  // null for leaves
};

// Records an op: returns a Var holding value; when gradients are enabled and some input requires
// one, a node with the backward rule joins the tape.
Var record(const char* name, Tensor value, std::vector<Var> inputs, BackwardFn backward);

// Computes d(root)/d(leaf) for every leaf with requires_grad reachable from root (a 1-element Var)
// and adds it to that leaf's grad. Throws bl::Error when root is not a single element.
void backward(const Var& root);
// The same from a root of any shape, seeded with d(loss)/d(root) = seed (f32, root's shape): the
// vector-Jacobian product, used by activation recomputation.
void backward(const Var& root, const Tensor& seed);

// While an instance lives, ops on this thread record nothing (inference, optimizer updates).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool grad_enabled();

// ---- differentiable ops (each forward is the bitlearn op of the same name) ----
// Binary ops broadcast like bitlearn/ops_elementwise.h; gradients are summed over broadcast dims.
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
Var neg(const Var& x);
// x * s and x + s for a float scalar s (no gradient for s).
Var scale(const Var& x, float s);
Var add_scalar(const Var& x, float s);

Var relu(const Var& x);
Var tanh(const Var& x);
Var sigmoid(const Var& x);
Var gelu(const Var& x);
Var silu(const Var& x);
Var exp(const Var& x);
Var log(const Var& x);
Var square(const Var& x);
Var sqrt(const Var& x);
Var rsqrt(const Var& x);

// Reductions (bitlearn/ops_reduce.h schedules).
Var sum(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var mean(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var softmax(const Var& x, int64_t dim = -1);
Var log_softmax(const Var& x, int64_t dim = -1);

// Matrix products (bitlearn/ops_matmul.h): a [M, K] x b [K, N] (transposes as in bl::matmul).
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);

// Views and copies.
Var reshape(const Var& x, const Shape& shape);
Var permute(const Var& x, const std::vector<int64_t>& dims);
Var slice(const Var& x, int64_t dim, int64_t start, int64_t end);
Var concat(const std::vector<Var>& xs, int64_t dim);
// Rows of weight [V, D] picked by ids (any shape): out = ids.shape + [D]. The weight gradient is
// bl::embedding_backward (a scatter-add in ascending position order, no atomics).
Var embedding(const Var& weight, const Tensor& ids);
// Elementwise x * mask for a constant mask (dropout): no gradient for mask.
Var mul_constant(const Var& x, const Tensor& mask);

// The maximum over dim of x (first maximum gets the gradient, as bl::argmax picks it).
Var amax(const Var& x, int64_t dim);

}  // namespace bl::ag

namespace bl::ag {
// Batched product of 3-d a and b (bl::bmm, same batch extent on both sides).
Var bmm(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);
}  // namespace bl::ag

namespace bl::ag {
// |x|; the gradient is sign(x) g (0 at x = 0).
Var abs(const Var& x);
}  // namespace bl::ag
