// encode.cpp: the encoding pipeline of a loaded tokenizer, in tokenizers' order:
// added tokens -> pre-tokenizer steps -> BPE per piece -> post-processor.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <string_view>

#include "core/error.h"
#include "text/byte_level.h"
#include "text/tokenizer_impl.h"
#include "text/utf8.h"

namespace bl::text {
namespace {

// A piece of the text being pre-tokenized; an added token is already final.
struct Piece {
  std::string_view text;
  int32_t added_id = -1;
};

uint32_t last_code_point(std::string_view s) {
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  size_t len = 0;
  return decode_code_point(std::string(s.substr(i)), 0, &len);
}

uint32_t first_code_point(std::string_view s) {
  size_t len = 0;
  return decode_code_point(std::string(s.substr(0, utf8_length(static_cast<unsigned char>(s[0])))), 0, &len);
}

bool is_word_character(uint32_t cp) {
  static const Regex word("[\\p{Alphabetic}\\p{N}_]", "word character class");
  if (cp < 0x80) return std::isalnum(static_cast<int>(cp)) || cp == '_';
  std::string s;
  append_code_point(s, cp);
  return word.matches_whole(s);
}

// Splits one piece on the added tokens whose `normalized` flag equals `normalized`, as
// tokenizers' AddedVocabulary does: leftmost-longest matches, with single_word, lstrip, rstrip.
void split_added(const TokenizerImpl& impl, bool normalized, std::string_view s, std::vector<Piece>& out) {
  size_t start_offset = 0;
  size_t i = 0;
  while (i < s.size()) {
    const AddedToken* best = nullptr;
    for (const AddedToken& t : impl.added) {
      if (t.normalized != normalized || t.content.size() > s.size() - i) continue;
      if (best != nullptr && t.content.size() <= best->content.size()) continue;
      if (s[i] != t.content[0]) continue;
      if (std::memcmp(s.data() + i, t.content.data(), t.content.size()) == 0) best = &t;
    }
    if (best == nullptr) {
      ++i;
      continue;
    }
    size_t start = i, stop = i + best->content.size();
    i = stop;
    if (best->single_word) {
      const bool start_space = start == 0 || !is_word_character(last_code_point(s.substr(0, start)));
      const bool stop_space = stop == s.size() || !is_word_character(first_code_point(s.substr(stop)));
      if (!start_space || !stop_space) continue;
    }
    if (best->lstrip) {
      size_t new_start = start;
      while (new_start > 0) {
        size_t k = new_start - 1;
        while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
        size_t len = 0;
        if (!is_white_space(decode_code_point(std::string(s.substr(k, new_start - k)), 0, &len))) break;
        new_start = k;
      }
      start = std::max(new_start, start_offset);
    }
    if (best->rstrip) {
      while (stop < s.size()) {
        const size_t len = utf8_length(static_cast<unsigned char>(s[stop]));
        size_t l = 0;
        if (!is_white_space(decode_code_point(std::string(s.substr(stop, len)), 0, &l))) break;
        stop += len;
      }
      i = stop;
    }
    if (start_offset < start) out.push_back({s.substr(start_offset, start - start_offset), -1});
    out.push_back({s.substr(start, stop - start), best->id});
    start_offset = stop;
  }
  if (start_offset < s.size()) out.push_back({s.substr(start_offset), -1});
}

// Applies a split behaviour to the (begin, end, is_match) parts of a piece and appends the
// non-empty kept parts.
void apply_behavior(std::string_view s, std::vector<std::pair<size_t, size_t>> matches, const PreTokenizerStep& step,
                    std::vector<Piece>& out) {
  struct Part {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Part> parts;
  size_t prev = 0;
  for (const auto& m : matches) {
    if (prev != m.first) parts.push_back({prev, m.first, false});
    parts.push_back({m.first, m.second, true});
    prev = m.second;
  }
  if (prev != s.size() || s.empty()) parts.push_back({prev, s.size(), false});
  if (step.invert) {
    for (auto& p : parts) p.is_match = !p.is_match;
  }
  std::vector<Part> kept;  // is_match now means "remove"
  switch (step.behavior) {
    case SplitBehavior::isolated:
      for (auto p : parts) kept.push_back({p.begin, p.end, false});
      break;
    case SplitBehavior::removed:
      kept = parts;
      break;
    case SplitBehavior::contiguous: {
      bool previous_match = false;
      for (const auto& p : parts) {
        if (p.is_match == previous_match && !kept.empty()) kept.back().end = p.end;
        else kept.push_back({p.begin, p.end, false});
        previous_match = p.is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_previous: {
      bool previous_match = false;
      for (const auto& p : parts) {
        if (p.is_match && !previous_match && !kept.empty()) kept.back().end = p.end;
        else kept.push_back({p.begin, p.end, false});
        previous_match = p.is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_next: {
      bool previous_match = false;
      for (size_t k = parts.size(); k-- > 0;) {
        const auto& p = parts[k];
        if (p.is_match && !previous_match && !kept.empty()) kept.back().begin = p.begin;
        else kept.push_back({p.begin, p.end, false});
        previous_match = p.is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    }
  }
  for (const auto& p : kept) {
    if (p.is_match || p.end == p.begin) continue;
    out.push_back({s.substr(p.begin, p.end - p.begin), -1});
  }
}

std::vector<std::pair<size_t, size_t>> find_literal(std::string_view s, const std::string& literal) {
  std::vector<std::pair<size_t, size_t>> out;
  if (literal.empty()) return out;
  size_t pos = 0;
  while ((pos = s.find(literal, pos)) != std::string_view::npos) {
    out.emplace_back(pos, pos + literal.size());
    pos += literal.size();
  }
  return out;
}

void run_step(const PreTokenizerStep& step, const Piece& piece, std::deque<std::string>& storage,
              std::vector<Piece>& out) {
  std::string_view s = piece.text;
  if (step.kind == PreTokenizerStep::Kind::byte_level) {
    if (step.add_prefix_space && s.front() != ' ') {
      storage.push_back(" " + std::string(s));
      s = storage.back();
    }
    if (!step.use_regex) {
      out.push_back({s, -1});
      return;
    }
  }
  std::vector<std::pair<size_t, size_t>> matches;
  if (step.regex) {
    // Regex::find_all works on a std::string; pieces that live in the caller's text are copied.
    const std::string text(s);
    matches = step.regex->find_all(text, 0, text.size());
  } else {
    matches = find_literal(s, step.literal);
  }
  if (step.kind == PreTokenizerStep::Kind::byte_level) {
    PreTokenizerStep isolated;
    isolated.behavior = SplitBehavior::isolated;
    apply_behavior(s, std::move(matches), isolated, out);
  } else {
    apply_behavior(s, std::move(matches), step, out);
  }
}

}  // namespace

std::vector<int32_t> encode_text(const TokenizerImpl& impl, const std::string& text, bool add_special_tokens) {
  check_utf8(text, impl.source + ": encode");
  std::vector<Piece> pieces;
  if (impl.added.empty()) {
    if (!text.empty()) pieces.push_back({text, -1});
  } else {
    std::vector<Piece> first;
    if (!text.empty()) split_added(impl, false, text, first);
    for (const Piece& p : first) {
      if (p.added_id >= 0) pieces.push_back(p);
      else split_added(impl, true, p.text, pieces);
    }
  }
  std::deque<std::string> storage;  // pieces that a step rewrote (prefix space)
  for (const PreTokenizerStep& step : impl.pre_tokenizer) {
    std::vector<Piece> next;
    next.reserve(pieces.size() * 4);
    for (const Piece& p : pieces) {
      if (p.added_id >= 0) next.push_back(p);
      else run_step(step, p, storage, next);
    }
    pieces.swap(next);
  }
  std::vector<int32_t> ids;
  if (add_special_tokens) ids = impl.post.prefix_ids;
  ids.reserve(text.size() / 2 + impl.post.prefix_ids.size() + impl.post.suffix_ids.size());
  for (const Piece& p : pieces) {
    if (p.added_id >= 0) {
      ids.push_back(p.added_id);
    } else if (impl.model.fast_bytes) {
      impl.model.encode_raw_bytes(p.text.data(), p.text.size(), ids);
    } else {
      impl.model.encode_word(bytes_to_byte_level(std::string(p.text), 0, p.text.size()), ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), impl.post.suffix_ids.begin(), impl.post.suffix_ids.end());
  return ids;
}

}  // namespace bl::text
