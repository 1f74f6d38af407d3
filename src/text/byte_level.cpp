// byte_level.cpp: the byte <-> symbol tables.
#include "text/byte_level.h"

#include "text/utf8.h"

namespace bl::text {
namespace {

bool shows_itself(uint32_t b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<uint32_t, 256> code_point{};
  std::array<std::string, 256> symbol;
  Tables() {
    uint32_t next = 0x100;
    for (uint32_t b = 0; b < 256; ++b) {
      code_point[b] = shows_itself(b) ? b : next++;
      append_code_point(symbol[b], code_point[b]);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

uint32_t byte_to_code_point(uint8_t b) { return tables().code_point[b]; }

const std::array<std::string, 256>& byte_level_symbols() { return tables().symbol; }

std::string bytes_to_byte_level(const std::string& text, size_t begin, size_t end) {
  const auto& symbol = tables().symbol;
  std::string out;
  out.reserve(2 * (end - begin));
  for (size_t i = begin; i < end; ++i) out += symbol[static_cast<uint8_t>(text[i])];
  return out;
}

int code_point_to_byte(uint32_t cp) {
  if (cp < 0x100) return shows_itself(cp) ? static_cast<int>(cp) : -1;
  if (cp >= 0x100 + 68) return -1;
  // The non-printable bytes in order: 0x00-0x20, 0x7F-0xA0, 0xAD.
  const uint32_t k = cp - 0x100;
  if (k <= 0x20) return static_cast<int>(k);
  if (k <= 0x20 + 34) return static_cast<int>(0x7F + (k - 0x21));
  return 0xAD;
}

}  // namespace bl::text
