// exp_log_exceptions.h: the inputs of the exp/log family whose float-float result rounds the wrong way.
//
// GENERATED: every binary32 input was run through the fast path of each function and compared with
// the correctly rounded result from MPFR; the inputs whose result differs are listed here with the
// correctly rounded result (sorted by input bits). All of them are flagged "hard" by the rounding test,
// which is the only time these tables are searched.
#pragma once

#include "contract/math/exp_log_core.h"

namespace bl {
namespace exp_log_detail {

BL_HD float exp_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float expm1_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float log_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float log1p_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float log2_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float tanh_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float sigmoid_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float silu_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float softplus_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

BL_HD float gelu_tanh_exception(float x, float y) {
  static const uint32_t kKeys[1] = {0xFFFFFFFFu};
  static const uint32_t kValues[1] = {0xFFFFFFFFu};
  return exception_lookup(kKeys, kValues, 0, x, y);
}

}  // namespace exp_log_detail
}  // namespace bl
