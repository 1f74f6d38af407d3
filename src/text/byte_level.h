// byte_level.h: the GPT-2 byte-to-character map of byte-level BPE.
//
// Every byte is shown as one printable code point: the printable Latin-1 bytes ('!'..'~',
// U+00A1..U+00AC, U+00AE..U+00FF) as themselves, the other 68 bytes as U+0100, U+0101, ... in byte
// order. A space becomes "Ġ" (U+0120), a newline "Ċ" (U+010A).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace bl::text {

// The code point that shows byte b.
uint32_t byte_to_code_point(uint8_t b);
// The UTF-8 text of byte_to_code_point(b), for all 256 bytes.
const std::array<std::string, 256>& byte_level_symbols();
// Maps every byte of text to its symbol and concatenates them.
std::string bytes_to_byte_level(const std::string& text, size_t begin, size_t end);
// The byte a code point shows, or -1 if the code point is not one of the 256 symbols.
int code_point_to_byte(uint32_t code_point);

}  // namespace bl::text
