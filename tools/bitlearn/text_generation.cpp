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


// The stop strings and incremental text of one run: token(t, go_on) is called with each generated
// token and says whether generation goes on; finish() completes run.text and run.finish_reason.
class TextWatch {
 public:
  TextWatch(const text::Tokenizer& tok, const std::vector<std::string>& stop, TextRun& run,
            const std::function<bool(const std::string&)>& on_text)
      : tok_(tok), stop_(stop), run_(run), on_text_(on_text), seq_(run.prompt) {}

  // go_on: whether the caller's own callback lets generation go on.
  bool token(int32_t t, bool go_on = true) {
    seq_.push_back(t);
    if (!on_text_ && stop_.empty()) return go_on;
    const std::string all = tok_.decode(seq_);
    std::string& text = run_.text;
    text = all.compare(0, run_.prompt_text.size(), run_.prompt_text) == 0
               ? all.substr(run_.prompt_text.size())
               : tok_.decode({seq_.begin() + static_cast<std::ptrdiff_t>(run_.prompt.size()), seq_.end()});
    size_t cut = std::string::npos;
    for (const std::string& s : stop_) cut = std::min(cut, text.find(s));
    if (cut != std::string::npos) {
      text.resize(cut);
      run_.stopped_by_string = true;
      go_on = false;
    }
    if (on_text_) {
      const size_t hold = go_on ? std::max(held_back(text, stop_), incomplete_utf8(text)) : 0;
      if (text.size() > shown_ + hold) {
        if (!on_text_(text.substr(shown_, text.size() - hold - shown_))) go_on = false;
        shown_ = text.size() - hold;
      }
    }
    return go_on;
  }

  void finish(const models::CausalLM& model, const models::GenerateOptions& o) {
    if (!on_text_ && stop_.empty()) {
      run_.text = tok_.decode({run_.ids.begin() + static_cast<std::ptrdiff_t>(run_.prompt.size()), run_.ids.end()});
    }
    if (on_text_ && shown_ < run_.text.size()) on_text_(run_.text.substr(shown_));
    run_.finish_reason = run_.stopped_by_string ? "stop" : finish_reason(model, o, run_.prompt.size(), run_.ids);
  }

 private:
  const text::Tokenizer& tok_;
  const std::vector<std::string>& stop_;
  TextRun& run_;
  const std::function<bool(const std::string&)>& on_text_;
  std::vector<int32_t> seq_;
  size_t shown_ = 0;
};

TextRun start_run(const text::Tokenizer& tok, const std::vector<int32_t>& prompt,
                  const std::vector<std::string>& stop) {
  for (const std::string& s : stop) BL_CHECK(!s.empty(), "generate: a stop string must not be empty");
  TextRun run;
  run.prompt = prompt;
  run.prompt_text = tok.decode(run.prompt);
  return run;
}

}  // namespace

TextRun generate_text(const models::CausalLM& model, const text::Tokenizer& tok, const std::vector<int32_t>& prompt,
                      models::GenerateOptions o, const std::vector<std::string>& stop,
                      const std::function<bool(const std::string&)>& on_text) {
  TextRun run = start_run(tok, prompt, stop);
  TextWatch watch(tok, stop, run, on_text);
  const std::function<bool(int32_t)> user = o.on_token;
  o.on_token = [&](int32_t t) {
    return watch.token(t, user ? user(t) : true);
  };
  run.ids = models::generate(model, run.prompt, o);
  watch.finish(model, o);
  return run;
}

std::vector<TextRun> generate_texts(const models::CausalLM& model, const text::Tokenizer& tok,
                                    const std::vector<std::vector<int32_t>>& prompts, const models::GenerateOptions& o,
                                    const std::vector<std::string>& stop,
                                    const std::function<void(size_t, int32_t)>& on_token) {
  std::vector<TextRun> runs;
  for (const auto& p : prompts) runs.push_back(start_run(tok, p, stop));
  const std::function<bool(const std::string&)> no_text;
  std::vector<TextWatch> watches;
  watches.reserve(runs.size());
  for (TextRun& r : runs) watches.emplace_back(tok, stop, r, no_text);
  const std::vector<std::vector<int32_t>> ids =
      models::generate_batch(model, prompts, o, [&](size_t i, int32_t t) {
        if (on_token) on_token(i, t);
        return watches[i].token(t);
      });
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].ids = ids[i];
    watches[i].finish(model, o);
  }
  return runs;
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
