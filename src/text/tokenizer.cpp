// tokenizer.cpp: the public Tokenizer (loading, decoding, vocabulary queries, saving).
#include "bitlearn/tokenizer.h"

#include "bitlearn/io.h"
#include "core/error.h"
#include "text/byte_level.h"
#include "text/tokenizer_impl.h"
#include "text/utf8.h"

namespace bl::text {

Tokenizer make_tokenizer(std::shared_ptr<const TokenizerImpl> impl) { return Tokenizer(std::move(impl)); }

Tokenizer::Tokenizer(std::shared_ptr<const TokenizerImpl> impl) : impl_(std::move(impl)) {}

Tokenizer Tokenizer::from_json_text(const std::string& text, const std::string& source) {
  auto impl = std::make_shared<TokenizerImpl>();
  impl->source = source;
  load_tokenizer_json(*impl, text);
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::from_file(const std::string& path) {
  return from_json_text(read_file_text(path, "tokenizer.json"), path);
}

std::vector<int32_t> Tokenizer::encode(const std::string& text, bool add_special_tokens) const {
  return encode_text(*impl_, text, add_special_tokens);
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const TokenizerImpl& t = *impl_;
  std::vector<const std::string*> tokens;
  tokens.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    BL_CHECK(id >= 0 && id < t.vocab_size, t.source, ": decode: id ", id, " (position ", i,
             ") is out of range [0, ", t.vocab_size, ")");
    const std::string* token = nullptr;
    auto added = t.added_by_id.find(id);
    if (added != t.added_by_id.end()) {
      token = &t.added[added->second].content;
    } else {
      BL_CHECK(static_cast<size_t>(id) < t.model.id_present.size() && t.model.id_present[id], t.source,
               ": decode: id ", id, " (position ", i, ") has no token in the vocabulary");
      token = &t.model.id_to_token[id];
    }
    if (skip_special_tokens) {
      auto a = t.added_by_content.find(*token);
      if (a != t.added_by_content.end() && t.added[t.added_by_id.at(a->second)].special) continue;
    }
    tokens.push_back(token);
  }
  if (!t.has_byte_level_decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out += ' ';
      out += *tokens[i];
    }
    return out;
  }
  // ByteLevel decoder: a token made only of byte symbols gives those bytes; any other token
  // (an added token with, say, a plain space) gives its own UTF-8 bytes. Then lossy UTF-8.
  std::string bytes;
  for (const std::string* token : tokens) {
    std::string mapped;
    bool all_symbols = true;
    size_t i = 0;
    while (i < token->size()) {
      size_t len = 0;
      const int b = code_point_to_byte(decode_code_point(*token, i, &len));
      if (b < 0) {
        all_symbols = false;
        break;
      }
      mapped.push_back(static_cast<char>(b));
      i += len;
    }
    bytes += all_symbols ? mapped : *token;
  }
  return utf8_lossy(bytes);
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<int32_t> Tokenizer::token_to_id(const std::string& token) const {
  auto a = impl_->added_by_content.find(token);
  if (a != impl_->added_by_content.end()) return a->second;
  auto m = impl_->model.vocab.find(token);
  if (m != impl_->model.vocab.end()) return m->second;
  return std::nullopt;
}

std::string Tokenizer::id_to_token(int32_t id) const {
  const TokenizerImpl& t = *impl_;
  auto added = t.added_by_id.find(id);
  if (added != t.added_by_id.end()) return t.added[added->second].content;
  BL_CHECK(id >= 0 && static_cast<size_t>(id) < t.model.id_present.size() && t.model.id_present[id],
           t.source, ": id_to_token: id ", id, " is out of range or has no token (vocabulary size ",
           t.vocab_size, ")");
  return t.model.id_to_token[id];
}

std::string Tokenizer::to_json_text() const { return impl_->json.dump(2, ' ', false) + "\n"; }

void Tokenizer::save(const std::string& path) const {
  write_file_atomic(path, to_json_text(), "tokenizer.json");
}

}  // namespace bl::text
