// generate.cpp: greedy and sampled generation with a KV cache (bitlearn/models.h).
//
// Sampling is done on the host from the logits row, whose bits are the same on every device; the
// uniform for sequence position p is element 0 of Philox stream p under the seed, so a sampled
// continuation is reproducible anywhere. Every floating-point step uses the contract's arithmetic
// in a fixed order (ascending token id, after the top-k / top-p cut).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "bitlearn/io.h"
#include "bitlearn/models.h"
#include "bitlearn/ops.h"
#include "contract/math.h"
#include "contract/rng.h"
#include "core/error.h"

namespace bl::models {

int32_t pick_token(const std::vector<float>& logits, int64_t position, const GenerateOptions& o) {
  const int64_t V = static_cast<int64_t>(logits.size());
  BL_CHECK(V >= 1, "generate: empty logits row");
  BL_CHECK(o.temperature >= 0.0f, "generate: temperature ", o.temperature, " must be >= 0");
  BL_CHECK(o.top_p > 0.0f && o.top_p <= 1.0f, "generate: top_p ", o.top_p, " must lie in (0, 1]");
  BL_CHECK(o.top_k >= 0, "generate: top_k ", o.top_k, " must be >= 0");
  BL_CHECK(o.min_p >= 0.0f && o.min_p <= 1.0f, "generate: min_p ", o.min_p, " must lie in [0, 1]");
  // Greedy: the lowest index among the largest (as argmax).
  int64_t best = 0;
  for (int64_t i = 1; i < V; ++i)
    if (logits[i] > logits[best]) best = i;
  if (o.temperature == 0.0f) return static_cast<int32_t>(best);

  // Candidates in descending logit order, ties by ascending id (a stable, total order).
  std::vector<int64_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  const int64_t k = o.top_k > 0 ? std::min(o.top_k, V) : V;
  order.resize(static_cast<size_t>(k));
  // Softmax of logits / T over the candidates, sum in candidate order.
  const float m = div(logits[order[0]], o.temperature);
  std::vector<float> e(static_cast<size_t>(k));
  float total = 0.0f;
  for (int64_t i = 0; i < k; ++i) {
    e[i] = exp(sub(div(logits[order[i]], o.temperature), m));
    total = add(total, e[i]);
  }
  // Top-p: the shortest prefix whose probability reaches top_p.
  int64_t keep = k;
  if (o.top_p < 1.0f) {
    float acc = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      acc = add(acc, div(e[i], total));
      if (acc >= o.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  // Min-p (after top-p, as Hugging Face orders them): a candidate whose weight is below min_p times
  // the largest (e[0] = 1) is cut; the cut is relative to the largest, so a prefix again.
  if (o.min_p > 0.0f) {
    int64_t kept = 1;
    while (kept < keep && e[kept] >= o.min_p) ++kept;
    keep = kept;
  }
  if (keep < k) {
    total = 0.0f;
    for (int64_t i = 0; i < keep; ++i) total = add(total, e[i]);
  }
  // Inverse CDF with u in [0, 1): first candidate whose running mass exceeds u * total.
  const float u = uniform_co(random_u32_element(o.seed, static_cast<uint64_t>(position), 0));
  const float target = mul(u, total);
  float acc = 0.0f;
  for (int64_t i = 0; i < keep; ++i) {
    acc = add(acc, e[i]);
    if (acc > target) return static_cast<int32_t>(order[i]);
  }
  return static_cast<int32_t>(order[keep - 1]);
}

namespace {

// Checks a request: a non-empty prompt, max_new_tokens >= 0, the total within the model's positions.
void check_request(const CausalLM& model, const std::vector<int32_t>& prompt, const GenerateOptions& o) {
  BL_CHECK(!prompt.empty(), "generate: the prompt is empty");
  BL_CHECK(o.max_new_tokens >= 0, "generate: max_new_tokens ", o.max_new_tokens, " must be >= 0");
  // Compared as a difference: prompt + max_new_tokens could overflow int64 for a huge request.
  const int64_t prompt_len = static_cast<int64_t>(prompt.size());
  BL_CHECK(prompt_len <= model.config().max_positions &&
               o.max_new_tokens <= model.config().max_positions - prompt_len,
           "generate: prompt (", prompt.size(), ") + max_new_tokens (", o.max_new_tokens,
           ") exceeds max_position_embeddings ", model.config().max_positions);
  BL_CHECK(o.max_new_tokens == 0 || (o.repetition_penalty > 0.0f && std::isfinite(o.repetition_penalty)),
           "generate: repetition_penalty ", o.repetition_penalty, " must be a positive number");
}

// One sequence being generated: its tokens, the repetition penalty's set of tokens seen, and the
// pick of its next token from its logits row.
struct Sequence {
  std::vector<int32_t> out;
  std::vector<char> seen;

  Sequence(const std::vector<int32_t>& prompt, const GenerateOptions& o, int64_t V) : out(prompt) {
    if (o.repetition_penalty == 1.0f) return;
    seen.assign(static_cast<size_t>(V), 0);
    for (int32_t t : prompt)
      if (t >= 0 && t < V) seen[static_cast<size_t>(t)] = 1;
  }
  // Picks from logits row `row` (the sequence's last position) and appends the token.
  int32_t pick(std::vector<float> row, const GenerateOptions& o) {
    const int64_t V = static_cast<int64_t>(row.size());
    if (!seen.empty()) {
      for (int64_t t = 0; t < V; ++t)
        if (seen[static_cast<size_t>(t)])
          row[t] = row[t] > 0.0f ? div(row[t], o.repetition_penalty) : mul(row[t], o.repetition_penalty);
    }
    const int32_t next = pick_token(row, static_cast<int64_t>(out.size()), o);
    out.push_back(next);
    if (!seen.empty()) seen[static_cast<size_t>(next)] = 1;
    return next;
  }
};

std::vector<int32_t> eos_ids_of(const CausalLM& model, const GenerateOptions& o) {
  std::vector<int32_t> eos = o.eos_ids;
  if (eos.empty() && model.config().eos_token_id) eos.push_back(static_cast<int32_t>(*model.config().eos_token_id));
  return eos;
}

// Row `pos` of sequence b of logits [B, T, V], on the host.
std::vector<float> logits_row(const Tensor& logits, int64_t b, int64_t pos) {
  std::vector<float> row = logits.slice(0, b, b + 1).slice(1, pos, pos + 1).to(Device::cpu()).to_vector<float>();
  BL_CHECK(static_cast<int64_t>(row.size()) == logits.dim(2), "generate: unexpected logits row size");
  return row;
}

}  // namespace

std::vector<int32_t> generate(const CausalLM& model, const std::vector<int32_t>& prompt,
                              const GenerateOptions& o) {
  check_request(model, prompt, o);
  if (o.max_new_tokens == 0) return prompt;
  const std::vector<int32_t> eos = eos_ids_of(model, o);
  KvCache cache = model.new_cache(1, static_cast<int64_t>(prompt.size()) + o.max_new_tokens);
  Tensor logits = model.forward({prompt}, &cache);  // [1, T, V]
  Sequence seq(prompt, o, model.config().vocab_size);
  for (int64_t step = 0; step < o.max_new_tokens; ++step) {
    const int32_t next = seq.pick(logits_row(logits, 0, logits.dim(1) - 1), o);
    if (o.on_token && !o.on_token(next)) break;
    if (o.stop_at_eos && std::find(eos.begin(), eos.end(), next) != eos.end()) break;
    if (step + 1 < o.max_new_tokens) logits = model.forward({{next}}, &cache);
  }
  return seq.out;
}

std::vector<std::vector<int32_t>> generate_batch(const CausalLM& model, const std::vector<std::vector<int32_t>>& prompts,
                                                 const GenerateOptions& o,
                                                 const std::function<bool(size_t, int32_t)>& on_token) {
  BL_CHECK(!prompts.empty(), "generate: no prompts");
  for (const auto& p : prompts) check_request(model, p, o);
  const size_t B = prompts.size();
  std::vector<std::vector<int32_t>> out(B);
  if (model.config().is_ssm() || B == 1) {  // one after the other (a state-space cache has no rows to skip)
    for (size_t i = 0; i < B; ++i) {
      GenerateOptions oi = o;
      oi.on_token = on_token ? std::function<bool(int32_t)>([&, i](int32_t t) { return on_token(i, t); })
                             : std::function<bool(int32_t)>();
      out[i] = generate(model, prompts[i], oi);
    }
    return out;
  }
  if (o.max_new_tokens == 0) return prompts;
  const std::vector<int32_t> eos = eos_ids_of(model, o);
  size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  KvCache cache = model.new_cache(static_cast<int64_t>(B), static_cast<int64_t>(longest) + o.max_new_tokens);
  Tensor logits = model.forward(prompts, &cache);  // [B, Tmax, V], right-padded
  std::vector<Sequence> seqs;
  std::vector<int64_t> last(B);
  for (size_t i = 0; i < B; ++i) {
    seqs.emplace_back(prompts[i], o, model.config().vocab_size);
    last[i] = static_cast<int64_t>(prompts[i].size()) - 1;
  }
  std::vector<char> running(B, 1);
  for (int64_t step = 0; step < o.max_new_tokens; ++step) {
    std::vector<std::vector<int32_t>> next_in(B);
    bool any = false;
    for (size_t i = 0; i < B; ++i) {
      if (!running[i]) continue;
      const int32_t next = seqs[i].pick(logits_row(logits, static_cast<int64_t>(i), last[i]), o);
      bool go_on = !on_token || on_token(i, next);
      if (go_on && o.stop_at_eos && std::find(eos.begin(), eos.end(), next) != eos.end()) go_on = false;
      if (!go_on || step + 1 == o.max_new_tokens) {
        running[i] = 0;
        continue;
      }
      next_in[i] = {next};
      last[i] = 0;
      any = true;
    }
    if (!any) break;
    logits = model.forward(next_in, &cache);  // [B, 1, V]: the finished sequences' rows are +0
  }
  for (size_t i = 0; i < B; ++i) out[i] = std::move(seqs[i].out);
  return out;
}

GenerateOptions generation_config(const std::string& model_dir) {
  GenerateOptions o;
  const std::string path = model_dir + "/generation_config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return o;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file_text(path, "generation_config.json"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  BL_CHECK(j.is_object(), path, ": the top level is not a JSON object");
  auto number = [&](const char* key, double lo, double hi) -> std::optional<double> {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    BL_CHECK(j[key].is_number(), path, ": ", key, " is not a number");
    const double v = j[key].get<double>();
    BL_CHECK(v >= lo && v <= hi, path, ": ", key, " = ", v, " is out of range [", lo, ", ", hi, "]");
    return v;
  };
  const bool sample = j.contains("do_sample") && j["do_sample"].is_boolean() && j["do_sample"].get<bool>();
  if (auto t = number("temperature", 0, 1e6); t && sample) o.temperature = static_cast<float>(*t);
  if (sample && o.temperature == 0.0f && !j.contains("temperature")) o.temperature = 1.0f;  // the HF default
  if (auto v = number("top_k", 0, 1e9); v && sample) o.top_k = static_cast<int64_t>(*v);
  if (auto v = number("top_p", 1e-9, 1); v && sample) o.top_p = static_cast<float>(*v);
  if (auto v = number("min_p", 0, 1); v && sample) o.min_p = static_cast<float>(*v);
  if (auto v = number("repetition_penalty", 1e-9, 1e9)) o.repetition_penalty = static_cast<float>(*v);
  if (auto v = number("max_new_tokens", 0, 1e9)) o.max_new_tokens = static_cast<int64_t>(*v);
  if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
    const nlohmann::json& e = j["eos_token_id"];
    auto add_id = [&](const nlohmann::json& v) {
      BL_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= 0x7FFFFFFF, path,
               ": eos_token_id holds ", v.dump(), ", not a token id");
      o.eos_ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
    };
    if (e.is_array()) {
      for (const auto& v : e) add_id(v);
    } else {
      add_id(e);
    }
  }
  return o;
}

}  // namespace bl::models
