// Fuzz target: a safetensors file (header length, JSON header, tensor data) through
// SafetensorsFile::open and the read of every tensor it lists.
#include <cstddef>
#include <cstdint>

#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = bl::fuzz::write_scratch_file("input.safetensors", data, size);
  try {
    const bl::SafetensorsFile f = bl::SafetensorsFile::open(path);
    for (const auto& name : f.names()) {
      try {
        if (f.dtype(name) == "F64")
          (void)f.get_f64(name);
        else
          (void)f.get(name);
      } catch (const bl::Error&) {
        // An unsupported dtype is refused per tensor; the others are still read.
      }
    }
  } catch (const bl::Error&) {
  }
  return 0;
}
