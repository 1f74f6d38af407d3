// tokenizer_impl.h: the parts of a loaded tokenizer.json (internal to src/text/).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/bpe_model.h"
#include "text/regex.h"

namespace bl::text {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

// One step of the pre-tokenizer: ByteLevel, or Split on a regex / literal string.
struct PreTokenizerStep {
  enum class Kind { byte_level, split } kind = Kind::byte_level;
  bool add_prefix_space = false;  // ByteLevel
  bool use_regex = true;          // ByteLevel
  std::shared_ptr<Regex> regex;   // Split with a regex, or ByteLevel with use_regex
  std::string literal;            // Split with a string pattern
  SplitBehavior behavior = SplitBehavior::isolated;
  bool invert = false;
};

// Special tokens added around the sequence by the post-processor (TemplateProcessing, Roberta,
// Bert); ByteLevel post-processing changes offsets only.
struct PostProcessor {
  std::vector<int32_t> prefix_ids;
  std::vector<int32_t> suffix_ids;
};

struct TokenizerImpl {
  std::string source;                  // names the file in error messages
  nlohmann::json json;                 // the tokenizer.json as loaded (saved back, keys sorted)
  BpeModel model;
  std::vector<AddedToken> added;       // in file order
  std::unordered_map<std::string, int32_t> added_by_content;
  std::unordered_map<int32_t, size_t> added_by_id;  // id -> index in `added`
  std::vector<PreTokenizerStep> pre_tokenizer;
  bool has_byte_level_decoder = false;
  PostProcessor post;
  int32_t vocab_size = 0;              // largest id + 1
};

// Parses a tokenizer.json (model BPE) into impl; throws bl::Error naming source and the field.
void load_tokenizer_json(TokenizerImpl& impl, const std::string& text);

// Encodes text with a loaded tokenizer (added tokens, pre-tokenizer, BPE, post-processor).
std::vector<int32_t> encode_text(const TokenizerImpl& impl, const std::string& text, bool add_special_tokens = true);

}  // namespace bl::text
