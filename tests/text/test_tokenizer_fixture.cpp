// The Hugging Face fixture tokenizer (tests/data/hf/tokenizer.json): the recorded case, the
// vocabulary queries, saving and reloading, and the errors on bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/tokenizer.h"
#include "core/error.h"

namespace {

using bl::text::Tokenizer;

std::string fixture_path() { return std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/tokenizer.json"; }

TEST(TokenizerFixture, EncodesAndDecodesTheRecordedCase) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  const auto c = nlohmann::json::parse(
      bl::read_file_text(std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/tokenizer_case.json"));
  const auto expected = c["ids"].get<std::vector<int32_t>>();
  EXPECT_EQ(tok.encode(c["text"].get<std::string>()), expected);
  EXPECT_EQ(tok.decode(expected), c["decoded"].get<std::string>());
}

TEST(TokenizerFixture, VocabularyQueries) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  EXPECT_EQ(tok.vocab_size(), 512);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 0);
  EXPECT_EQ(tok.id_to_token(0), "<|endoftext|>");
  EXPECT_EQ(tok.token_to_id("def"), 467);
  EXPECT_EQ(tok.id_to_token(284), "\xC4\xA0"
                                  "f");  // "Ġf"
  EXPECT_FALSE(tok.token_to_id("no such token").has_value());
  EXPECT_THROW(tok.id_to_token(512), bl::Error);
  EXPECT_THROW(tok.id_to_token(-1), bl::Error);
}

TEST(TokenizerFixture, SpecialTokensInTextAndSkipOnDecode) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  EXPECT_EQ(tok.encode("<|endoftext|>def<|endoftext|>"), (std::vector<int32_t>{0, 467, 0}));
  EXPECT_EQ(tok.decode({0, 467, 284}), "<|endoftext|>def f");
  EXPECT_EQ(tok.decode({0, 467, 284}, true), "def f");
  EXPECT_EQ(tok.encode(""), std::vector<int32_t>{});
}

TEST(TokenizerFixture, PartialUtf8DecodesToReplacementCharacter) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  const auto ids = tok.encode("\xC3\xA9");  // é: two byte tokens
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(tok.decode({ids[0]}), "\xEF\xBF\xBD");
  EXPECT_EQ(tok.decode(ids), "\xC3\xA9");
}

TEST(TokenizerFixture, SaveAndReloadGiveTheSameTokenizer) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  const std::string path = ::testing::TempDir() + "/bitlearn_tokenizer_roundtrip.json";
  tok.save(path);
  const Tokenizer again = Tokenizer::from_file(path);
  const std::string text = "def f(x):\n    return x ** 2  # caf\xC3\xA9 <|endoftext|>";
  EXPECT_EQ(again.encode(text), tok.encode(text));
  EXPECT_EQ(again.to_json_text(), tok.to_json_text());
}

TEST(TokenizerFixture, DecodeRejectsIdsOutOfRange) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  try {
    tok.decode({1, 512});
    FAIL() << "no error";
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("id 512"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tok.decode({-3}), bl::Error);
}

TEST(TokenizerFixture, EncodeRejectsInvalidUtf8) {
  const Tokenizer tok = Tokenizer::from_file(fixture_path());
  EXPECT_THROW(tok.encode("ab\xC3"), bl::Error);
  EXPECT_THROW(tok.encode("\xED\xA0\x80"), bl::Error);  // a surrogate
}

std::string error_of(const std::string& json_text) {
  try {
    Tokenizer::from_json_text(json_text, "case");
  } catch (const bl::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenizerFixture, BadFilesGiveErrorsNamingTheField) {
  const std::string good = bl::read_file_text(fixture_path());
  EXPECT_NE(error_of("{\"model\": ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
  auto j = nlohmann::ordered_json::parse(good);
  auto with = [&](auto edit) {
    auto k = j;
    edit(k);
    return error_of(k.dump());
  };
  EXPECT_NE(with([](auto& k) { k.erase("model"); }).find("model: missing"), std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"]["type"] = "WordPiece"; }).find("model.type: 'WordPiece'"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"]["type"] = "Unigram"; }).find("'Unigram' is not supported"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"].erase("vocab"); }).find("model.vocab: missing"), std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"].erase("merges"); }).find("model.merges: missing"), std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"]["merges"][3] = "onlyone"; }).find("model.merges[3]"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"]["merges"][2] = {"zz", "q"}; }).find("not in model.vocab"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"]["vocab"]["def"] = "x"; }).find("model.vocab['def']"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["normalizer"] = {{"type", "NFC"}}; }).find("normalizer.type: 'NFC'"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["pre_tokenizer"] = {{"type", "Whitespace"}}; }).find("pre_tokenizer.type"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["decoder"] = {{"type", "WordPiece"}}; }).find("decoder.type"),
            std::string::npos);
  EXPECT_NE(with([](auto& k) { k["truncation"] = {{"max_length", 8}}; }).find("truncation"), std::string::npos);
  EXPECT_NE(with([](auto& k) { k["model"]["dropout"] = 0.1; }).find("model.dropout"), std::string::npos);
  EXPECT_NE(with([](auto& k) { k["added_tokens"][0].erase("content"); }).find("added_tokens[0].content"),
            std::string::npos);
  EXPECT_THROW(Tokenizer::from_file("/nonexistent/tokenizer.json"), bl::Error);
}

}  // namespace
