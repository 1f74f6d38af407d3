// bpe_model.cpp: word encoding with ranked merges, in the order tokenizers applies them.
#include "text/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "core/error.h"
#include "text/byte_level.h"
#include "text/utf8.h"

namespace bl::text {
namespace {

inline uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// A candidate merge: the pair starting at symbol `pos`. Lowest rank first, then leftmost.
struct Candidate {
  int32_t rank;
  int32_t pos;
  int32_t new_id;
  bool operator<(const Candidate& o) const {  // "less" = lower priority for std::priority_queue
    if (rank != o.rank) return rank > o.rank;
    return pos > o.pos;
  }
};

}  // namespace

void MergeTable::reserve(size_t n) {
  size_t capacity = 16;
  while (capacity < 2 * n) capacity *= 2;
  if (capacity <= slots_.size()) return;
  std::vector<Entry> old;
  old.swap(slots_);
  slots_.assign(capacity, Entry{0, -1, 0});
  mask_ = capacity - 1;
  count_ = 0;
  for (const Entry& e : old) {
    if (e.rank >= 0) set(e.key, e.rank, e.new_id);
  }
}

void MergeTable::set(uint64_t key, int32_t rank, int32_t new_id) {
  if (2 * (count_ + 1) > slots_.size()) reserve(count_ + 1);
  for (uint64_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
    Entry& e = slots_[i];
    if (e.rank < 0) {
      e = Entry{key, rank, new_id};
      ++count_;
      return;
    }
    if (e.key == key) {
      e.rank = rank;
      e.new_id = new_id;
      return;
    }
  }
}

void add_merge(BpeModel& model, const std::string& left, const std::string& right,
               const std::string& source, size_t index) {
  auto a = model.vocab.find(left);
  auto b = model.vocab.find(right);
  BL_CHECK(a != model.vocab.end(), source, ": model.merges[", index, "]: token '", left,
           "' is not in model.vocab");
  BL_CHECK(b != model.vocab.end(), source, ": model.merges[", index, "]: token '", right,
           "' is not in model.vocab");
  std::string merged = left;
  const size_t prefix = model.continuing_subword_prefix ? model.continuing_subword_prefix->size() : 0;
  if (prefix > 0 && right.compare(0, prefix, *model.continuing_subword_prefix) == 0) {
    merged += right.substr(prefix);
  } else {
    merged += right;
  }
  auto m = model.vocab.find(merged);
  BL_CHECK(m != model.vocab.end(), source, ": model.merges[", index, "]: merged token '", merged,
           "' is not in model.vocab");
  const int32_t rank = static_cast<int32_t>(model.merge_list.size());
  model.merges.set(pair_key(a->second, b->second), rank, m->second);
  model.merge_list.emplace_back(left, right);
}

void BpeModel::finish(const std::string& source) {
  int32_t max_id = -1;
  for (const auto& kv : vocab) max_id = std::max(max_id, kv.second);
  id_to_token.assign(static_cast<size_t>(max_id + 1), std::string());
  id_present.assign(static_cast<size_t>(max_id + 1), false);
  for (const auto& kv : vocab) {
    BL_CHECK(!id_present[kv.second], source, ": model.vocab: id ", kv.second, " is given twice");
    id_to_token[kv.second] = kv.first;
    id_present[kv.second] = true;
  }
  const auto& symbols = byte_level_symbols();
  fast_bytes = !continuing_subword_prefix && !end_of_word_suffix;
  for (int b = 0; b < 256; ++b) {
    auto it = vocab.find(symbols[b]);
    byte_symbol_id[b] = it == vocab.end() ? -1 : it->second;
    if (it == vocab.end()) fast_bytes = false;
  }
}

void BpeModel::merge_all(std::vector<int32_t>& c, std::vector<int32_t>& out) const {
  const int32_t n = static_cast<int32_t>(c.size());
  if (n == 1) {
    out.push_back(c[0]);
    return;
  }
  // Scratch buffers reused across words (per thread), so short words cost no allocation.
  thread_local std::vector<int32_t> prev, next;
  thread_local std::vector<char> alive;
  thread_local std::vector<Candidate> heap;
  prev.resize(n);
  next.resize(n);
  alive.assign(n, 1);
  heap.clear();
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  auto push = [&](int32_t pos) {
    const MergeTable::Entry* e = merges.find(pair_key(c[pos], c[next[pos]]));
    if (e == nullptr) return;
    heap.push_back({e->rank, pos, e->new_id});
    std::push_heap(heap.begin(), heap.end());
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const Candidate top = heap.back();
    heap.pop_back();
    if (!alive[top.pos] || next[top.pos] < 0) continue;
    const int32_t right = next[top.pos];
    const MergeTable::Entry* e = merges.find(pair_key(c[top.pos], c[right]));
    if (e == nullptr || e->new_id != top.new_id) continue;  // expired entry
    c[top.pos] = top.new_id;
    alive[right] = 0;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    if (prev[top.pos] >= 0) push(prev[top.pos]);
    if (next[top.pos] >= 0) push(top.pos);
  }
  for (int32_t i = 0; i >= 0; i = next[i]) out.push_back(c[i]);
}

void BpeModel::encode_raw_bytes(const char* bytes, size_t n, std::vector<int32_t>& out) const {
  if (n == 0) return;
  if (ignore_merges) {
    std::string word;
    const auto& symbols = byte_level_symbols();
    for (size_t i = 0; i < n; ++i) word += symbols[static_cast<uint8_t>(bytes[i])];
    auto it = vocab.find(word);
    if (it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (n == 1) {
    out.push_back(byte_symbol_id[static_cast<uint8_t>(bytes[0])]);
    return;
  }
  thread_local std::vector<int32_t> c;
  c.resize(n);
  for (size_t i = 0; i < n; ++i) c[i] = byte_symbol_id[static_cast<uint8_t>(bytes[i])];
  merge_all(c, out);
}

void BpeModel::encode_word(const std::string& word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges) {
    auto it = vocab.find(word);
    if (it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<int32_t> c;
  int32_t unk_id = -1;  // pending unknown symbol
  auto find_unk = [&]() -> int32_t {
    auto it = vocab.find(*unk_token);
    BL_CHECK(it != vocab.end(), "BPE model: model.unk_token '", *unk_token, "' is not in model.vocab");
    return it->second;
  };
  size_t i = 0;
  while (i < word.size()) {
    size_t len = 0;
    decode_code_point(word, i, &len);
    std::string s = word.substr(i, len);
    const bool is_first = i == 0;
    const bool is_last = i + len == word.size();
    if (!is_first && continuing_subword_prefix) s = *continuing_subword_prefix + s;
    if (is_last && end_of_word_suffix) s += *end_of_word_suffix;
    auto it = vocab.find(s);
    if (it != vocab.end()) {
      if (unk_id >= 0) {
        c.push_back(unk_id);
        unk_id = -1;
      }
      c.push_back(it->second);
    } else {
      bool done = false;
      if (byte_fallback) {
        std::vector<int32_t> fallback;
        for (unsigned char b : s) {
          char name[8];
          std::snprintf(name, sizeof(name), "<0x%02X>", b);
          auto f = vocab.find(name);
          if (f == vocab.end()) break;
          fallback.push_back(f->second);
        }
        if (fallback.size() == s.size()) {
          c.insert(c.end(), fallback.begin(), fallback.end());
          done = true;
        }
      }
      if (!done && unk_token) {
        if (unk_id >= 0 && !fuse_unk) c.push_back(unk_id);
        if (unk_id < 0 || !fuse_unk) unk_id = find_unk();
      }
    }
    i += len;
  }
  if (unk_id >= 0) c.push_back(unk_id);
  if (c.empty()) return;
  merge_all(c, out);
}

}  // namespace bl::text
