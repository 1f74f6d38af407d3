// `bitlearn generate` and `bitlearn logits`: run a Hugging Face decoder model (config.json +
// model.safetensors) on the CPU or CUDA with bitwise reproducible results.
//
//   bitlearn generate --model DIR (--prompt TEXT | --ids 1,2,3) [--max-new-tokens N]
//                     [--temperature T --seed S --top-k K --top-p P] [--device cpu|cuda]
//                     [--tokenizer FILE]
//   bitlearn logits --model DIR --ids 1,2,3 --out FILE.safetensors [--device cpu|cuda]
//
// The tokenizer defaults to DIR/tokenizer.json, then DIR/../tokenizer.json.
#include <cstdio>
#include <filesystem>
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
  int64_t max_new_tokens = 16;
  float temperature = 0.0f, top_p = 1.0f;
  int64_t top_k = 0;
  uint64_t seed = 0;
};

void run_generate(const GenerateArgs& a) {
  using namespace bl::models;
  BL_CHECK(a.prompt.empty() != a.ids.empty(), "generate: give exactly one of --prompt and --ids");
  const CausalLM model = CausalLM::load(a.model, bl::Device::parse(a.device));
  GenerateOptions o;
  o.max_new_tokens = a.max_new_tokens;
  o.temperature = a.temperature;
  o.top_k = a.top_k;
  o.top_p = a.top_p;
  o.seed = a.seed;
  if (!a.ids.empty()) {
    const std::vector<int32_t> out = generate(model, parse_ids(a.ids), o);
    for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? "," : "", out[i]);
    std::printf("\n");
    return;
  }
  const std::string path = find_tokenizer(a.model, a.tokenizer);
  BL_CHECK(!path.empty(), "generate: no tokenizer.json in ", a.model, " or its parent; pass --tokenizer FILE");
  const bl::text::Tokenizer tok = bl::text::Tokenizer::from_file(path);
  const std::vector<int32_t> prompt = tok.encode(a.prompt);
  const std::vector<int32_t> out = generate(model, prompt, o);
  std::printf("%s\n", tok.decode(out).c_str());
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
  g->add_option("--max-new-tokens", ga->max_new_tokens, "Tokens to generate (default 16)");
  g->add_option("--temperature", ga->temperature, "0 = greedy (default); > 0 samples");
  g->add_option("--seed", ga->seed, "Sampling seed (default 0)");
  g->add_option("--top-k", ga->top_k, "Sample among the k most likely tokens (0 = all)");
  g->add_option("--top-p", ga->top_p, "Nucleus sampling mass (1 = off)");
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
