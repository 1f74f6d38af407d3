// utf8.h: the UTF-8 helpers of the tokenizer (validation, code points, lossy decoding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bl::text {

// Byte offset of the first byte that is not part of valid UTF-8, or std::string::npos if the
// whole text is valid (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t first_invalid_utf8(const std::string& text);

// Throws bl::Error naming `what` and the byte offset if text is not valid UTF-8.
void check_utf8(const std::string& text, const std::string& what);

// Length in bytes of the valid UTF-8 sequence starting at text[i] (text must be valid there).
inline size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

// Decodes the code point starting at text[i] of valid UTF-8; sets *length to its byte count.
uint32_t decode_code_point(const std::string& text, size_t i, size_t* length);

// Appends the UTF-8 form of a code point (< 0x110000, not a surrogate).
void append_code_point(std::string& out, uint32_t code_point);

// Replaces every invalid sequence by U+FFFD, one per maximal invalid subpart (the rule of the
// Unicode standard, chapter 3, and of Rust's String::from_utf8_lossy that tokenizers uses).
std::string utf8_lossy(const std::string& bytes);

}  // namespace bl::text
