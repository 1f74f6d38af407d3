// ops.h: every Tensor-level operation of bitlearn (umbrella header).
//
// Each op validates its operands (shape, dtype, device) and throws bl::Error naming the op and the
// operand; it then runs on the operands' device. There is no silent fallback to another device.
#pragma once

#include "bitlearn/tensor.h"
#include "bitlearn/ops_elementwise.h"
#include "bitlearn/ops_shape.h"

#if __has_include("bitlearn/ops_reduce.h")
#include "bitlearn/ops_reduce.h"
#endif
#if __has_include("bitlearn/ops_matmul.h")
#include "bitlearn/ops_matmul.h"
#endif
#if __has_include("bitlearn/ops_train.h")
#include "bitlearn/ops_train.h"
#endif
