// op_names.cpp: names of the elementwise ops, used in error messages.
#include "kernels/binary.h"
#include "kernels/unary.h"

namespace bl {

const char* unary_op_name(UnaryOp op) {
  static const char* const names[] = {
      "exp",  "expm1", "log",  "log1p", "log2",   "tanh",       "sigmoid", "erf",   "gelu",
      "gelu_tanh", "silu", "softplus", "sin", "cos", "rsqrt", "abs", "neg", "sqrt", "relu",
      "square", "reciprocal", "sign", "floor", "ceil", "round"};
  static_assert(sizeof(names) / sizeof(names[0]) == kUnaryOpCount, "one name per unary op");
  int k = static_cast<int>(op);
  return k >= 0 && k < kUnaryOpCount ? names[k] : "unary?";
}

const char* binary_op_name(BinaryOp op) {
  static const char* const names[] = {"add", "sub", "mul", "div", "maximum", "minimum", "pow"};
  int k = static_cast<int>(op);
  return k >= 0 && k < static_cast<int>(BinaryOp::count_) ? names[k] : "binary?";
}

const char* compare_op_name(CompareOp op) {
  static const char* const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  int k = static_cast<int>(op);
  return k >= 0 && k < static_cast<int>(CompareOp::count_) ? names[k] : "compare?";
}

}  // namespace bl
