// bpe_trainer.cpp: byte-level BPE training, step for step the algorithm of tokenizers' BpeTrainer
// (word counts, pair counts with the words each pair occurs in, a max-heap of pairs by count with
// ties to the smaller (left id, right id), lazy re-counting of stale heap entries).
#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "bitlearn/tokenizer.h"
#include "core/error.h"
#include "text/byte_level.h"
#include "text/regex.h"
#include "text/utf8.h"

namespace bl::text {
namespace {

using Pair = std::pair<int32_t, int32_t>;

struct PairHash {
  size_t operator()(const Pair& p) const {
    return std::hash<uint64_t>()((static_cast<uint64_t>(static_cast<uint32_t>(p.first)) << 32) |
                                 static_cast<uint32_t>(p.second));
  }
};

struct HeapEntry {
  Pair pair;
  int64_t count;
  std::shared_ptr<std::vector<size_t>> words;  // indices of words that held the pair
  bool operator<(const HeapEntry& o) const {  // "less" = popped later
    if (count != o.count) return count < o.count;
    return pair > o.pair;
  }
};

// Merges every (left, right) in word left to right; records the pair count changes (-1 for pairs
// that disappear, +1 for new pairs), as tokenizers' Word::merge.
void merge_word(std::vector<int32_t>& w, int32_t left, int32_t right, int32_t replacement,
                std::vector<std::pair<Pair, int32_t>>& changes) {
  size_t i = 0;
  while (i < w.size()) {
    if (w[i] == left && i + 1 < w.size() && w[i + 1] == right) {
      if (i > 0) {
        changes.push_back({{w[i - 1], left}, -1});
        changes.push_back({{w[i - 1], replacement}, 1});
      }
      w[i] = replacement;
      w.erase(w.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      if (i + 1 < w.size()) {
        changes.push_back({{right, w[i + 1]}, -1});
        changes.push_back({{replacement, w[i + 1]}, 1});
      }
    }
    ++i;
  }
}

nlohmann::json build_json(const std::vector<std::string>& id_to_word,
                                  const std::vector<Pair>& merges,
                                  const std::vector<std::string>& special_tokens) {
  using Json = nlohmann::json;
  Json root;
  root["version"] = "1.0";
  root["truncation"] = nullptr;
  root["padding"] = nullptr;
  Json added = Json::array();
  for (size_t i = 0; i < special_tokens.size(); ++i) {
    if (std::find(special_tokens.begin(), special_tokens.begin() + i, special_tokens[i]) !=
        special_tokens.begin() + i) {
      continue;  // a repeated special token keeps its first id
    }
    const int32_t id = static_cast<int32_t>(std::find(id_to_word.begin(), id_to_word.end(), special_tokens[i]) -
                                            id_to_word.begin());
    added.push_back({{"id", id}, {"content", special_tokens[i]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  }
  root["added_tokens"] = added;
  root["normalizer"] = nullptr;
  const Json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  root["pre_tokenizer"] = byte_level;
  root["post_processor"] = nullptr;
  Json decoder = byte_level;
  decoder["add_prefix_space"] = true;
  root["decoder"] = decoder;
  Json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false}};
  Json vocab = Json::object();
  for (size_t i = 0; i < id_to_word.size(); ++i) vocab[id_to_word[i]] = static_cast<int32_t>(i);
  model["vocab"] = vocab;
  Json merge_list = Json::array();
  for (const Pair& p : merges) merge_list.push_back(Json::array({id_to_word[p.first], id_to_word[p.second]}));
  model["merges"] = merge_list;
  root["model"] = model;
  return root;
}

}  // namespace

Tokenizer train_byte_level_bpe(const std::vector<std::string>& texts, const BpeTrainerOptions& options) {
  BL_CHECK(options.min_frequency >= 0, "train_byte_level_bpe: min_frequency must be >= 0, got ",
           options.min_frequency);
  // Vocabulary: special tokens, then the 256 byte symbols sorted by code point.
  std::vector<std::string> id_to_word;
  std::unordered_map<std::string, int32_t> word_to_id;
  for (const std::string& s : options.special_tokens) {
    BL_CHECK(!s.empty(), "train_byte_level_bpe: empty special token");
    check_utf8(s, "train_byte_level_bpe: special token");
    if (word_to_id.count(s)) continue;
    word_to_id[s] = static_cast<int32_t>(id_to_word.size());
    id_to_word.push_back(s);
  }
  std::vector<std::pair<uint32_t, int>> alphabet;
  for (int b = 0; b < 256; ++b) alphabet.push_back({byte_to_code_point(static_cast<uint8_t>(b)), b});
  std::sort(alphabet.begin(), alphabet.end());
  int32_t byte_id[256];
  for (const auto& a : alphabet) {
    const std::string& symbol = byte_level_symbols()[a.second];
    auto it = word_to_id.find(symbol);
    if (it == word_to_id.end()) {
      it = word_to_id.emplace(symbol, static_cast<int32_t>(id_to_word.size())).first;
      id_to_word.push_back(symbol);
    }
    byte_id[a.second] = it->second;
  }
  BL_CHECK(options.vocab_size >= 0, "train_byte_level_bpe: vocab_size must be >= 0");

  // Word counts: pieces of the GPT-2 split, as raw bytes.
  const Regex split(kGpt2SplitPattern, "train_byte_level_bpe: split");
  std::unordered_map<std::string, int64_t> counts;
  for (size_t t = 0; t < texts.size(); ++t) {
    check_utf8(texts[t], "train_byte_level_bpe: texts[" + std::to_string(t) + "]");
    size_t prev = 0;
    auto add = [&](size_t b, size_t e) {
      if (e > b) ++counts[texts[t].substr(b, e - b)];
    };
    for (const auto& m : split.find_all(texts[t], 0, texts[t].size())) {
      add(prev, m.first);
      add(m.first, m.second);
      prev = m.second;
    }
    add(prev, texts[t].size());
  }
  // Sorted words so that nothing below depends on hash order.
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::vector<int32_t>> words(sorted.size());
  std::vector<int64_t> word_count(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    for (unsigned char b : sorted[i].first) words[i].push_back(byte_id[b]);
    word_count[i] = sorted[i].second;
  }

  std::unordered_map<Pair, int64_t, PairHash> pair_counts;
  std::unordered_map<Pair, std::set<size_t>, PairHash> where;
  for (size_t i = 0; i < words.size(); ++i) {
    for (size_t k = 0; k + 1 < words[i].size(); ++k) {
      const Pair p{words[i][k], words[i][k + 1]};
      pair_counts[p] += word_count[i];
      where[p].insert(i);
    }
  }
  std::priority_queue<HeapEntry> queue;
  auto push_updates = [&]() {
    for (auto& kv : where) {
      const int64_t c = pair_counts[kv.first];
      if (c > 0) {
        queue.push({kv.first, c, std::make_shared<std::vector<size_t>>(kv.second.begin(), kv.second.end())});
      }
    }
    where.clear();
  };
  push_updates();

  std::vector<Pair> merges;
  while (id_to_word.size() < static_cast<size_t>(std::max<int32_t>(options.vocab_size, 0)) && !queue.empty()) {
    HeapEntry top = queue.top();
    queue.pop();
    const int64_t current = pair_counts[top.pair];
    if (top.count != current) {
      top.count = current;
      queue.push(top);
      continue;
    }
    if (top.count < 1 || options.min_frequency > top.count) break;
    const std::string merged = id_to_word[top.pair.first] + id_to_word[top.pair.second];
    auto it = word_to_id.find(merged);
    if (it == word_to_id.end()) {
      it = word_to_id.emplace(merged, static_cast<int32_t>(id_to_word.size())).first;
      id_to_word.push_back(merged);
    }
    const int32_t new_id = it->second;
    merges.push_back(top.pair);
    std::vector<std::pair<Pair, int32_t>> changes;
    for (size_t w : *top.words) {
      changes.clear();
      merge_word(words[w], top.pair.first, top.pair.second, new_id, changes);
      for (const auto& ch : changes) {
        pair_counts[ch.first] += static_cast<int64_t>(ch.second) * word_count[w];
        if (ch.second > 0) where[ch.first].insert(w);
      }
    }
    push_updates();
  }
  const std::string text = build_json(id_to_word, merges, options.special_tokens).dump(2, ' ', false);
  return Tokenizer::from_json_text(text, "trained byte-level BPE");
}

}  // namespace bl::text
