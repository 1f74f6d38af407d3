// bpe_model.h: the BPE model of a tokenizer.json (vocabulary, ranked merges, word encoding).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bl::text {

// Open-addressing hash table from a pair of ids (left << 32 | right) to (rank, merged id): the
// lookups are the hot path of encoding.
class MergeTable {
 public:
  struct Entry {
    uint64_t key;
    int32_t rank;  // -1: empty slot
    int32_t new_id;
  };
  // Inserts or replaces the entry of key.
  void set(uint64_t key, int32_t rank, int32_t new_id);
  // The entry of key, or nullptr.
  const Entry* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (uint64_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Entry& e = slots_[i];
      if (e.rank < 0) return nullptr;
      if (e.key == key) return &e;
    }
  }
  void reserve(size_t n);

 private:
  static uint64_t hash(uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 20; }
  std::vector<Entry> slots_;
  uint64_t mask_ = 0;
  size_t count_ = 0;
};

struct BpeModel {
  std::unordered_map<std::string, int32_t> vocab;
  std::vector<std::string> id_to_token;  // index = id; "" where the vocabulary has a gap
  std::vector<bool> id_present;
  // (left id << 32 | right id) -> (rank, merged id); a later duplicate merge replaces an earlier one.
  MergeTable merges;
  std::vector<std::pair<std::string, std::string>> merge_list;  // in rank order, for saving
  std::optional<std::string> unk_token;
  std::optional<std::string> continuing_subword_prefix;
  std::optional<std::string> end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  // byte_symbol_id[b]: id of the one-symbol token of byte b, or -1 (fast path of byte-level words).
  int32_t byte_symbol_id[256];
  bool fast_bytes = false;  // all 256 byte symbols present, no prefix/suffix/fallback

  // Fills the tables derived from vocab and merges (call after loading or training).
  void finish(const std::string& source);

  // Appends the ids of one pre-tokenized word (byte-level symbols, UTF-8) to out, as tokenizers'
  // BPE::tokenize does: initial symbols from the vocabulary (unknown ones -> unk_token, byte
  // fallback, or dropped), then merges applied lowest rank first, leftmost first among equals.
  // `raw` holds the word's original bytes (one per symbol) when fast_bytes applies.
  void encode_word(const std::string& word, std::vector<int32_t>& out) const;
  void encode_raw_bytes(const char* bytes, size_t n, std::vector<int32_t>& out) const;

 private:
  void merge_all(std::vector<int32_t>& symbols, std::vector<int32_t>& out) const;
};

// Adds a merge (left, right) with the next rank; throws bl::Error naming source when a part or the
// merged token is not in the vocabulary.
void add_merge(BpeModel& model, const std::string& left, const std::string& right,
               const std::string& source, size_t index);

}  // namespace bl::text
