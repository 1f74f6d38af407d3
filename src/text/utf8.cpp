// utf8.cpp: UTF-8 validation and lossy decoding following Table 3-7 of the Unicode standard.
#include "text/utf8.h"

#include "core/error.h"

namespace bl::text {
namespace {

// Number of bytes of the longest prefix of a well-formed sequence at bytes[i] (0 if the lead
// byte itself is invalid), and whether the whole sequence is complete and valid.
size_t valid_prefix(const std::string& bytes, size_t i, bool* complete) {
  const size_t n = bytes.size();
  const unsigned char b0 = static_cast<unsigned char>(bytes[i]);
  *complete = false;
  if (b0 < 0x80) {
    *complete = true;
    return 1;
  }
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  size_t len = 1;
  for (size_t k = 1; k < need; ++k) {
    if (i + k >= n) return len;
    const unsigned char b = static_cast<unsigned char>(bytes[i + k]);
    const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return len;
    ++len;
  }
  *complete = true;
  return len;
}

}  // namespace

size_t first_invalid_utf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    bool complete = false;
    const size_t len = valid_prefix(text, i, &complete);
    if (!complete) return i;
    i += len;
  }
  return std::string::npos;
}

void check_utf8(const std::string& text, const std::string& what) {
  const size_t bad = first_invalid_utf8(text);
  BL_CHECK(bad == std::string::npos, what, ": text is not valid UTF-8 (byte offset ", bad, ", byte 0x",
           std::hex, static_cast<int>(static_cast<unsigned char>(text[bad == std::string::npos ? 0 : bad])),
           ")");
}

uint32_t decode_code_point(const std::string& text, size_t i, size_t* length) {
  const unsigned char b0 = static_cast<unsigned char>(text[i]);
  const size_t len = utf8_length(b0);
  *length = len;
  if (len == 1) return b0;
  uint32_t cp = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return cp;
}

void append_code_point(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_lossy(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    bool complete = false;
    const size_t len = valid_prefix(bytes, i, &complete);
    if (complete) {
      out.append(bytes, i, len);
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD for the maximal invalid subpart
      i += len == 0 ? 1 : len;
    }
  }
  return out;
}

}  // namespace bl::text
