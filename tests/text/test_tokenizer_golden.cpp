// The tokenizer against golden data of the Hugging Face tokenizers library
// (scripts/golden/tokenizer.py -> tests/data/text/tokenizer_golden.json): encode and decode of
// thousands of texts for four byte-level BPE tokenizers, the regex classes of every code point, and
// training on a corpus (same vocabulary and merges as tokenizers' BpeTrainer).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/tokenizer.h"
#include "text/regex.h"
#include "text/utf8.h"

namespace {

using bl::text::Tokenizer;
using Json = nlohmann::json;

std::string source_path(const std::string& relative) { return std::string(BITLEARN_SOURCE_DIR) + "/" + relative; }

const Json& golden() {
  static const Json j = Json::parse(bl::read_file_text(source_path("tests/data/text/tokenizer_golden.json")));
  return j;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += std::to_string(id) + ",";
  return s;
}

void check_tokenizer(const std::string& name) {
  const Json& g = golden()["tokenizers"][name];
  const Tokenizer tok = Tokenizer::from_file(source_path(g["file"].get<std::string>()));
  EXPECT_EQ(tok.vocab_size(), g["vocab_size"].get<int32_t>());
  int encode_bad = 0, decode_bad = 0;
  for (const Json& c : g["encode"]) {
    const std::string text = c["text"].get<std::string>();
    const auto expected = c["ids"].get<std::vector<int32_t>>();
    const auto ids = tok.encode(text);
    if (ids != expected && ++encode_bad <= 5) {
      ADD_FAILURE() << name << ": encode(" << Json(text).dump() << ")\n  ours   " << ids_text(ids)
                    << "\n  theirs " << ids_text(expected);
    }
    const std::string decoded = tok.decode(expected);
    if (decoded != c["decoded"].get<std::string>() && ++decode_bad <= 5) {
      ADD_FAILURE() << name << ": decode(" << ids_text(expected) << ") = " << Json(decoded).dump();
    }
  }
  for (const Json& c : g["decode"]) {
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    const std::string a = tok.decode(ids, false), b = tok.decode(ids, true);
    if ((a != c["text"].get<std::string>() || b != c["text_skip_special"].get<std::string>()) && ++decode_bad <= 10) {
      ADD_FAILURE() << name << ": decode(" << ids_text(ids) << ") = " << Json(a).dump() << " / "
                    << Json(b).dump() << ", expected " << c["text"].dump() << " / " << c["text_skip_special"].dump();
    }
  }
  EXPECT_EQ(encode_bad, 0) << name << ": " << g["encode"].size() << " texts";
  EXPECT_EQ(decode_bad, 0) << name;
}

TEST(TokenizerGolden, FixtureEncodesAndDecodesLikeTokenizers) { check_tokenizer("fixture"); }
TEST(TokenizerGolden, PrefixSpaceTemplateAndAddedTokensLikeTokenizers) { check_tokenizer("prefix"); }
TEST(TokenizerGolden, Llama3StyleSplitSequenceLikeTokenizers) { check_tokenizer("split"); }
TEST(TokenizerGolden, TrainedByTokenizersLikeTokenizers) { check_tokenizer("trained"); }

// Membership of every code point (surrogates excepted) in a regex class, by matching the class
// against all code points in chunks.
std::vector<char> class_members(const std::string& pattern) {
  const bl::text::Regex re(pattern, "class test");
  std::vector<char> member(0x110000, 0);
  for (uint32_t start = 0; start < 0x110000; start += 4096) {
    std::string s;
    std::vector<uint32_t> at_byte;
    for (uint32_t c = start; c < start + 4096; ++c) {
      if (c >= 0xD800 && c < 0xE000) continue;
      const size_t before = s.size();
      bl::text::append_code_point(s, c);
      at_byte.resize(s.size(), 0);
      at_byte[before] = c;
    }
    for (const auto& m : re.find_all(s, 0, s.size())) member[at_byte[m.first]] = 1;
  }
  return member;
}

// Every code point must fall in \p{L}, \p{N} and \s exactly when tokenizers' regex engine
// (Oniguruma) puts it there, except code points that are unassigned (\p{Cn}) in the Unicode
// version of our PCRE2 (Unicode 14 for PCRE2 10.42): letters and digits added to Unicode since
// then are not letters or digits to us. The count of those is printed.
TEST(TokenizerGolden, RegexClassesOfEveryCodePointMatchTokenizers) {
  const std::vector<char> unassigned = class_members("\\p{Cn}");
  for (const char* name : {"L", "N", "s"}) {
    const std::string pattern = std::string(name) == "s" ? "\\s" : std::string("\\p{") + name + "}";
    const std::vector<char> got = class_members(pattern);
    std::vector<char> expected(0x110000, 0);
    for (const Json& r : golden()["code_point_classes"][name]) {
      for (uint32_t c = r[0].get<uint32_t>(); c <= r[1].get<uint32_t>(); ++c) expected[c] = 1;
    }
    int differ = 0, newer_unicode = 0;
    for (uint32_t c = 0; c < 0x110000; ++c) {
      if (expected[c] == got[c]) continue;
      if (unassigned[c] && !got[c]) {
        ++newer_unicode;
      } else if (++differ <= 10) {
        ADD_FAILURE() << "class " << name << ": U+" << std::hex << c << " ours " << int(got[c]) << " theirs "
                      << int(expected[c]);
      }
    }
    EXPECT_EQ(differ, 0) << "class " << name;
    std::printf("class %s: %d code points assigned after our Unicode tables differ\n", name, newer_unicode);
  }
}

std::vector<std::string> corpus_texts() {
  const std::string corpus = bl::read_file_text(source_path("tests/data/text/train_corpus.txt"));
  std::vector<std::string> texts;
  size_t begin = 0;
  while (begin < corpus.size()) {
    size_t end = corpus.find('\n', begin);
    end = end == std::string::npos ? corpus.size() : end + 1;
    texts.push_back(corpus.substr(begin, end - begin));
    begin = end;
  }
  return texts;
}

TEST(TokenizerGolden, TrainingGivesTheMergesOfTokenizersBpeTrainer) {
  const Json& t = golden()["train"];
  bl::text::BpeTrainerOptions options;
  options.vocab_size = t["vocab_size"].get<int32_t>();
  options.min_frequency = t["min_frequency"].get<int32_t>();
  options.special_tokens = t["special_tokens"].get<std::vector<std::string>>();
  const Tokenizer ours = bl::text::train_byte_level_bpe(corpus_texts(), options);
  const Json mine = Json::parse(ours.to_json_text());
  const Json theirs = Json::parse(bl::read_file_text(source_path(t["expected"].get<std::string>())));
  EXPECT_EQ(mine["model"]["vocab"], theirs["model"]["vocab"]);
  ASSERT_EQ(mine["model"]["merges"].size(), theirs["model"]["merges"].size());
  for (size_t i = 0; i < mine["model"]["merges"].size(); ++i) {
    ASSERT_EQ(mine["model"]["merges"][i], theirs["model"]["merges"][i]) << "merge " << i;
  }
  EXPECT_EQ(mine["added_tokens"], theirs["added_tokens"]);
  for (const Json& c : golden()["tokenizers"]["trained"]["encode"]) {
    ASSERT_EQ(ours.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int32_t>>())
        << Json(c["text"]).dump();
  }
}

TEST(TokenizerGolden, TrainingIsDeterministic) {
  bl::text::BpeTrainerOptions options;
  options.vocab_size = 400;
  const auto texts = corpus_texts();
  const std::string a = bl::text::train_byte_level_bpe(texts, options).to_json_text();
  std::vector<std::string> reversed(texts.rbegin(), texts.rend());
  const std::string b = bl::text::train_byte_level_bpe(reversed, options).to_json_text();
  EXPECT_EQ(a, b);  // word counts do not depend on the order of the texts
}

}  // namespace

namespace {

// Sabotage arm: the golden comparison must catch a tokenizer whose merge ranks are disturbed (the
// merge list reversed) and one whose byte-level split is off (use_regex turned off).
TEST(TokenizerGolden, SabotagedTokenizersFailTheGoldenComparison) {
  const Json& g = golden()["tokenizers"]["fixture"];
  const std::string text = bl::read_file_text(source_path(g["file"].get<std::string>()));
  auto count_mismatches = [&](const Json& file) {
    const Tokenizer tok = Tokenizer::from_json_text(file.dump(), "sabotaged");
    int bad = 0;
    for (const Json& c : g["encode"]) bad += tok.encode(c["text"].get<std::string>()) != c["ids"].get<std::vector<int32_t>>();
    return bad;
  };
  Json reversed = Json::parse(text);
  std::reverse(reversed["model"]["merges"].begin(), reversed["model"]["merges"].end());
  EXPECT_GT(count_mismatches(reversed), 100);
  Json no_regex = Json::parse(text);
  no_regex["pre_tokenizer"]["use_regex"] = false;
  EXPECT_GT(count_mismatches(no_regex), 100);
  EXPECT_EQ(count_mismatches(Json::parse(text)), 0);
}

}  // namespace
