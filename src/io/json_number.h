// json_number.h: integers read from JSON that someone else wrote (model files, XGBoost models,
// token-file headers, reports).
//
// nlohmann's get<int>() casts whatever number it finds: a fraction or 1e300 read as an int is a
// C++ cast out of range (undefined behaviour), and a value beyond the target type wraps. These
// readers accept only an integer literal within the target type's range; anything else is a
// bl::Error that names the field and shows the value.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace bl::io {

template <class T>
T json_integer(const nlohmann::json& v, const std::string& what) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "json_integer reads integer types");
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    BL_CHECK(u <= static_cast<uint64_t>(std::numeric_limits<T>::max()), what, " = ", u,
             " is out of range (at most ", +std::numeric_limits<T>::max(), ")");
    return static_cast<T>(u);
  }
  BL_CHECK(v.is_number_integer(), what, ": expected an integer, got ", v.dump());
  const int64_t s = v.get<int64_t>();
  if constexpr (std::is_signed_v<T>) {
    BL_CHECK(s >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                 s <= static_cast<int64_t>(std::numeric_limits<T>::max()),
             what, " = ", s, " is out of range [", +std::numeric_limits<T>::min(), ", ",
             +std::numeric_limits<T>::max(), "]");
  } else {
    BL_CHECK(s >= 0, what, " = ", s, " is negative");
  }
  return static_cast<T>(s);
}

template <class T>
std::vector<T> json_integers(const nlohmann::json& v, const std::string& what) {
  BL_CHECK(v.is_array(), what, ": expected an array of integers, got ", v.type_name());
  std::vector<T> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    out.push_back(json_integer<T>(v[i], what + "[" + std::to_string(i) + "]"));
  }
  return out;
}

}  // namespace bl::io
