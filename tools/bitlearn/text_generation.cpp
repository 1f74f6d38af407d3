// text_generation.cpp: generate_text (text_generation.h).
#include "text_generation.h"

#include <algorithm>
#include <filesystem>

#include "core/digest.h"
#include "core/error.h"

namespace bl::cli {
namespace {

// How many bytes at the end of s may still grow into a stop string (its longest proper prefix
// that s ends with), so that streaming never shows what a stop string then takes back.
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

// Bytes at the end of s that form an incomplete UTF-8 sequence (shown once it completes).
size_t incomplete_utf8(const std::string& s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const unsigned char c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

TextRun generate_text(const models::CausalLM& model, const text::Tokenizer& tok, const std::vector<int32_t>& prompt,
                      models::GenerateOptions o, const std::vector<std::string>& stop,
                      const std::function<bool(const std::string&)>& on_text) {
  for (const std::string& s : stop) BL_CHECK(!s.empty(), "generate: a stop string must not be empty");
  TextRun run;
  run.prompt = prompt;
  run.prompt_text = tok.decode(run.prompt);
  std::vector<int32_t> seq = run.prompt;
  size_t shown = 0;
  const std::function<bool(int32_t)> user = o.on_token;
  o.on_token = [&](int32_t t) {
    bool go_on = user ? user(t) : true;
    seq.push_back(t);
    if (!on_text && stop.empty()) return go_on;
    const std::string all = tok.decode(seq);
    std::string& text = run.text;
    text = all.compare(0, run.prompt_text.size(), run.prompt_text) == 0
               ? all.substr(run.prompt_text.size())
               : tok.decode({seq.begin() + static_cast<std::ptrdiff_t>(run.prompt.size()), seq.end()});
    size_t cut = std::string::npos;
    for (const std::string& s : stop) cut = std::min(cut, text.find(s));
    if (cut != std::string::npos) {
      text.resize(cut);
      run.stopped_by_string = true;
      go_on = false;
    }
    if (on_text) {
      const size_t hold = go_on ? std::max(held_back(text, stop), incomplete_utf8(text)) : 0;
      if (text.size() > shown + hold) {
        if (!on_text(text.substr(shown, text.size() - hold - shown))) go_on = false;
        shown = text.size() - hold;
      }
    }
    return go_on;
  };
  run.ids = models::generate(model, run.prompt, o);
  if (!on_text && stop.empty()) {
    run.text = tok.decode({run.ids.begin() + static_cast<std::ptrdiff_t>(run.prompt.size()), run.ids.end()});
  }
  if (on_text && shown < run.text.size()) on_text(run.text.substr(shown));
  run.finish_reason = run.stopped_by_string ? "stop" : finish_reason(model, o, run.prompt.size(), run.ids);
  return run;
}

std::string finish_reason(const models::CausalLM& model, const models::GenerateOptions& o, size_t prompt_tokens,
                          const std::vector<int32_t>& ids) {
  // The end-of-sequence set generate used: the options' list, else the config's token.
  std::vector<int32_t> eos = o.eos_ids;
  if (eos.empty() && model.config().eos_token_id) eos.push_back(static_cast<int32_t>(*model.config().eos_token_id));
  const bool ended_on_eos = ids.size() > prompt_tokens && o.stop_at_eos &&
                            std::find(eos.begin(), eos.end(), ids.back()) != eos.end();
  const int64_t generated = static_cast<int64_t>(ids.size() - prompt_tokens);
  return ended_on_eos || generated < o.max_new_tokens ? "stop" : "length";
}

std::string find_tokenizer(const std::string& model_dir, const std::string& given) {
  if (!given.empty()) return given;
  for (const std::string& p : {model_dir + "/tokenizer.json", model_dir + "/../tokenizer.json"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

std::string token_ids_sha256(const std::vector<int32_t>& ids) {
  std::string bytes;
  bytes.reserve(ids.size() * 4);
  for (int32_t id : ids) {
    const uint32_t u = static_cast<uint32_t>(id);
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((u >> (8 * b)) & 0xFF));
  }
  return sha256_hex(bytes.data(), bytes.size());
}

}  // namespace bl::cli
