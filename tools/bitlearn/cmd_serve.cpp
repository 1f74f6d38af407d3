// `bitlearn serve`: an HTTP server with OpenAI-compatible completions for one Hugging Face decoder
// model, on cpp-httplib.
//
//   bitlearn serve --model DIR [--host 127.0.0.1] [--port 8080] [--device cpu|cuda]
//                  [--tokenizer FILE] [--max-tokens-limit N]
//
// Endpoints:
//   GET  /health               {"status": "ok"}
//   GET  /v1/models            the one model, as OpenAI's model list
//   POST /v1/completions       prompt (text, token ids, or a list of texts: one choice each),
//                              max_tokens, temperature, top_p, top_k, min_p, repetition_penalty,
//                              seed, stop (a string or up to 4), stream (server-sent events), echo,
//                              ignore_eos. Unset options take the model folder's generation_config.json
//                              defaults, as `bitlearn generate` does, so the same request gives the
//                              same tokens as the same `generate` command.
//   POST /v1/chat/completions  messages (a list of {role, content, ...}; content a text or a list of
//                              {"type": "text", "text": ...} parts; an image part is a 400, the models
//                              read text only), rendered by the model folder's chat template
//                              (chat_template.jinja or tokenizer_config.json) with add_generation_prompt
//                              and encoded without adding special tokens; the same options as
//                              /v1/completions (no echo; max_completion_tokens is max_tokens); stream
//                              gives chat.completion.chunk events with `delta`. A model without a chat
//                              template answers 501 saying so.
//                              Tools: `tools` (OpenAI function schemas) reach the template as `tools`,
//                              assistant messages' tool_calls (their JSON-text arguments as objects)
//                              and role "tool" messages as given; a template that does not use tools
//                              refuses them. tool_choice "auto" or "none" (no tools rendered). With a
//                              template of <tool_call> blocks (Hermes / Qwen2.5), a reply's blocks
//                              become message.tool_calls (finish_reason "tool_calls"); stream with
//                              tools is a 400.
// Each choice carries `token_ids` (the generated ids) and `tokens_sha256`, the SHA-256 of the whole
// sequence (prompt then generated ids, little-endian int32), which `bitlearn generate --ids`
// reproduces. Requests are served one generation at a time. SIGINT or SIGTERM stops the server.
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitlearn/chat_template.h"
#include "bitlearn/models.h"
#include "bitlearn/tokenizer.h"
#include "bitlearn/version.h"
#include "command.h"
#include "core/error.h"

#if BITLEARN_HAS_HTTP_SERVER
#include <httplib.h>
#include <pthread.h>

#include "io/json_number.h"
#include "text_generation.h"
#endif

namespace {

using nlohmann::json;

struct ServeArgs {
  std::string model, host = "127.0.0.1", device = "cpu", tokenizer;
  int port = 8080;
  int64_t max_tokens_limit = 4096;
};

#if BITLEARN_HAS_HTTP_SERVER

// A request the server refuses: HTTP status and message.
struct RequestError {
  int status;
  std::string message;
};

[[noreturn]] void refuse(const std::string& message, int status = 400) { throw RequestError{status, message}; }

double number_field(const json& body, const char* key, double lo, double hi, bool lo_open = false) {
  const json& v = body[key];
  if (!v.is_number()) refuse(std::string("'") + key + "' must be a number, got " + v.dump(-1, ' ', false, json::error_handler_t::replace));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi || (lo_open && x == lo)) {
    refuse(std::string("'") + key + "' = " + v.dump(-1, ' ', false, json::error_handler_t::replace) + " is out of range " + (lo_open ? "(" : "[") +
           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

template <class T>
T integer_field(const json& body, const char* key, T lo, T hi) {
  T x{};
  try {
    x = bl::io::json_integer<T>(body[key], std::string("'") + key + "'");
  } catch (const bl::Error& e) {
    refuse(e.what());
  }
  if (x < lo || x > hi) refuse(std::string("'") + key + "' = " + std::to_string(x) + " is out of range");
  return x;
}

bool present(const json& body, const char* key) { return body.contains(key) && !body[key].is_null(); }

struct Completion {
  std::vector<std::vector<int32_t>> prompts;  // one per choice
  bl::models::GenerateOptions options;
  std::vector<std::string> stop;
  bool stream = false, echo = false;
  bool tool_calls = false;  // chat: the reply's <tool_call> blocks become message.tool_calls
};

class Server {
 public:
  Server(const ServeArgs& a, const sigset_t& stop_signals)
      : args_(a),
        stop_signals_(stop_signals),
        model_(bl::models::CausalLM::load(a.model, bl::Device::parse(a.device))),
        defaults_(bl::models::generation_config(a.model)),
        tok_(load_tokenizer(a)),
        id_(std::filesystem::path(a.model).filename().string()) {
    if (id_.empty()) id_ = std::filesystem::path(a.model).parent_path().filename().string();
    try {
      chat_ = bl::text::ChatTemplate::from_model_dir(a.model);
    } catch (const bl::Error& e) {
      chat_error_ = e.what();
      std::fprintf(stderr, "serve: no chat completions: %s\n", e.what());
    }
  }

  void run() {
    httplib::Server http;
    http.set_payload_max_length(size_t{1} << 20);
    http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"ok"})", "application/json");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      const json list = {{"object", "list"},
                         {"data", json::array({{{"id", id_}, {"object", "model"}, {"created", 0}, {"owned_by", "bitlearn"}}})}};
      res.set_content(list.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    });
    http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { completions(req, res); });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { chat(req, res); });
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (res.body.empty()) {
        const json e = {{"error", {{"message", "no endpoint " + req.method + " " + req.path}, {"type", "invalid_request_error"}}}};
        res.set_content(e.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
      }
    });
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::fprintf(stderr, "%s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
    });

    int port = args_.port;
    if (port == 0) {
      port = http.bind_to_any_port(args_.host);
      BL_CHECK(port > 0, "serve: cannot listen on ", args_.host, " (any port)");
    } else {
      BL_CHECK(http.bind_to_port(args_.host, port), "serve: cannot listen on ", args_.host, ":", port,
               " (in use, or not an address of this machine)");
    }
    // SIGINT/SIGTERM (blocked in every thread since run_serve began) are taken by one thread
    // (sigwait) that stops the server.
    std::atomic<bool> ending{false};
    std::thread waiter([&] {
      int sig = 0;
      sigwait(&stop_signals_, &sig);
      if (!ending) std::fprintf(stderr, "serve: signal %d, stopping\n", sig);
      ending = true;
      http.stop();
    });
    std::printf("serving %s on http://%s:%d (device %s)\n", id_.c_str(), args_.host.c_str(), port,
                model_.device().str().c_str());
    std::fflush(stdout);
    const bool ok = http.listen_after_bind();
    const bool signalled = ending.exchange(true);
    if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);  // wake the waiter to join it
    waiter.join();
    BL_CHECK(ok || signalled, "serve: the server stopped on an error");
  }

 private:
  static bl::text::Tokenizer load_tokenizer(const ServeArgs& a) {
    const std::string path = bl::cli::find_tokenizer(a.model, a.tokenizer);
    BL_CHECK(!path.empty(), "serve: no tokenizer.json in ", a.model, " or its parent; pass --tokenizer FILE");
    return bl::text::Tokenizer::from_file(path);
  }

  static void error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    const json e = {{"error", {{"message", message}, {"type", status >= 500 ? "server_error" : "invalid_request_error"}}}};
    res.set_content(e.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  }

  std::vector<int32_t> ids_of(const json& p) const {
    if (p.is_string()) return tok_.encode(p.get<std::string>());
    std::vector<int32_t> ids;
    try {
      ids = bl::io::json_integers<int32_t>(p, "'prompt'");
    } catch (const bl::Error& e) {
      refuse(e.what());
    }
    const int64_t vocab = model_.config().vocab_size;
    for (int32_t id : ids)
      if (id < 0 || id >= vocab) refuse("'prompt' holds token id " + std::to_string(id) + ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
    return ids;
  }

  static json parse_body(const std::string& text) {
    json body;
    try {
      body = json::parse(text);
    } catch (const json::exception& e) {
      refuse(std::string("the request body is not JSON: ") + e.what());
    }
    if (!body.is_object()) refuse("the request body must be a JSON object");
    return body;
  }

  Completion parse(const std::string& text) const {
    const json body = parse_body(text);
    Completion c;
    if (!present(body, "prompt")) refuse("'prompt' is missing");
    const json& p = body["prompt"];
    if (p.is_array() && !p.empty() && p[0].is_string()) {
      for (const json& one : p) {
        if (!one.is_string()) refuse("'prompt' mixes texts and other values");
        c.prompts.push_back(ids_of(one));
      }
    } else if (p.is_string() || p.is_array()) {
      c.prompts.push_back(ids_of(p));
    } else {
      refuse("'prompt' must be a text, a list of texts or a list of token ids");
    }
    for (const auto& ids : c.prompts)
      if (ids.empty()) refuse("'prompt' is empty (no tokens)");
    parse_options(body, c);
    c.echo = flag(body, "echo");
    if (c.stream && c.prompts.size() > 1) refuse("'stream' takes one prompt");
    return c;
  }

  static bool flag(const json& body, const char* key) {
    if (!present(body, key)) return false;
    if (!body[key].is_boolean()) refuse(std::string("'") + key + "' must be true or false");
    return body[key].get<bool>();
  }

  // The sampling options, stop strings and stream flag shared by completions and chat completions.
  void parse_options(const json& body, Completion& c) const {
    c.options = defaults_;
    if (present(body, "max_tokens")) c.options.max_new_tokens = integer_field<int64_t>(body, "max_tokens", 0, args_.max_tokens_limit);
    if (present(body, "temperature")) c.options.temperature = static_cast<float>(number_field(body, "temperature", 0, 100));
    if (present(body, "top_p")) c.options.top_p = static_cast<float>(number_field(body, "top_p", 0, 1, true));
    if (present(body, "top_k")) c.options.top_k = integer_field<int64_t>(body, "top_k", 0, INT32_MAX);
    if (present(body, "min_p")) c.options.min_p = static_cast<float>(number_field(body, "min_p", 0, 1));
    if (present(body, "repetition_penalty"))
      c.options.repetition_penalty = static_cast<float>(number_field(body, "repetition_penalty", 0, 100, true));
    c.options.seed = present(body, "seed") ? integer_field<uint64_t>(body, "seed", 0, UINT64_MAX) : 0;
    for (const char* key : {"frequency_penalty", "presence_penalty"})
      if (present(body, key) && !(body[key].is_number() && body[key].get<double>() == 0))
        refuse(std::string("'") + key + "' is not supported (use repetition_penalty)");
    if (present(body, "n") && !(body["n"].is_number_integer() && body["n"].get<int64_t>() == 1))
      refuse("'n' must be 1 (send a list of prompts for several completions)");
    if (present(body, "logprobs")) refuse("'logprobs' is not supported");
    c.stream = flag(body, "stream");
    c.options.stop_at_eos = !flag(body, "ignore_eos");
    if (present(body, "stop")) {
      const json& s = body["stop"];
      if (s.is_string()) {
        c.stop.push_back(s.get<std::string>());
      } else if (s.is_array() && s.size() <= 4) {
        for (const json& one : s) {
          if (!one.is_string()) refuse("'stop' must hold texts");
          c.stop.push_back(one.get<std::string>());
        }
      } else {
        refuse("'stop' must be a text or a list of up to 4 texts");
      }
      for (const std::string& one : c.stop)
        if (one.empty()) refuse("'stop' holds an empty text");
    }
  }

  // A chat request: its messages (and tools) rendered by the chat template, then the options.
  Completion parse_chat(const std::string& text) const {
    const json body = parse_body(text);
    if (!present(body, "messages")) refuse("'messages' is missing");
    for (const char* key : {"functions", "function_call"})
      if (present(body, key)) refuse(std::string("'") + key + "' (the deprecated form) is not supported: send 'tools'");
    // tool_choice: "auto" (the default) lets the model choose; "none" renders no tools.
    bool pass_tools = present(body, "tools") && body["tools"] != json::array();  // [] is no tools
    if (present(body, "tool_choice")) {
      const json& tc = body["tool_choice"];
      if (tc == "none") {
        pass_tools = false;
      } else if (tc != "auto") {
        refuse("'tool_choice' = " + tc.dump(-1, ' ', false, json::error_handler_t::replace) +
               " is not supported (only \"auto\" and \"none\": the model's output is not constrained)");
      }
    }
    if (present(body, "parallel_tool_calls") && body["parallel_tool_calls"] != true)
      refuse("'parallel_tool_calls' = false is not supported (the model's output is not constrained)");
    // Messages and tools go to the template with their keys in the request's order (tojson writes them so).
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text);
    const std::string tools = pass_tools ? ordered["tools"].dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) : "";
    if (pass_tools && !chat_->uses_tools())
      refuse("'tools': the model's chat template does not use tools (it would drop them); describe them in a message instead");
    Completion c;
    c.tool_calls = pass_tools && chat_->marks_tool_calls();
    std::string prompt;
    try {
      prompt = chat_->apply_json(ordered["messages"].dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), tools, true);
    } catch (const bl::Error& e) {
      refuse(e.what());
    }
    c.prompts.push_back(tok_.encode(prompt, false));
    if (c.prompts[0].empty()) refuse("the chat template renders an empty prompt");
    json options = body;
    if (present(body, "max_completion_tokens")) {
      if (present(body, "max_tokens")) refuse("give 'max_tokens' or 'max_completion_tokens', not both");
      options["max_tokens"] = body["max_completion_tokens"];
    }
    if (present(body, "echo")) refuse("'echo' is not a chat completions option");
    parse_options(options, c);
    if (c.stream && pass_tools) refuse("'stream' with 'tools' is not supported: send stream: false to get tool calls");
    return c;
  }

  json choice(size_t index, const bl::cli::TextRun& run, bool echo) const {
    const std::vector<int32_t> generated(run.ids.begin() + static_cast<std::ptrdiff_t>(run.prompt.size()), run.ids.end());
    return {{"index", index},
            {"text", echo ? run.prompt_text + run.text : run.text},
            {"finish_reason", run.finish_reason},
            {"logprobs", nullptr},
            {"token_ids", generated},
            {"tokens_sha256", bl::cli::token_ids_sha256(run.ids)}};
  }

  json envelope(const std::string& id, const char* object = "text_completion") const {
    return {{"id", id},
            {"object", object},
            {"created", static_cast<int64_t>(std::time(nullptr))},
            {"model", id_},
            {"system_fingerprint", std::string("bitlearn ") + bl::kVersion + " " + bl::kContractProfile}};
  }

  // Parses a request body with `parse` into c; a refused request is answered here (false).
  template <class Parse>
  bool parse_request(const std::string& body, Parse parse, Completion& c, httplib::Response& res) const {
    try {
      c = parse(body);
      return true;
    } catch (const RequestError& e) {
      error(res, e.status, e.message);
    } catch (const bl::Error& e) {
      error(res, 400, e.what());
    }
    return false;
  }

  using Send = std::function<bool(const json&)>;

  // Answers with server-sent events: `events(send)` runs one generation under the generation lock,
  // sending its events; then "data: [DONE]". An error during generation is sent as an event.
  void stream(httplib::Response& res, std::function<void(const Send&)> events) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, events](size_t, httplib::DataSink& sink) {
      const Send send = [&](const json& j) {
        const std::string event = "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
        return sink.write(event.data(), event.size());
      };
      try {
        std::lock_guard<std::mutex> lock(generation_);
        events(send);
      } catch (const bl::Error& e) {
        send({{"error", {{"message", e.what()}, {"type", "invalid_request_error"}}}});
      }
      const std::string done = "data: [DONE]\n\n";
      sink.write(done.data(), done.size());
      sink.done();
      return true;
    });
  }

  void completions(const httplib::Request& req, httplib::Response& res) {
    Completion c;
    if (!parse_request(req.body, [this](const std::string& b) { return parse(b); }, c, res)) return;
    const std::string id = "cmpl-" + std::to_string(++served_);
    if (c.stream) {
      auto shared = std::make_shared<Completion>(std::move(c));
      stream(res, [this, shared, id](const Send& send) {
        const Completion& c = *shared;
        if (c.echo) send(chunk(id, tok_.decode(c.prompts[0])));
        const bl::cli::TextRun run = bl::cli::generate_text(
            model_, tok_, c.prompts[0], c.options, c.stop,
            [&](const std::string& piece) { return send(chunk(id, piece)); });
        json last = envelope(id);
        json ch = choice(0, run, false);
        ch["text"] = "";
        last["choices"] = json::array({ch});
        last["usage"] = usage(run.prompt.size(), run.ids.size() - run.prompt.size());
        send(last);
      });
      return;
    }
    json out = envelope(id);
    out["choices"] = json::array();
    size_t prompt_tokens = 0, completion_tokens = 0;
    try {
      std::lock_guard<std::mutex> lock(generation_);
      // Several prompts of one request are generated together; each choice is its prompt's alone.
      const std::vector<bl::cli::TextRun> runs = bl::cli::generate_texts(model_, tok_, c.prompts, c.options, c.stop);
      for (size_t i = 0; i < runs.size(); ++i) {
        const bl::cli::TextRun& run = runs[i];
        out["choices"].push_back(choice(i, run, c.echo));
        prompt_tokens += run.prompt.size();
        completion_tokens += run.ids.size() - run.prompt.size();
      }
    } catch (const bl::Error& e) {
      return error(res, 400, e.what());
    }
    out["usage"] = usage(prompt_tokens, completion_tokens);
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  }

  // with_tools: the reply's <tool_call> blocks become message.tool_calls (ids from the tokens' hash
  // and the call's index), content the rest (null when empty), finish_reason "tool_calls".
  json chat_choice(const bl::cli::TextRun& run, bool with_tools = false) const {
    const std::vector<int32_t> generated(run.ids.begin() + static_cast<std::ptrdiff_t>(run.prompt.size()), run.ids.end());
    const std::string sha = bl::cli::token_ids_sha256(run.ids);
    json message = {{"role", "assistant"}, {"content", run.text}};
    std::string finish = run.finish_reason;
    const bl::text::ChatReply reply = with_tools ? bl::text::parse_tool_calls(run.text) : bl::text::ChatReply{};
    if (!reply.tool_calls.empty()) {
      message["content"] = reply.has_content ? json(reply.content) : json(nullptr);
      message["tool_calls"] = json::array();
      for (size_t k = 0; k < reply.tool_calls.size(); ++k)
        message["tool_calls"].push_back({{"id", "call_" + sha.substr(0, 16) + "_" + std::to_string(k)},
                                         {"type", "function"},
                                         {"function", {{"name", reply.tool_calls[k].name}, {"arguments", reply.tool_calls[k].arguments}}}});
      finish = "tool_calls";
    }
    return {{"index", 0},
            {"message", message},
            {"finish_reason", finish},
            {"logprobs", nullptr},
            {"token_ids", generated},
            {"tokens_sha256", sha}};
  }

  json chat_chunk(const std::string& id, const json& delta) const {
    json j = envelope(id, "chat.completion.chunk");
    j["choices"] = json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}, {"logprobs", nullptr}}});
    return j;
  }

  void chat(const httplib::Request& req, httplib::Response& res) {
    if (!chat_) return error(res, 501, "chat completions need a chat template: " + chat_error_);
    Completion c;
    if (!parse_request(req.body, [this](const std::string& b) { return parse_chat(b); }, c, res)) return;
    const std::string id = "chatcmpl-" + std::to_string(++served_);
    if (c.stream) {
      auto shared = std::make_shared<Completion>(std::move(c));
      stream(res, [this, shared, id](const Send& send) {
        const Completion& c = *shared;
        send(chat_chunk(id, {{"role", "assistant"}, {"content", ""}}));
        const bl::cli::TextRun run = bl::cli::generate_text(
            model_, tok_, c.prompts[0], c.options, c.stop,
            [&](const std::string& piece) { return send(chat_chunk(id, {{"content", piece}})); });
        json last = chat_chunk(id, json::object());
        json& ch = last["choices"][0];
        const json whole = chat_choice(run);
        for (const char* key : {"finish_reason", "token_ids", "tokens_sha256"}) ch[key] = whole[key];
        last["usage"] = usage(run.prompt.size(), run.ids.size() - run.prompt.size());
        send(last);
      });
      return;
    }
    json out = envelope(id, "chat.completion");
    try {
      std::lock_guard<std::mutex> lock(generation_);
      const bl::cli::TextRun run = bl::cli::generate_text(model_, tok_, c.prompts[0], c.options, c.stop);
      out["choices"] = json::array({chat_choice(run, c.tool_calls)});
      out["usage"] = usage(run.prompt.size(), run.ids.size() - run.prompt.size());
    } catch (const bl::Error& e) {
      return error(res, 400, e.what());
    }
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  }

  json chunk(const std::string& id, const std::string& text) const {
    json j = envelope(id);
    j["choices"] = json::array({{{"index", 0}, {"text", text}, {"finish_reason", nullptr}, {"logprobs", nullptr}}});
    return j;
  }

  static json usage(size_t prompt_tokens, size_t completion_tokens) {
    return {{"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"total_tokens", prompt_tokens + completion_tokens}};
  }

  ServeArgs args_;
  sigset_t stop_signals_;
  bl::models::CausalLM model_;
  bl::models::GenerateOptions defaults_;
  bl::text::Tokenizer tok_;
  std::string id_;
  std::optional<bl::text::ChatTemplate> chat_;  // the model folder's, when it has one
  std::string chat_error_;                      // else why not
  std::mutex generation_;
  std::atomic<int64_t> served_{0};
};

void run_serve(const ServeArgs& a) {
  BL_CHECK(a.port >= 0 && a.port <= 65535, "serve: --port ", a.port, " is not a port (0 to 65535; 0 picks a free one)");
  BL_CHECK(a.max_tokens_limit >= 1, "serve: --max-tokens-limit must be at least 1");
  // Block SIGINT and SIGTERM before any thread starts (the library's pool while the model loads,
  // the server's), so that only the server's waiting thread takes them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  Server server(a, stop_signals);
  server.run();
}

#else

void run_serve(const ServeArgs&) {
  throw bl::Error("serve: this build has no HTTP server (cpp-httplib was not found: install libcpp-httplib-dev and rebuild)");
}

#endif

void setup(CLI::App& root) {
  auto sa = std::make_shared<ServeArgs>();
  auto* s = root.add_subcommand("serve", "Serve a Hugging Face decoder model over HTTP (OpenAI-compatible /v1/completions, /v1/chat/completions)");
  s->add_option("--model", sa->model, "Folder with config.json and model.safetensors")->required();
  s->add_option("--host", sa->host, "Address to listen on (default 127.0.0.1)");
  s->add_option("--port", sa->port, "Port (default 8080; 0 picks a free port, printed at start)");
  s->add_option("--device", sa->device, "cpu (default), cuda or cuda:N");
  s->add_option("--tokenizer", sa->tokenizer, "tokenizer.json (default DIR/tokenizer.json, then DIR/../tokenizer.json)");
  s->add_option("--max-tokens-limit", sa->max_tokens_limit, "Largest max_tokens a request may ask for (default 4096)");
  s->callback([sa] { run_serve(*sa); });
}

BL_REGISTER_COMMAND(setup);

}  // namespace
