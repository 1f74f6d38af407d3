// error.h: the exception every bitlearn function throws on bad input (a wrong shape, a NaN where
// none is allowed, a malformed file, an option out of range). Its message names the operation, the
// input and what was expected. The library never aborts on user input.
#pragma once

#include <stdexcept>
#include <string>

namespace bl {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace bl
