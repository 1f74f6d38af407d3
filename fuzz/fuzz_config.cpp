// Fuzz target: a model's config.json through parse_config (every architecture, every limit).
#include <cstddef>
#include <cstdint>
#include <string>

#include "bitlearn/models.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)bl::models::parse_config(text, "fuzz config.json");
  } catch (const bl::Error&) {
  }
  return 0;
}
