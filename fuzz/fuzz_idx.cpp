// Fuzz target: an IDX file through read_idx; input starting with the gzip magic is written as
// a .gz file, so the zlib path is fuzzed too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bitlearn/nn/data.h"
#include "core/error.h"
#include "support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string path = bl::fuzz::write_scratch_file(gz ? "input.idx.gz" : "input.idx", data, size);
  try {
    (void)bl::nn::read_idx(path);
  } catch (const bl::Error&) {
  }
  return 0;
}
