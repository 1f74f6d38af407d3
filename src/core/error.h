// error.h: the library's checking macro; the exception type bl::Error is public (bitlearn/error.h).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "bitlearn/error.h"

namespace bl {

namespace detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}
}  // namespace detail

}  // namespace bl

// BL_CHECK(condition, parts...): throws bl::Error with the parts joined when condition is false.
#define BL_CHECK(condition, ...)                                  \
  do {                                                            \
    if (!(condition)) throw ::bl::Error(::bl::detail::concat(__VA_ARGS__)); \
  } while (0)
