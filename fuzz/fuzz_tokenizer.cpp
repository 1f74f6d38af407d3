// Fuzz target: a tokenizer.json through Tokenizer::from_json_text; a tokenizer that loads then
// encodes a fixed text (special tokens, bytes, spaces) and decodes the ids back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bitlearn/tokenizer.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const bl::text::Tokenizer tok = bl::text::Tokenizer::from_json_text(text, "fuzz tokenizer.json");
    const std::vector<int32_t> ids = tok.encode("Hello, world! <|endoftext|>  \t\n 12345 \xc3\xa9t\xc3\xa9 ab");
    (void)tok.decode(ids, false);
    (void)tok.decode(ids, true);
    (void)tok.to_json_text();
  } catch (const bl::Error&) {
  }
  return 0;
}
