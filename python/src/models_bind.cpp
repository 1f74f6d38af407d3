// bitlearn.models: causal language models and tokenizers (bitlearn/models.h, bitlearn/tokenizer.h).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bitlearn/models.h"
#include "bitlearn/tokenizer.h"
#include "convert.h"
#include "core/error.h"

namespace bl::py {

namespace {

using models::CausalLM;
using models::GenerateOptions;
using models::KvCache;
using text::Tokenizer;

// bl::models::generate one token at a time, so that Python can stream the tokens: the same prefill,
// KV-cache decode steps and pick_token calls in the same order, so the same ids.
class Generation {
 public:
  Generation(std::shared_ptr<const CausalLM> model, std::vector<int32_t> prompt, GenerateOptions o)
      : model_(std::move(model)), out_(std::move(prompt)), o_(o) {
    BL_CHECK(!out_.empty(), "generate: the prompt is empty");
    BL_CHECK(o_.max_new_tokens >= 0, "generate: max_new_tokens ", o_.max_new_tokens, " must be >= 0");
    const int64_t prompt_len = static_cast<int64_t>(out_.size());
    BL_CHECK(prompt_len <= model_->config().max_positions &&
                 o_.max_new_tokens <= model_->config().max_positions - prompt_len,
             "generate: prompt (", out_.size(), ") + max_new_tokens (", o_.max_new_tokens,
             ") exceeds max_position_embeddings ", model_->config().max_positions);
  }

  // The next token, or none when max_new_tokens are out or the end-of-sequence token came.
  std::optional<int32_t> next() {
    if (done_ || step_ >= o_.max_new_tokens) return std::nullopt;
    if (step_ == 0) {
      cache_ = std::make_unique<KvCache>(
          model_->new_cache(1, static_cast<int64_t>(out_.size()) + o_.max_new_tokens));
      logits_ = model_->forward({out_}, cache_.get());
    } else {
      logits_ = model_->forward({{out_.back()}}, cache_.get());
    }
    const int64_t last = logits_.dim(1) - 1;
    const std::vector<float> row = logits_.slice(1, last, last + 1).to(Device::cpu()).to_vector<float>();
    const int32_t token = models::pick_token(row, static_cast<int64_t>(out_.size()), o_);
    out_.push_back(token);
    ++step_;
    const auto& eos = model_->config().eos_token_id;
    if (o_.stop_at_eos && eos && token == *eos) done_ = true;
    return token;
  }

 private:
  std::shared_ptr<const CausalLM> model_;
  std::vector<int32_t> out_;
  GenerateOptions o_;
  std::unique_ptr<KvCache> cache_;
  Tensor logits_;
  int64_t step_ = 0;
  bool done_ = false;
};

GenerateOptions options(int64_t max_new_tokens, float temperature, int64_t top_k, float top_p,
                        uint64_t seed, bool stop_at_eos) {
  GenerateOptions o;
  o.max_new_tokens = max_new_tokens;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  o.seed = seed;
  o.stop_at_eos = stop_at_eos;
  return o;
}

}  // namespace

void bind_models(nb::module_& m) {
  using Model = std::shared_ptr<CausalLM>;
  nb::class_<CausalLM>(m, "CausalLM", "A decoder-only language model (bitlearn/models.h).")
      .def_static("load",
                  [](const std::string& dir, const std::string& device) {
                    nb::gil_scoped_release r;
                    return std::make_shared<CausalLM>(CausalLM::load(dir, Device::parse(device)));
                  },
                  nb::arg("dir"), nb::arg("device") = "cpu")
      .def_prop_ro("device", [](const CausalLM& lm) { return lm.device().str(); })
      .def_prop_ro("model_type", [](const CausalLM& lm) { return lm.config().model_type; })
      .def_prop_ro("vocab_size", [](const CausalLM& lm) { return lm.config().vocab_size; })
      .def_prop_ro("max_positions", [](const CausalLM& lm) { return lm.config().max_positions; })
      .def_prop_ro("eos_token_id", [](const CausalLM& lm) { return lm.config().eos_token_id; })
      .def("logits",
           [](const CausalLM& lm, const std::vector<std::vector<int32_t>>& seqs) {
             nb::gil_scoped_release r;
             return lm.forward(seqs);
           },
           nb::arg("sequences"), "Logits [batch, max_len, vocab] of each sequence (right padded).")
      .def("generate",
           [](const CausalLM& lm, const std::vector<int32_t>& prompt, int64_t n, float t, int64_t k, float p,
              uint64_t seed, bool eos) {
             nb::gil_scoped_release r;
             return models::generate(lm, prompt, options(n, t, k, p, seed, eos));
           },
           nb::arg("prompt"), nb::arg("max_new_tokens") = 16, nb::arg("temperature") = 0.0f,
           nb::arg("top_k") = 0, nb::arg("top_p") = 1.0f, nb::arg("seed") = 0, nb::arg("stop_at_eos") = true);

  nb::class_<Generation>(m, "Generation", "Token-by-token generate (the same ids as generate).")
      .def("__init__",
           [](Generation* self, Model lm, const std::vector<int32_t>& prompt, int64_t n, float t, int64_t k,
              float p, uint64_t seed, bool eos) {
             new (self) Generation(std::move(lm), prompt, options(n, t, k, p, seed, eos));
           },
           nb::arg("model"), nb::arg("prompt"), nb::arg("max_new_tokens") = 16, nb::arg("temperature") = 0.0f,
           nb::arg("top_k") = 0, nb::arg("top_p") = 1.0f, nb::arg("seed") = 0, nb::arg("stop_at_eos") = true)
      .def("next", [](Generation& g) { nb::gil_scoped_release r; return g.next(); });

  nb::class_<Tokenizer>(m, "Tokenizer", "A Hugging Face tokenizer.json tokenizer (bitlearn/tokenizer.h).")
      .def_static("from_file", &Tokenizer::from_file, nb::arg("path"))
      .def_static("from_json_text", &Tokenizer::from_json_text, nb::arg("text"), nb::arg("source") = "tokenizer")
      .def("encode", &Tokenizer::encode, nb::arg("text"), nb::arg("add_special_tokens") = true)
      .def("decode", &Tokenizer::decode, nb::arg("ids"), nb::arg("skip_special_tokens") = false)
      .def_prop_ro("vocab_size", &Tokenizer::vocab_size)
      .def("token_to_id", &Tokenizer::token_to_id, nb::arg("token"))
      .def("id_to_token", &Tokenizer::id_to_token, nb::arg("id"))
      .def("to_json_text", &Tokenizer::to_json_text)
      .def("save", &Tokenizer::save, nb::arg("path"));
}

}  // namespace bl::py
