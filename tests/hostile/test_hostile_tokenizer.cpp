// Hostile tokenizer.json files: ids that would size gigabytes of tables, and added tokens whose id
// the vocabulary gives to another string.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "bitlearn/io.h"
#include "bitlearn/tokenizer.h"
#include "core/error.h"

namespace bl::text {
namespace {

using Json = nlohmann::json;

// The fixture tokenizer: a byte-level BPE of 512 ids, "<|endoftext|>" = 0 in the vocabulary and
// as the one added token.
Json fixture() {
  return Json::parse(read_file_text(std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/tokenizer.json"));
}

std::string load_error(const Json& j) {
  try {
    Tokenizer::from_json_text(j.dump(), "tokenizer.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(HostileTokenizer, TheFixtureLoads) { EXPECT_EQ(load_error(fixture()), "(no error)"); }

TEST(HostileTokenizer, HugeVocabularyIdIsRefusedBeforeAnyTable) {
  Json j = fixture();
  j["model"]["vocab"]["zzz"] = 100000000;  // 1e8: 3 GB of id table before the limit
  EXPECT_HAS(load_error(j), "model.vocab['zzz']: token id 100000000 out of range [0, 16777216)");
  // Below the absolute limit, but far beyond what 513 tokens justify.
  j["model"]["vocab"]["zzz"] = 16000000;
  EXPECT_HAS(load_error(j), "model.vocab['zzz']: token id 16000000 leaves too large a gap: 513 tokens allow ids below 2050");
  // A small gap is fine.
  j["model"]["vocab"]["zzz"] = 700;
  EXPECT_EQ(load_error(j), "(no error)");
}

TEST(HostileTokenizer, HugeAddedTokenIdIsRefused) {
  Json j = fixture();
  j["added_tokens"].push_back({{"id", 100000000}, {"content", "<big>"}, {"special", true}});
  EXPECT_HAS(load_error(j), "added_tokens[1].id: token id 100000000 out of range");
  j["added_tokens"][1]["id"] = 9000000;
  EXPECT_HAS(load_error(j), "added_tokens: largest id 9000000 leaves too large a gap");
  j["added_tokens"][1]["id"] = 512;  // the next id: the usual layout
  EXPECT_EQ(load_error(j), "(no error)");
  EXPECT_EQ(Tokenizer::from_json_text(j.dump()).vocab_size(), 513);
}

TEST(HostileTokenizer, AddedTokenCollidingWithAVocabularyIdIsRefusedNamingBoth) {
  Json j = fixture();
  const std::string five = [&] {
    for (auto it = j["model"]["vocab"].begin(); it != j["model"]["vocab"].end(); ++it)
      if (it.value() == 5) return it.key();
    return std::string();
  }();
  ASSERT_FALSE(five.empty());
  j["added_tokens"].push_back({{"id", 5}, {"content", "<pad>"}, {"special", true}});
  const std::string e = load_error(j);
  EXPECT_HAS(e, "added_tokens[1].id: added token '<pad>' has id 5, which model.vocab gives to the token '" + five + "'");
  // Two added tokens with one id.
  Json k = fixture();
  k["added_tokens"].push_back({{"id", 600}, {"content", "<a>"}, {"special", true}});
  k["added_tokens"].push_back({{"id", 600}, {"content", "<b>"}, {"special", true}});
  EXPECT_HAS(load_error(k), "added_tokens[2].id: added token '<b>' has id 600, which added_tokens[1] gives to '<a>'");
  // The same string and id in the vocabulary and the added tokens (GPT-2's <|endoftext|>) is fine,
  // and so is a repeated added token.
  Json g = fixture();
  g["added_tokens"].push_back(g["added_tokens"][0]);
  EXPECT_EQ(load_error(g), "(no error)");
}

TEST(HostileTokenizer, PostProcessorIdsObeyTheLimit) {
  Json j = fixture();
  j["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", Json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                                 {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                         {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {100000000}}, {"tokens", {"<s>"}}}}}}};
  EXPECT_HAS(load_error(j), "token id 100000000 out of range");
}

}  // namespace
}  // namespace bl::text
