// regex.h: a compiled regular expression for the pre-tokenizer splits (PCRE2, UTF + UCP).
//
// tokenizers uses Oniguruma; for the patterns of tokenizer.json files (GPT-2, Llama 3, Qwen2
// splits: alternations, \p{L}, \p{N}, \s, look-ahead, counted repeats) PCRE2 with UTF and Unicode
// properties finds the same leftmost-first matches. The golden tests check this over all code points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bl::text {

class Regex {
 public:
  // Compiles pattern; throws bl::Error naming `what` and PCRE2's message on a bad pattern.
  Regex(const std::string& pattern, const std::string& what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Non-overlapping, non-empty matches of the pattern in text (valid UTF-8), left to right, as
  // [begin, end) byte offsets into text.
  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text, size_t begin,
                                                  size_t end) const;
  // True if the pattern matches the whole of text (valid UTF-8).
  bool matches_whole(const std::string& text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
};

// True for the code points of the Unicode White_Space property (Rust's char::is_whitespace, and
// Oniguruma's \s, which tokenizers uses).
bool is_white_space(uint32_t code_point);

// The GPT-2 split pattern, used by the ByteLevel pre-tokenizer when use_regex is true.
extern const char* const kGpt2SplitPattern;

}  // namespace bl::text
