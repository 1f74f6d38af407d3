// tokenizer.h: byte-level BPE tokenizers in the Hugging Face tokenizer.json format.
//
// A Tokenizer loads a tokenizer.json whose model is a byte-level BPE (GPT-2, Llama 3, Qwen2 style)
// and encodes / decodes exactly like the Hugging Face `tokenizers` library does. What is supported,
// and which fields give an error, is listed in docs/tokenizer.md. train_byte_level_bpe trains a new
// byte-level BPE from texts, deterministically, and the result saves as a tokenizer.json that the
// `tokenizers` library loads and encodes identically.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bl::text {

struct TokenizerImpl;

// Limits on the ids of a tokenizer.json, checked before any table is sized by them: every id is
// below kTokenizerMaxIds, and the largest id + 1 is at most 2 * (number of tokens defined) +
// kTokenizerIdSlack, so the id table grows with what the file defines, gaps allowed.
constexpr int64_t kTokenizerMaxIds = int64_t{1} << 24;  // 16,777,216
constexpr int64_t kTokenizerIdSlack = 1024;

class Tokenizer {
 public:
  // Loads a Hugging Face tokenizer.json. Throws bl::Error naming the path and the JSON field that
  // is malformed, missing or unsupported, an id beyond the limits above, or an added token whose id
  // the vocabulary (or another added token) gives to a different string.
  static Tokenizer from_file(const std::string& tokenizer_json_path);
  // The same from the JSON text; `source` names the text in error messages.
  static Tokenizer from_json_text(const std::string& text, const std::string& source = "tokenizer");

  // The ids of tokenizers' Tokenizer.encode(text).ids: added (special) tokens in the text are
  // matched first, the rest is normalized, pre-tokenized and BPE-encoded, then the post-processor
  // of the file is applied (unless add_special_tokens is false, as tokenizers' encode(text,
  // add_special_tokens=False): a chat template's text already holds them). Throws bl::Error if text
  // is not valid UTF-8 (naming the byte offset).
  std::vector<int32_t> encode(const std::string& text, bool add_special_tokens = true) const;
  // tokenizers' decode(ids, skip_special_tokens). Byte sequences that are not valid UTF-8 become
  // U+FFFD as tokenizers does. An id outside [0, vocab_size) throws bl::Error naming it.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  // Number of ids, added tokens included (one more than the largest id).
  int32_t vocab_size() const;
  // The id of a token string (model vocabulary or added token), if there is one.
  std::optional<int32_t> token_to_id(const std::string& token) const;
  // The token string of an id (byte-level form, e.g. "Ġthe"); throws bl::Error if out of range.
  std::string id_to_token(int32_t id) const;

  // A tokenizer.json text that the tokenizers library loads (same model, same behaviour).
  std::string to_json_text() const;
  // Writes to_json_text() to path atomically.
  void save(const std::string& path) const;

 private:
  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl);
  std::shared_ptr<const TokenizerImpl> impl_;
  friend Tokenizer make_tokenizer(std::shared_ptr<const TokenizerImpl> impl);
};

struct BpeTrainerOptions {
  int32_t vocab_size = 1000;  // final size: special tokens + 256 byte symbols + merges
  int32_t min_frequency = 2;  // a pair seen fewer times than this is never merged
  std::vector<std::string> special_tokens;  // ids 0, 1, ... in this order
};

// Trains a byte-level BPE on texts (GPT-2 split regex, no prefix space). Deterministic: the merge
// chosen each step is the most frequent pair; ties go to the pair with the smaller (left id, right
// id), ids being special tokens first, then the 256 byte symbols by code point, then merges in order.
// This is the rule of the tokenizers BpeTrainer, so the merges agree with it.
Tokenizer train_byte_level_bpe(const std::vector<std::string>& texts, const BpeTrainerOptions& options);

}  // namespace bl::text
