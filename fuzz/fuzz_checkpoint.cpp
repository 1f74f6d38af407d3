// Fuzz target: a training checkpoint through load_checkpoint into a fixed model (Linear 4 -> 3)
// with an Adam optimizer; both are rebuilt per input, so a refused file cannot leak into the next.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bitlearn/nn/checkpoint.h"
#include "bitlearn/nn/layers.h"
#include "bitlearn/nn/module.h"
#include "bitlearn/nn/optim.h"
#include "core/error.h"
#include "support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = bl::fuzz::write_scratch_file("checkpoint.safetensors", data, size);
  bl::nn::InitStream init(1);
  bl::nn::Linear model(4, 3, init);
  bl::nn::Adam opt(model.named_parameters(), 0.01f);
  try {
    (void)bl::nn::load_checkpoint(path, model, opt);
  } catch (const bl::Error&) {
  }
  return 0;
}
