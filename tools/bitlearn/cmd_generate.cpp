// `bitlearn generate` and `bitlearn logits`: run a Hugging Face decoder model (config.json +
// model.safetensors) on the CPU or CUDA with bitwise reproducible results.
//
//   bitlearn generate --model DIR (--prompt TEXT ... | --prompts-file FILE | --ids 1,2,3)
//                     [--jsonl] [--max-new-tokens N]
//                     [--temperature T --seed S --top-k K --top-p P --min-p P]
//                     [--repetition-penalty R] [--stop TEXT ...] [--stream] [--timings]
//                     [--ignore-eos] [--device cpu|cuda] [--tokenizer FILE] [--chat [--system TEXT]]
//                     [--messages FILE.json [--tools FILE.json]]
//
// --chat makes each prompt one user turn (after the --system message, when given) rendered by the
// model folder's chat template with the assistant's turn opened (add_generation_prompt), and encoded
// without adding special tokens (the rendered text holds them), as transformers'
// apply_chat_template(tokenize=True) does.
// --messages takes a whole conversation in OpenAI's chat format (a JSON list of messages, or a chat
// request object with "messages" and optionally "tools" / "tool_choice"), --tools a JSON list of
// tools: rendered as `bitlearn serve`'s /v1/chat/completions renders them, so the same request
// gives the same tokens (tokens_sha256) on both.
//
// Several prompts (or --jsonl) print one JSON line per prompt with its text, token ids and the
// SHA-256 of the whole sequence; --batch prompts at a time are generated together (one prefill,
// then decode steps over the sequences still running), and each line is what its prompt gives alone.
// Defaults come from DIR/generation_config.json when it is there (sampling settings, eos ids),
// and the options override them.
//   bitlearn logits --model DIR --ids 1,2,3 --out FILE.safetensors [--device cpu|cuda]
//
// The tokenizer defaults to DIR/tokenizer.json, then DIR/../tokenizer.json.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitlearn/chat_template.h"
#include "bitlearn/io.h"
#include "bitlearn/models.h"
#include "bitlearn/safetensors.h"
#include "bitlearn/tokenizer.h"
#include "command.h"
#include "progress_bar.h"
#include "text_generation.h"
#include "core/error.h"

namespace {

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    BL_CHECK(used == item.size() && !item.empty(), "--ids: '", item, "' is not an integer");
    BL_CHECK(v >= 0 && v <= 0x7FFFFFFF, "--ids: ", v, " is not a valid token id");
    ids.push_back(static_cast<int32_t>(v));
  }
  BL_CHECK(!ids.empty(), "--ids: no token ids given");
  return ids;
}

struct GenerateArgs {
  std::string model, ids, device = "cpu", tokenizer, prompts_file, system, messages_file, tools_file;
  std::vector<std::string> prompts;
  // Unset: the model folder's generation_config.json, else the library's defaults.
  std::optional<int64_t> max_new_tokens, top_k;
  std::optional<float> temperature, top_p, min_p, repetition_penalty;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  bool stream = false, timings = false, ignore_eos = false, jsonl = false, chat = false;
  int64_t batch = 8;  // prompts generated together (several prompts)
};

// The prompts of --prompt (repeatable) and --prompts-file (one per line; blank lines skipped).
std::vector<std::string> read_prompts(const GenerateArgs& a) {
  std::vector<std::string> out = a.prompts;
  if (!a.prompts_file.empty()) {
    std::istringstream lines(bl::read_file_text(a.prompts_file, "prompts file"));
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) out.push_back(line);
    }
    BL_CHECK(out.size() > a.prompts.size(), "generate: --prompts-file ", a.prompts_file, " holds no prompt");
  }
  return out;
}

// One JSON line of --jsonl output.
std::string jsonl_line(size_t index, const std::string* prompt, const bl::cli::TextRun& run) {
  nlohmann::json j;
  j["index"] = index;
  if (prompt != nullptr) j["prompt"] = *prompt;
  j["prompt_tokens"] = run.prompt.size();
  if (prompt != nullptr) j["text"] = run.text;
  j["finish_reason"] = run.finish_reason;
  j["token_ids"] = std::vector<int32_t>(run.ids.begin() + static_cast<std::ptrdiff_t>(run.prompt.size()), run.ids.end());
  j["tokens_sha256"] = bl::cli::token_ids_sha256(run.ids);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The prompt text of --messages (and --tools): the conversation rendered by the model's chat
// template with the assistant's turn opened, as serve's chat completions render a request.
std::string render_messages(const GenerateArgs& a) {
  using OJson = nlohmann::ordered_json;  // keys keep their order, as the server reads a request
  auto read = [](const std::string& path, const char* option) {
    try {
      return OJson::parse(bl::read_file_text(path, option));
    } catch (const OJson::exception& e) {
      throw bl::Error(std::string("generate: ") + option + " " + path + ": not valid JSON (" + e.what() + ")");
    }
  };
  const OJson file = read(a.messages_file, "--messages");
  OJson messages = file, tools;
  if (file.is_object()) {
    BL_CHECK(file.contains("messages"), "generate: --messages ", a.messages_file, ": an object needs \"messages\" (or give a list of messages)");
    messages = file["messages"];
    const OJson choice = file.contains("tool_choice") ? file["tool_choice"] : OJson("auto");
    BL_CHECK(choice == "auto" || choice == "none", "generate: --messages ", a.messages_file, ": tool_choice ", choice.dump(),
             " is not supported (only \"auto\" and \"none\")");
    if (file.contains("tools") && !file["tools"].is_null() && choice != "none") tools = file["tools"];
  }
  if (!a.tools_file.empty()) tools = read(a.tools_file, "--tools");
  if (tools == OJson::array()) tools = OJson();  // [] is no tools
  const bl::text::ChatTemplate chat = bl::text::ChatTemplate::from_model_dir(a.model);
  BL_CHECK(tools.is_null() || chat.uses_tools(), "generate: ", a.model,
           ": the chat template does not use tools (it would drop them); describe them in a message instead");
  try {
    return chat.apply_json(messages.dump(-1, ' ', false, OJson::error_handler_t::replace),
                           tools.is_null() ? "" : tools.dump(-1, ' ', false, OJson::error_handler_t::replace), true);
  } catch (const bl::Error& e) {
    throw bl::Error("generate: --messages " + a.messages_file + ": " + e.what());
  }
}

void run_generate(const GenerateArgs& a) {
  using namespace bl::models;
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> prompts = read_prompts(a);
  BL_CHECK(a.tools_file.empty() || !a.messages_file.empty(), "generate: --tools needs --messages");
  if (!a.messages_file.empty()) {
    BL_CHECK(prompts.empty() && a.ids.empty() && !a.chat && a.system.empty(),
             "generate: --messages is the whole prompt (no --prompt, --prompts-file, --ids, --chat or --system)");
    prompts.push_back(render_messages(a));
  }
  BL_CHECK(prompts.empty() != a.ids.empty(), "generate: give --prompt (or --prompts-file) or --ids, not both");
  BL_CHECK(a.stop.empty() || !prompts.empty(), "generate: --stop needs --prompt (stop strings are text)");
  BL_CHECK(prompts.size() <= 1 || !a.stream, "generate: --stream takes one prompt");
  for (const std::string& s : a.stop) BL_CHECK(!s.empty(), "generate: --stop needs a non-empty string");
  BL_CHECK(!a.chat || !prompts.empty(), "generate: --chat needs --prompt (or --prompts-file)");
  BL_CHECK(a.chat || a.system.empty(), "generate: --system needs --chat");
  std::optional<bl::text::ChatTemplate> chat;
  if (a.chat) chat = bl::text::ChatTemplate::from_model_dir(a.model);
  const CausalLM model = CausalLM::load(a.model, bl::Device::parse(a.device));
  GenerateOptions o = generation_config(a.model);
  if (a.max_new_tokens) o.max_new_tokens = *a.max_new_tokens;
  if (a.temperature) o.temperature = *a.temperature;
  if (a.top_k) o.top_k = *a.top_k;
  if (a.top_p) o.top_p = *a.top_p;
  if (a.min_p) o.min_p = *a.min_p;
  if (a.repetition_penalty) o.repetition_penalty = *a.repetition_penalty;
  o.seed = a.seed;
  o.stop_at_eos = !a.ignore_eos;

  const Clock::time_point start = Clock::now();
  Clock::time_point first;
  int64_t generated = 0;
  // A bar of the tokens of the prompt being generated, on a terminal, for runs over 0.5 s (a
  // stream shows the tokens themselves).
  bl::cli::ProgressBar bar(!a.stream);
  int64_t in_prompt = 0, bar_total = o.max_new_tokens;  // tokens of the prompts being generated
  auto count = [&] {
    if (generated++ == 0) first = Clock::now();
    bar.update("tokens", ++in_prompt, bar_total);
  };
  auto report = [&](size_t prompt_tokens) {
    if (!(a.timings || a.stream) || generated == 0) return;
    const double ttft = std::chrono::duration<double>(first - start).count();
    const double rest = std::chrono::duration<double>(Clock::now() - first).count();
    std::fprintf(stderr, "prompt %zu tokens; first token after %.1f ms; %lld tokens generated, %.1f tokens/s after the first\n",
                 prompt_tokens, 1e3 * ttft, static_cast<long long>(generated),
                 generated > 1 && rest > 0 ? static_cast<double>(generated - 1) / rest : 0.0);
  };

  if (!a.ids.empty()) {
    const std::vector<int32_t> prompt = parse_ids(a.ids);
    if (a.stream) {
      for (size_t i = 0; i < prompt.size(); ++i) std::printf("%s%d", i ? "," : "", prompt[i]);
      std::fflush(stdout);
    }
    o.on_token = [&](int32_t t) {
      count();
      if (a.stream) {
        std::printf(",%d", t);
        std::fflush(stdout);
      }
      return true;
    };
    const std::vector<int32_t> out = generate(model, prompt, o);
    bar.clear();
    if (a.jsonl) {
      bl::cli::TextRun run;
      run.prompt = prompt;
      run.ids = out;
      run.finish_reason = bl::cli::finish_reason(model, o, prompt.size(), out);
      std::printf("%s\n", jsonl_line(0, nullptr, run).c_str());
      report(prompt.size());
      return;
    }
    if (!a.stream)
      for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? "," : "", out[i]);
    std::printf("\n");
    report(prompt.size());
    return;
  }
  const std::string path = bl::cli::find_tokenizer(a.model, a.tokenizer);
  BL_CHECK(!path.empty(), "generate: no tokenizer.json in ", a.model, " or its parent; pass --tokenizer FILE");
  const bl::text::Tokenizer tok = bl::text::Tokenizer::from_file(path);
  // The token ids of a prompt: its text, or with --chat the chat template's rendering of it.
  auto encode = [&](const std::string& text) {
    if (!a.messages_file.empty()) return tok.encode(text, false);  // the rendered conversation
    if (!chat) return tok.encode(text);
    std::vector<bl::text::ChatMessage> messages;
    if (!a.system.empty()) messages.push_back({"system", a.system});
    messages.push_back({"user", text});
    return tok.encode(chat->apply(messages, true), false);
  };
  o.on_token = [&](int32_t) {
    count();
    return true;
  };
  if (prompts.size() > 1 || a.jsonl) {
    // --batch prompts at a time generated together (one prefill, then decode steps over the
    // sequences still running); each line has the tokens of that prompt sent alone.
    BL_CHECK(a.batch >= 1, "generate: --batch must be >= 1, got ", a.batch);
    for (size_t first_i = 0; first_i < prompts.size(); first_i += static_cast<size_t>(a.batch)) {
      const size_t end = std::min(prompts.size(), first_i + static_cast<size_t>(a.batch));
      std::vector<std::vector<int32_t>> ids;
      for (size_t i = first_i; i < end; ++i) ids.push_back(encode(prompts[i]));
      in_prompt = 0;
      bar_total = o.max_new_tokens * static_cast<int64_t>(end - first_i);
      const std::vector<bl::cli::TextRun> runs =
          bl::cli::generate_texts(model, tok, ids, o, a.stop, [&](size_t, int32_t) { count(); });
      bar.clear();
      for (size_t i = first_i; i < end; ++i) std::printf("%s\n", jsonl_line(i, &prompts[i], runs[i - first_i]).c_str());
      std::fflush(stdout);
    }
    return;
  }
  const std::vector<int32_t> prompt = encode(prompts[0]);
  std::function<bool(const std::string&)> on_text;
  if (a.stream) {
    std::fputs(tok.decode(prompt).c_str(), stdout);
    std::fflush(stdout);
    on_text = [](const std::string& piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    };
  }
  const bl::cli::TextRun run = bl::cli::generate_text(model, tok, prompt, o, a.stop, on_text);
  bar.clear();
  if (a.stream) {
    std::printf("\n");
  } else if (a.stop.empty()) {
    std::printf("%s\n", tok.decode(run.ids).c_str());
  } else {
    std::printf("%s%s\n", run.prompt_text.c_str(), run.text.c_str());
  }
  report(run.prompt.size());
}

struct LogitsArgs {
  std::string model, ids, out, device = "cpu";
};

void run_logits(const LogitsArgs& a) {
  using namespace bl::models;
  const CausalLM model = CausalLM::load(a.model, bl::Device::parse(a.device));
  const std::vector<int32_t> ids = parse_ids(a.ids);
  const bl::Tensor logits = model.forward({ids}).squeeze(0);  // [T, V]
  std::vector<int64_t> ids64(ids.begin(), ids.end());
  bl::save_safetensors(a.out,
                       {{"input_ids", bl::Tensor::from_vector(ids64, {static_cast<int64_t>(ids.size())})},
                        {"logits", logits}},
                       {{"model", a.model}, {"model_type", model.config().model_type}});
  std::printf("logits [%lld, %lld] -> %s (sha256 %s)\n", static_cast<long long>(logits.dim(0)),
              static_cast<long long>(logits.dim(1)), a.out.c_str(), logits.digest().c_str());
}

void setup(CLI::App& root) {
  auto ga = std::make_shared<GenerateArgs>();
  auto* g = root.add_subcommand("generate", "Generate text with a Hugging Face decoder model (greedy or sampled)");
  g->add_option("--model", ga->model, "Folder with config.json and model.safetensors")->required();
  g->add_option("--prompt", ga->prompts, "Prompt text (needs a tokenizer.json); repeat it for several prompts (JSON lines out)");
  g->add_option("--prompts-file", ga->prompts_file, "A text file of prompts, one per line (JSON lines out)");
  g->add_flag("--jsonl", ga->jsonl, "Print one JSON object per prompt: text, finish_reason, token_ids, tokens_sha256");
  g->add_option("--batch", ga->batch, "Several prompts: how many are generated together (default 8; each gives its bits alone)");
  g->add_option("--ids", ga->ids, "Prompt as comma-separated token ids");
  g->add_option("--max-new-tokens", ga->max_new_tokens, "Tokens to generate (default: generation_config.json, else 16)");
  g->add_option("--temperature", ga->temperature, "0 = greedy (the default unless generation_config.json samples); > 0 samples");
  g->add_option("--seed", ga->seed, "Sampling seed (default 0)");
  g->add_option("--top-k", ga->top_k, "Sample among the k most likely tokens (0 = all)");
  g->add_option("--top-p", ga->top_p, "Nucleus sampling mass (1 = off)");
  g->add_option("--min-p", ga->min_p, "Keep tokens at least this times as likely as the most likely (0 = off)");
  g->add_option("--repetition-penalty", ga->repetition_penalty, "Penalize tokens already in the text (1 = off; 1.1 is common)");
  g->add_option("--stop", ga->stop, "Stop when the generated text contains this string (repeatable; it is not printed)");
  g->add_flag("--stream", ga->stream, "Print tokens as they are generated, then timings on stderr");
  g->add_flag("--timings", ga->timings, "Print time to first token and tokens/s on stderr");
  g->add_flag("--ignore-eos", ga->ignore_eos, "Do not stop at end-of-sequence tokens");
  g->add_option("--device", ga->device, "cpu (default), cuda or cuda:N");
  g->add_flag("--chat", ga->chat, "Each prompt is a user turn of the model's chat template (assistant turn opened)");
  g->add_option("--system", ga->system, "With --chat: a system message before each prompt");
  g->add_option("--messages", ga->messages_file,
                "A conversation in OpenAI's chat format (JSON list of messages, or {messages, tools}) rendered by the chat template");
  g->add_option("--tools", ga->tools_file, "With --messages: a JSON list of tools ({type: function, function: {...}}) for the template");
  g->add_option("--tokenizer", ga->tokenizer, "tokenizer.json (default DIR/tokenizer.json, then DIR/../tokenizer.json)");
  g->callback([ga] { run_generate(*ga); });

  auto la = std::make_shared<LogitsArgs>();
  auto* l = root.add_subcommand("logits", "Write the logits of a token sequence to a safetensors file");
  l->add_option("--model", la->model, "Folder with config.json and model.safetensors")->required();
  l->add_option("--ids", la->ids, "Comma-separated token ids")->required();
  l->add_option("--out", la->out, "Output .safetensors file (tensors input_ids, logits)")->required();
  l->add_option("--device", la->device, "cpu (default), cuda or cuda:N");
  l->callback([la] { run_logits(*la); });
}

BL_REGISTER_COMMAND(setup);

}  // namespace
