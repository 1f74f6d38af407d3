// regex.cpp: PCRE2 wrapper (JIT-compiled when the platform supports it).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/regex.h"

#include <pcre2.h>

#include "core/error.h"

namespace bl::text {

const char* const kGpt2SplitPattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

namespace {

// tokenizers (Oniguruma) takes \s as the Unicode White_Space property. PCRE2's \s under UCP also
// accepts U+180E (which left White_Space in Unicode 6.3), so \s is spelled out as White_Space.
std::string with_white_space_class(const std::string& pattern) {
  static const std::string kSpace =
      "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
      "\\x{205F}\\x{3000}";
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char d = pattern[i + 1];
      if (d == 's') {
        out += in_class ? kSpace : "[" + kSpace + "]";
      } else if (d == 'S') {
        BL_CHECK(!in_class, "regex '", pattern, "': \\S inside a character class is not supported");
        out += "[^" + kSpace + "]";
      } else {
        out += c;
        out += d;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) in_class = true;
    else if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& what) : pattern_(pattern) {
  const std::string translated = with_white_space_class(pattern);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error_code,
                                   &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    throw Error(detail::concat(what, ": cannot compile regex '", pattern, "': ",
                               reinterpret_cast<const char*>(message), " (offset ", error_offset, ")"));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if unavailable
  code_ = code;
}

bool Regex::matches_whole(const std::string& text) const {
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code, nullptr);
  BL_CHECK(data != nullptr, "regex: out of memory");
  const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                             PCRE2_NO_UTF_CHECK | PCRE2_ANCHORED | PCRE2_ENDANCHORED, data, nullptr);
  pcre2_match_data_free(data);
  return rc >= 0;
}

bool is_white_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

std::vector<std::pair<size_t, size_t>> Regex::find_all(const std::string& text, size_t begin,
                                                       size_t end) const {
  std::vector<std::pair<size_t, size_t>> out;
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code, nullptr);
  BL_CHECK(data != nullptr, "regex: out of memory");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + begin);
  const size_t length = end - begin;
  size_t offset = 0;
  while (offset < length) {
    const int rc = pcre2_match(code, subject, length, offset, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      pcre2_match_data_free(data);
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      throw Error(detail::concat("regex '", pattern_, "': match failed: ",
                                 reinterpret_cast<const char*>(message)));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
    const size_t s = ov[0], e = ov[1];
    if (e > s) {
      out.emplace_back(begin + s, begin + e);
      offset = e;
    } else {
      // An empty match: step over one code point, as tokenizers does (empty pieces are dropped).
      offset = s + 1;
      while (offset < length && (static_cast<unsigned char>(subject[offset]) & 0xC0) == 0x80) ++offset;
    }
  }
  pcre2_match_data_free(data);
  return out;
}

}  // namespace bl::text
