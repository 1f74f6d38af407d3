// math.h: the contract's elementary functions on binary32.
//
// Each function is built from binary32 + - * fma / sqrt, comparisons and integer bit operations in
// a fixed sequence, so the same source gives the same bits on every backend. Accuracy figures
// (exhaustive over all 2^32 inputs) are in docs/contract.md. Every result NaN is canonical.
#pragma once

#include "contract/arith.h"
#include "contract/ff.h"
#include "contract/math/exp_log.h"      // exp, expm1, log, log1p, log2, tanh, sigmoid, silu, softplus, gelu_tanh
#include "contract/math/trig_erf_pow.h" // sin, cos, erf, gelu (erf form), pow, rsqrt
