// `bitlearn generate` and `bitlearn logits`: run a Hugging Face decoder model (config.json +
// model.safetensors) on the CPU or CUDA with bitwise reproducible results.
//
//   bitlearn generate --model DIR (--prompt TEXT | --ids 1,2,3) [--max-new-tokens N]
//                     [--temperature T --seed S --top-k K --top-p P --min-p P]
//                     [--repetition-penalty R] [--stop TEXT ...] [--stream] [--timings]
//                     [--ignore-eos] [--device cpu|cuda] [--tokenizer FILE]
//
// Defaults come from DIR/generation_config.json when it is there (sampling settings, eos ids),
// and the options override them.
//   bitlearn logits --model DIR --ids 1,2,3 --out FILE.safetensors [--device cpu|cuda]
//
// The tokenizer defaults to DIR/tokenizer.json, then DIR/../tokenizer.json.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bitlearn/models.h"
#include "bitlearn/safetensors.h"
#include "bitlearn/tokenizer.h"
#include "command.h"
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

std::string find_tokenizer(const std::string& model_dir, const std::string& given) {
  namespace fs = std::filesystem;
  if (!given.empty()) return given;
  for (const std::string& p : {model_dir + "/tokenizer.json", model_dir + "/../tokenizer.json"})
    if (fs::exists(p)) return p;
  return "";
}

struct GenerateArgs {
  std::string model, prompt, ids, device = "cpu", tokenizer;
  // Unset: the model folder's generation_config.json, else the library's defaults.
  std::optional<int64_t> max_new_tokens, top_k;
  std::optional<float> temperature, top_p, min_p, repetition_penalty;
  uint64_t seed = 0;
  std::vector<std::string> stop;
  bool stream = false, timings = false, ignore_eos = false;
};

// How many bytes at the end of s may still grow into a stop string (its longest proper prefix
// that s ends with), so that streaming never prints what a stop string then takes back.
size_t held_back(const std::string& s, const std::vector<std::string>& stops) {
  size_t hold = 0;
  for (const std::string& stop : stops)
    for (size_t len = std::min(stop.size() - 1, s.size()); len > hold; --len)
      if (s.compare(s.size() - len, len, stop, 0, len) == 0) {
        hold = len;
        break;
      }
  return hold;
}

// Bytes at the end of s that form an incomplete UTF-8 sequence (printed once it completes).
size_t incomplete_utf8(const std::string& s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const unsigned char c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

void run_generate(const GenerateArgs& a) {
  using namespace bl::models;
  using Clock = std::chrono::steady_clock;
  BL_CHECK(a.prompt.empty() != a.ids.empty(), "generate: give exactly one of --prompt and --ids");
  BL_CHECK(a.stop.empty() || !a.prompt.empty(), "generate: --stop needs --prompt (stop strings are text)");
  for (const std::string& s : a.stop) BL_CHECK(!s.empty(), "generate: --stop needs a non-empty string");
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
  auto count = [&] {
    if (generated++ == 0) first = Clock::now();
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
    if (!a.stream)
      for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? "," : "", out[i]);
    std::printf("\n");
    report(prompt.size());
    return;
  }
  const std::string path = find_tokenizer(a.model, a.tokenizer);
  BL_CHECK(!path.empty(), "generate: no tokenizer.json in ", a.model, " or its parent; pass --tokenizer FILE");
  const bl::text::Tokenizer tok = bl::text::Tokenizer::from_file(path);
  const std::vector<int32_t> prompt = tok.encode(a.prompt);
  const std::string prompt_text = tok.decode(prompt);
  std::vector<int32_t> seq = prompt;
  std::string text;  // the generated text so far (after the prompt's text)
  size_t printed = 0;
  bool stopped = false;
  if (a.stream) {
    std::fputs(prompt_text.c_str(), stdout);
    std::fflush(stdout);
  }
  o.on_token = [&](int32_t t) {
    count();
    seq.push_back(t);
    if (!a.stream && a.stop.empty()) return true;
    const std::string all = tok.decode(seq);
    text = all.compare(0, prompt_text.size(), prompt_text) == 0 ? all.substr(prompt_text.size())
                                                                 : tok.decode({seq.begin() + prompt.size(), seq.end()});
    size_t cut = std::string::npos;
    for (const std::string& s : a.stop) cut = std::min(cut, text.find(s));
    if (cut != std::string::npos) {  // as llama.cpp: the text ends before the stop string
      text.resize(cut);
      stopped = true;
    }
    if (a.stream) {
      const size_t hold = stopped ? 0 : std::max(held_back(text, a.stop), incomplete_utf8(text));
      if (text.size() > printed + hold) {
        std::fwrite(text.data() + printed, 1, text.size() - hold - printed, stdout);
        std::fflush(stdout);
        printed = text.size() - hold;
      }
    }
    return !stopped;
  };
  const std::vector<int32_t> out = generate(model, prompt, o);
  if (a.stream) {
    std::fwrite(text.data() + printed, 1, text.size() - std::min(printed, text.size()), stdout);
    std::printf("\n");
  } else if (a.stop.empty()) {
    std::printf("%s\n", tok.decode(out).c_str());
  } else {
    std::printf("%s%s\n", prompt_text.c_str(), text.c_str());
  }
  report(prompt.size());
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
  g->add_option("--prompt", ga->prompt, "Prompt text (needs a tokenizer.json)");
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
