// error.h: the library's exception type and its checking macro.
//
// Errors on user input are exceptions whose message names the operation, the input and what was
// expected. The library never aborts on user input.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace bl {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

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
