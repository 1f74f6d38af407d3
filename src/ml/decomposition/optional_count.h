// optional_count.h: a count hyper-parameter that may be the word none (n_components, batch_size).
// Such a parameter is a number_or_word, whose text is the shortest that reads back to the number
// (100 is kept as "1e+02"), so it is read as a number and required to be a whole one.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "ml/linear/common.h"

namespace bl::ml::dec {

// The parameter key of `params` as a count, or `fallback` when it is none.
inline int64_t optional_count(const lin::ParamSet& params, const std::string& est, const std::string& key,
                              int64_t fallback) {
  if (params.text(key) == "none") return fallback;
  const double v = params.number(key);
  BL_CHECK(v == std::floor(v) && v < 9.0e15, est, ": parameter ", key, "=", params.text(key),
           ": expected an integer or none");
  return static_cast<int64_t>(v);
}

}  // namespace bl::ml::dec
