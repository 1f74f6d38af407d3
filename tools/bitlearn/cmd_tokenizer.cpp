// `bitlearn tokenizer`: train, encode and decode with byte-level BPE tokenizers (tokenizer.json).
//
//   bitlearn tokenizer train --corpus FILE... --vocab-size N [--min-frequency F] [--special TOKEN...] --out FILE
//   bitlearn tokenizer encode --tokenizer FILE (--text TEXT | --file FILE | --jsonl FILE)
//   bitlearn tokenizer decode --tokenizer FILE --ids 1,2,3 [--skip-special-tokens]
//   bitlearn tokenizer chat (--model DIR | --template FILE [--bos TEXT] [--eos TEXT])
//                           --messages FILE.json [--generation-prompt] [--ids [--tokenizer FILE]]
// The corpus is split into texts after every newline. encode prints the ids comma-separated; with
// --jsonl (one JSON string per line) it prints one line of ids per input line. chat prints the
// prompt a chat template renders for a conversation (a JSON list of {"role", "content"}), as
// transformers' apply_chat_template(tokenize=False) does; with --ids, its token ids (encoded without
// adding special tokens: the rendered text holds them).
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitlearn/chat_template.h"
#include "bitlearn/io.h"
#include "bitlearn/tokenizer.h"
#include "command.h"
#include "text_generation.h"
#include "core/error.h"

namespace {

struct Options {
  std::vector<std::string> corpus;
  int32_t vocab_size = 1000;
  int32_t min_frequency = 2;
  std::vector<std::string> special;
  std::string out, tokenizer, text, file, jsonl, ids;
  bool skip_special = false;
  std::string model, template_file, bos, eos, messages;
  bool generation_prompt = false, chat_ids = false;
};

// The conversation of a messages file: a JSON list of {"role": text, "content": text}.
std::vector<bl::text::ChatMessage> read_messages(const std::string& path) {
  const std::string text = bl::read_file_text(path, "messages file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw bl::Error(bl::detail::concat(path, ": not valid JSON (", e.what(), ")"));
  }
  BL_CHECK(j.is_array(), path, ": expected a JSON list of messages ({\"role\": ..., \"content\": ...})");
  std::vector<bl::text::ChatMessage> out;
  for (size_t k = 0; k < j.size(); ++k) {
    const nlohmann::json& m = j[k];
    BL_CHECK(m.is_object() && m.contains("role") && m["role"].is_string() && m.contains("content") &&
                 m["content"].is_string(),
             path, ": message ", k, " is not an object with a text \"role\" and a text \"content\"");
    out.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& corpus) {
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

std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  size_t begin = 0;
  while (begin <= s.size() && !s.empty()) {
    size_t end = s.find(',', begin);
    if (end == std::string::npos) end = s.size();
    const std::string part = s.substr(begin, end - begin);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    BL_CHECK(used == part.size() && !part.empty() && v >= INT32_MIN && v <= INT32_MAX,
             "--ids: '", part, "' is not an integer id");
    ids.push_back(static_cast<int32_t>(v));
    begin = end + 1;
  }
  return ids;
}

void setup(CLI::App& root) {
  auto opt = std::make_shared<Options>();
  auto* cmd = root.add_subcommand("tokenizer", "Train, encode and decode byte-level BPE tokenizers");
  cmd->require_subcommand(1);

  auto* train = cmd->add_subcommand("train", "Train a byte-level BPE and save it as tokenizer.json");
  train->add_option("--corpus", opt->corpus, "UTF-8 text files (split into texts at newlines)")->required();
  train->add_option("--vocab-size", opt->vocab_size, "final vocabulary size")->required();
  train->add_option("--min-frequency", opt->min_frequency, "least pair count that is merged");
  train->add_option("--special", opt->special, "special tokens (ids 0, 1, ...)");
  train->add_option("--out", opt->out, "tokenizer.json to write")->required();
  train->callback([opt] {
    std::vector<std::string> texts;
    for (const auto& path : opt->corpus) {
      for (auto& t : split_lines(bl::read_file_text(path, "corpus"))) texts.push_back(std::move(t));
    }
    bl::text::BpeTrainerOptions o;
    o.vocab_size = opt->vocab_size;
    o.min_frequency = opt->min_frequency;
    o.special_tokens = opt->special;
    const auto tok = bl::text::train_byte_level_bpe(texts, o);
    tok.save(opt->out);
    std::printf("trained %d tokens on %zu texts -> %s\n", tok.vocab_size(), texts.size(), opt->out.c_str());
  });

  auto* encode = cmd->add_subcommand("encode", "Print the token ids of a text");
  encode->add_option("--tokenizer", opt->tokenizer, "tokenizer.json")->required();
  auto* text = encode->add_option("--text", opt->text, "the text");
  auto* file = encode->add_option("--file", opt->file, "a UTF-8 file holding the text");
  auto* jsonl = encode->add_option("--jsonl", opt->jsonl, "a file of JSON strings, one a line");
  text->excludes(file);
  jsonl->excludes(text);
  jsonl->excludes(file);
  encode->callback([opt] {
    const auto tok = bl::text::Tokenizer::from_file(opt->tokenizer);
    if (!opt->jsonl.empty()) {
      const auto lines = split_lines(bl::read_file_text(opt->jsonl, "jsonl file"));
      for (size_t k = 0; k < lines.size(); ++k) {
        std::string input;
        try {
          input = nlohmann::json::parse(lines[k]).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          throw bl::Error(bl::detail::concat(opt->jsonl, ": line ", k + 1, " is not a JSON string"));
        }
        const auto ids = tok.encode(input);
        for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? ",%d" : "%d", ids[i]);
        std::printf("\n");
      }
      return;
    }
    const std::string input = opt->file.empty() ? opt->text : bl::read_file_text(opt->file, "text file");
    const auto ids = tok.encode(input);
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? ",%d" : "%d", ids[i]);
    std::printf("\n");
  });

  auto* decode = cmd->add_subcommand("decode", "Print the text of token ids");
  decode->add_option("--tokenizer", opt->tokenizer, "tokenizer.json")->required();
  decode->add_option("--ids", opt->ids, "comma-separated ids")->required();
  decode->add_flag("--skip-special-tokens", opt->skip_special, "leave special tokens out");
  decode->callback([opt] {
    const auto tok = bl::text::Tokenizer::from_file(opt->tokenizer);
    const std::string text = tok.decode(parse_ids(opt->ids), opt->skip_special);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::printf("\n");
  });

  auto* chat = cmd->add_subcommand("chat", "Print the prompt a chat template renders for a conversation");
  auto* model = chat->add_option("--model", opt->model, "model folder (chat_template.jinja or tokenizer_config.json)");
  auto* tmpl = chat->add_option("--template", opt->template_file, "a Jinja chat template file");
  model->excludes(tmpl);
  chat->add_option("--bos", opt->bos, "bos_token for --template")->needs(tmpl);
  chat->add_option("--eos", opt->eos, "eos_token for --template")->needs(tmpl);
  chat->add_option("--messages", opt->messages, "a JSON list of {\"role\", \"content\"}")->required();
  chat->add_flag("--generation-prompt", opt->generation_prompt, "end with the start of an assistant turn");
  chat->add_flag("--ids", opt->chat_ids, "print the token ids instead of the text");
  chat->add_option("--tokenizer", opt->tokenizer, "tokenizer.json for --ids (default: the model folder's)");
  chat->callback([opt] {
    BL_CHECK(!opt->model.empty() || !opt->template_file.empty(), "tokenizer chat: give --model DIR or --template FILE");
    const auto messages = read_messages(opt->messages);
    const bl::text::ChatTemplate t =
        opt->model.empty() ? bl::text::ChatTemplate::from_text(bl::read_file_text(opt->template_file, "chat template"),
                                                               opt->bos, opt->eos)
                           : bl::text::ChatTemplate::from_model_dir(opt->model);
    const std::string prompt = t.apply(messages, opt->generation_prompt);
    if (!opt->chat_ids) {
      std::fwrite(prompt.data(), 1, prompt.size(), stdout);
      return;
    }
    const std::string path = opt->model.empty() ? opt->tokenizer : bl::cli::find_tokenizer(opt->model, opt->tokenizer);
    BL_CHECK(!path.empty(), "tokenizer chat: --ids needs --tokenizer FILE (or a model folder with tokenizer.json)");
    const auto ids = bl::text::Tokenizer::from_file(path).encode(prompt, false);
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? ",%d" : "%d", ids[i]);
    std::printf("\n");
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
