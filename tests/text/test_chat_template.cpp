// bitlearn/chat_template.h: where a model folder's template comes from (chat_template.jinja first,
// then tokenizer_config.json's text or its list's "default"), bos_token and eos_token as texts or
// {"content"} objects, and the errors. The rendering itself is checked against jinja2 by
// tests/text/chat_template_test.py (ctest chat_template_peer).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bitlearn/chat_template.h"
#include "core/error.h"

namespace {

namespace fs = std::filesystem;
using bl::text::ChatMessage;
using bl::text::ChatTemplate;

class ChatTemplateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bl_chat_template_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  std::string dir() const { return dir_.string(); }
  fs::path dir_;
};

const std::vector<ChatMessage> kConversation = {{"system", "S"}, {"user", "Hi"}};

TEST_F(ChatTemplateDir, TokenizerConfigTextWithTokenObjects) {
  write("tokenizer_config.json",
        R"({"chat_template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}{% if add_generation_prompt %}>{% endif %}{{ eos_token }}",
            "bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>"})");
  const ChatTemplate t = ChatTemplate::from_model_dir(dir());
  EXPECT_EQ(t.apply(kConversation, false), "<s>[system:S][user:Hi]</s>");
  EXPECT_EQ(t.apply(kConversation, true), "<s>[system:S][user:Hi]></s>");
}

TEST_F(ChatTemplateDir, ListOfNamedTemplatesTakesDefault) {
  write("tokenizer_config.json",
        R"({"chat_template": [{"name": "tool_use", "template": "tools"}, {"name": "default", "template": "{{ messages | length }}"}]})");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir()).apply(kConversation, false), "2");
  write("tokenizer_config.json", R"({"chat_template": [{"name": "tool_use", "template": "tools"}]})");
  EXPECT_THROW(ChatTemplate::from_model_dir(dir()), bl::Error);
}

TEST_F(ChatTemplateDir, JinjaFileComesFirst) {
  write("tokenizer_config.json", R"({"chat_template": "from config", "eos_token": "E"})");
  write("chat_template.jinja", "from file {{ eos_token }}\n");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir()).apply(kConversation, false), "from file E");
}

TEST_F(ChatTemplateDir, ErrorsSayWhat) {
  try {
    ChatTemplate::from_model_dir(dir());
    FAIL() << "a folder without a template loaded";
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no chat template"), std::string::npos) << e.what();
  }
  write("tokenizer_config.json", "{\"chat_template\": ");
  EXPECT_THROW(ChatTemplate::from_model_dir(dir()), bl::Error);
  write("tokenizer_config.json", R"({"chat_template": "a\nb\n{% if x %}"})");
  try {
    ChatTemplate::from_model_dir(dir());
    FAIL() << "an unclosed if loaded";
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("endif"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, RaiseExceptionCarriesItsMessage) {
  const ChatTemplate t = ChatTemplate::from_text("{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}ok");
  EXPECT_EQ(t.apply({{"user", "x"}}, false), "ok");
  try {
    t.apply(kConversation, false);
    FAIL() << "raise_exception did not raise";
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("first must be user"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, ErrorsNameTheLine) {
  for (const char* source : {"a\n{{ x | nosuchfilter }}", "a\n{% macro m() %}{% endmacro %}", "a\n{{ 'never closed"}) {
    try {
      ChatTemplate::from_text(source);
      FAIL() << source << " loaded";
    } catch (const bl::Error& e) {
      EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
