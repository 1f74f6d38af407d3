// Fuzz target: model.safetensors.index.json of a model folder, through the loader's reading of a
// folder's weights (every shard name checked before any file is opened). The folder also holds a
// valid shard, shard.safetensors, that an index may name.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "models/model_parts.h"
#include "support.h"

namespace {

const std::string& model_dir() {
  static const std::string dir = [] {
    const std::string d = bl::fuzz::scratch_dir();
    std::map<std::string, bl::Tensor> tensors;
    tensors["w"] = bl::Tensor::from_vector(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
    bl::save_safetensors(d + "/shard.safetensors", tensors);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = model_dir();
  bl::fuzz::write_scratch_file("model.safetensors.index.json", data, size);
  try {
    (void)bl::models::parts::read_safetensors_dir(dir);
  } catch (const bl::Error&) {
  }
  return 0;
}
