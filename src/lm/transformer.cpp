// transformer.cpp: the trainable GPT-2 / Llama-family decoder of bitlearn/lm.h.
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/nn/init.h"
#include "bitlearn/ops.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "lm/train_ops.h"
#include "models/model_parts.h"

namespace bl::lm {

using train_ops::Shards;

namespace {

// A preset's config.json, read by the same parser as a Hugging Face file.
ModelConfig llama_shape(int64_t layers, int64_t width, int64_t heads, int64_t kv_heads, int64_t mlp,
                        int64_t context, int64_t vocab, bool tied) {
  nlohmann::ordered_json j;
  j["model_type"] = "llama";
  j["vocab_size"] = vocab;
  j["hidden_size"] = width;
  j["intermediate_size"] = mlp;
  j["num_hidden_layers"] = layers;
  j["num_attention_heads"] = heads;
  j["num_key_value_heads"] = kv_heads;
  j["max_position_embeddings"] = context;
  j["rms_norm_eps"] = 1e-5;
  j["rope_theta"] = 10000.0;
  j["hidden_act"] = "silu";
  j["tie_word_embeddings"] = tied;
  return models::parse_config(j.dump(), "llama preset");
}

ModelConfig gpt2_shape(int64_t layers, int64_t width, int64_t heads, int64_t context, int64_t vocab) {
  nlohmann::ordered_json j;
  j["model_type"] = "gpt2";
  j["vocab_size"] = vocab;
  j["n_positions"] = context;
  j["n_embd"] = width;
  j["n_layer"] = layers;
  j["n_head"] = heads;
  j["activation_function"] = "gelu_new";
  j["layer_norm_epsilon"] = 1e-5;
  return models::parse_config(j.dump(), "gpt2 preset");
}

ag::Var activate(models::Activation a, const ag::Var& x) {
  switch (a) {
    case models::Activation::gelu_tanh: return train_ops::gelu_tanh(x);
    case models::Activation::gelu_erf: return ag::gelu(x);
    case models::Activation::silu: return ag::silu(x);
    case models::Activation::relu: return ag::relu(x);
  }
  return x;
}

const char* activation_name(models::Activation a, bool gpt2) {
  switch (a) {
    case models::Activation::gelu_tanh: return gpt2 ? "gelu_new" : "gelu_pytorch_tanh";
    case models::Activation::gelu_erf: return "gelu";
    case models::Activation::silu: return "silu";
    case models::Activation::relu: return "relu";
  }
  return "silu";
}

}  // namespace

ModelConfig preset(const std::string& name, int64_t vocab) {
  auto v = [&](int64_t d) { return vocab > 0 ? vocab : d; };
  if (name == "llama-tiny" || name == "llama") return llama_shape(4, 256, 8, 4, 688, 128, v(4096), false);
  if (name == "llama-162m") return llama_shape(12, 768, 12, 12, 2048, 2048, v(50257), false);
  if (name == "gpt2-tiny" || name == "gpt2") return gpt2_shape(4, 256, 8, 128, v(4096));
  if (name == "gpt2-124m") return gpt2_shape(12, 768, 12, 1024, v(50257));
  std::string names;
  for (const std::string& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw Error(detail::concat("lm: unknown model '", name, "' (known: gpt2, llama, ", names, ")"));
}

std::vector<std::string> preset_names() { return {"llama-tiny", "llama-162m", "gpt2-tiny", "gpt2-124m"}; }

void check_trainable(const ModelConfig& c) {
  const std::string& t = c.model_type;
  BL_CHECK(t == "gpt2" || t == "llama" || t == "mistral" || t == "qwen2", "lm: model_type '", t,
           "' cannot be trained (supported: gpt2, llama, mistral, qwen2)");
  BL_CHECK(t == "gpt2" || !c.fused_qkv, "lm: fused qkv projections (", t, ") cannot be trained");
  BL_CHECK(!c.fused_gate_up, "lm: a fused gate_up projection cannot be trained");
  BL_CHECK(!c.norm_weight_plus_one && !c.scale_embeddings, "lm: Gemma-style norms cannot be trained");
  BL_CHECK(c.num_layers >= 1 && c.hidden_size >= 2 && c.num_heads >= 1 && c.vocab_size >= 2 &&
               c.intermediate_size >= 1 && c.max_positions >= 2,
           "lm: num_layers, hidden_size, num_heads, vocab_size, intermediate_size must be >= 1 and the "
           "context >= 2");
  BL_CHECK(c.num_kv_heads >= 1 && c.num_heads % c.num_kv_heads == 0, "lm: num_attention_heads ",
           c.num_heads, " is not a multiple of num_key_value_heads ", c.num_kv_heads);
  BL_CHECK(c.head_dim >= 2 && c.head_dim % 2 == 0, "lm: head_dim ", c.head_dim, " must be even");
  BL_CHECK(t != "gpt2" || c.num_heads * c.head_dim == c.hidden_size, "lm: n_embd ", c.hidden_size,
           " is not a multiple of n_head ", c.num_heads);
}

struct Transformer::Block {
  ag::Var n1w, n1b, n2w, n2b;
  ag::Var q, k, v, qb, kb, vb, qkv, qkvb, o, ob;
  ag::Var gate, up, upb, down, downb;
};

Transformer::Transformer(const ModelConfig& c, uint64_t seed) : config_(c) {
  check_trainable(c);
  nn::InitStream init(seed);
  const float std_ = 0.02f;
  const float resid_std = static_cast<float>(0.02 / std::sqrt(2.0 * static_cast<double>(c.num_layers)));
  auto normal = [&](const std::string& name, const Shape& shape, float s) {
    return register_parameter(name, nn::init::normal(shape, 0.0f, s, init.seed, init.take()));
  };
  auto zeros = [&](const std::string& name, int64_t n) { return register_parameter(name, Tensor::zeros({n})); };
  auto ones = [&](const std::string& name, int64_t n) {
    return register_parameter(name, Tensor::full({n}, 1.0, DType::f32));
  };
  const int64_t C = c.hidden_size, V = c.vocab_size, H = c.num_heads, G = c.num_kv_heads, D = c.head_dim;
  const int64_t I = c.intermediate_size;
  if (c.model_type == "gpt2") {
    wte_ = normal("transformer.wte.weight", {V, C}, std_);
    wpe_ = normal("transformer.wpe.weight", {c.max_positions, C}, 0.01f);
    for (int64_t l = 0; l < c.num_layers; ++l) {
      const std::string p = "transformer.h." + std::to_string(l) + ".";
      auto b = std::make_shared<Block>();
      b->n1w = ones(p + "ln_1.weight", C);
      b->n1b = zeros(p + "ln_1.bias", C);
      b->qkv = normal(p + "attn.c_attn.weight", {C, 3 * C}, std_);
      b->qkvb = zeros(p + "attn.c_attn.bias", 3 * C);
      b->o = normal(p + "attn.c_proj.weight", {C, C}, resid_std);
      b->ob = zeros(p + "attn.c_proj.bias", C);
      b->n2w = ones(p + "ln_2.weight", C);
      b->n2b = zeros(p + "ln_2.bias", C);
      b->up = normal(p + "mlp.c_fc.weight", {C, I}, std_);
      b->upb = zeros(p + "mlp.c_fc.bias", I);
      b->down = normal(p + "mlp.c_proj.weight", {I, C}, resid_std);
      b->downb = zeros(p + "mlp.c_proj.bias", C);
      blocks_.push_back(b);
    }
    final_w_ = ones("transformer.ln_f.weight", C);
    final_b_ = zeros("transformer.ln_f.bias", C);
  } else {
    wte_ = normal("model.embed_tokens.weight", {V, C}, std_);
    for (int64_t l = 0; l < c.num_layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      auto b = std::make_shared<Block>();
      b->n1w = ones(p + "input_layernorm.weight", C);
      b->q = normal(p + "self_attn.q_proj.weight", {H * D, C}, std_);
      if (c.qkv_bias) b->qb = zeros(p + "self_attn.q_proj.bias", H * D);
      b->k = normal(p + "self_attn.k_proj.weight", {G * D, C}, std_);
      if (c.qkv_bias) b->kb = zeros(p + "self_attn.k_proj.bias", G * D);
      b->v = normal(p + "self_attn.v_proj.weight", {G * D, C}, std_);
      if (c.qkv_bias) b->vb = zeros(p + "self_attn.v_proj.bias", G * D);
      b->o = normal(p + "self_attn.o_proj.weight", {C, H * D}, resid_std);
      b->n2w = ones(p + "post_attention_layernorm.weight", C);
      b->gate = normal(p + "mlp.gate_proj.weight", {I, C}, std_);
      b->up = normal(p + "mlp.up_proj.weight", {I, C}, std_);
      b->down = normal(p + "mlp.down_proj.weight", {C, I}, resid_std);
      blocks_.push_back(b);
    }
    final_w_ = ones("model.norm.weight", C);
    models::parts::rope_tables(c, &rope_cos_, &rope_sin_);
  }
  if (!c.tie_word_embeddings) lm_head_ = normal("lm_head.weight", {V, C}, std_);
  else tied_head_ = ag::Var(wte_.value(), true);
}

std::unique_ptr<Transformer> Transformer::from_hf_dir(const std::string& dir) {
  const ModelConfig c = models::load_config(dir + "/config.json");
  check_trainable(c);
  auto m = std::make_unique<Transformer>(c, 0);
  const std::map<std::string, Tensor> tensors = models::parts::read_safetensors_dir(dir);
  for (auto& [name, var] : m->named_parameters()) {
    auto it = tensors.find(name);
    if (it == tensors.end() && name.rfind("transformer.", 0) == 0) it = tensors.find(name.substr(12));
    BL_CHECK(it != tensors.end(), dir, ": tensor '", name, "' is missing (config.json: model_type ",
             c.model_type, ", ", c.num_layers, " layers)");
    BL_CHECK(it->second.shape() == var.shape(), dir, ": tensor '", name, "' has shape ",
             shape_str(it->second.shape()), " but config.json needs ", shape_str(var.shape()));
    BL_CHECK(it->second.dtype() == DType::f32, dir, ": tensor '", name, "' has dtype ",
             dtype_name(it->second.dtype()), "; the trainer needs f32 weights");
    models::parts::check_finite(it->second, it->first, dir);
    var.set_value(it->second.contiguous().clone());
  }
  if (c.tie_word_embeddings) m->tied_head_.set_value(m->wte_.value());
  return m;
}

ag::Var Transformer::forward(const ag::Var&) {
  throw Error("lm::Transformer: use loss() (the model takes token ids and labels)");
}

const ag::Var& Transformer::head_weight() const { return config_.tie_word_embeddings ? tied_head_ : lm_head_; }

ag::Var Transformer::block_forward(const Block& b, const ag::Var& h, int64_t sequences, int64_t T,
                                   int64_t shards, const Tensor& cos_rows, const Tensor& sin_rows) const {
  const ModelConfig& c = config_;
  const Shards sh{shards, sequences / shards * T};
  const bool ln = c.norm == models::NormKind::layer_norm;
  const int64_t C = c.hidden_size, H = c.num_heads, G = c.num_kv_heads, D = c.head_dim;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  ag::Var x = train_ops::norm(h, b.n1w, b.n1b, ln, c.norm_eps, sh);
  ag::Var q, k, v, attn;
  if (c.model_type == "gpt2") {
    ag::Var qkv = train_ops::linear(x, b.qkv, b.qkvb, true, sh);
    q = ag::slice(qkv, 1, 0, C);
    k = ag::slice(qkv, 1, C, 2 * C);
    v = ag::slice(qkv, 1, 2 * C, 3 * C);
  } else {
    q = train_ops::linear(x, b.q, b.qb, false, sh);
    k = train_ops::linear(x, b.k, b.kb, false, sh);
    v = train_ops::linear(x, b.v, b.vb, false, sh);
  }
  if (c.rope) {
    q = train_ops::rope(q, cos_rows, sin_rows, D);
    k = train_ops::rope(k, cos_rows, sin_rows, D);
  }
  attn = train_ops::causal_attention(q, k, v, sequences, T, H, G, D, scale, c.sliding_window);
  const bool gpt2 = c.model_type == "gpt2";
  ag::Var h2 = ag::add(h, train_ops::linear(attn, b.o, b.ob, gpt2, sh));
  x = train_ops::norm(h2, b.n2w, b.n2b, ln, c.norm_eps, sh);
  ag::Var mlp;
  if (c.gated_mlp) {
    ag::Var a = train_ops::linear(x, b.gate, ag::Var(), false, sh);
    ag::Var u = train_ops::linear(x, b.up, ag::Var(), false, sh);
    // SwiGLU as one fused node; other gates as activation then product (the same bits either way).
    ag::Var gated = c.activation == models::Activation::silu ? train_ops::swiglu(a, u) : ag::mul(activate(c.activation, a), u);
    mlp = train_ops::linear(gated, b.down, ag::Var(), false, sh);
  } else {
    ag::Var u = activate(c.activation, train_ops::linear(x, b.up, b.upb, true, sh));
    mlp = train_ops::linear(u, b.down, b.downb, true, sh);
  }
  return ag::add(h2, mlp);
}

ag::Var Transformer::hidden(const Tensor& ids, int64_t shards, int64_t per_shard, int64_t T, bool recompute) {
  const ModelConfig& c = config_;
  BL_CHECK(T >= 1 && T <= c.max_positions, "lm: sequence length ", T, " must lie in [1, ", c.max_positions,
           "] (the model's context)");
  const int64_t sequences = shards * per_shard, N = sequences * T;
  BL_CHECK(ids.numel() == N, "lm: ", ids.numel(), " ids for ", sequences, " sequences of ", T, " tokens");
  const Device dev = wte_.device();
  const Shards sh{shards, per_shard * T};
  if (tied_head_.defined()) tied_head_.set_value(wte_.value());
  std::vector<int64_t> pos(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) pos[static_cast<size_t>(i)] = i % T;
  const Tensor pos_t = Tensor::from_vector(pos, {N}, dev);
  ag::Var h = train_ops::embedding(wte_, ids, sh);
  if (c.learned_positions) h = ag::add(h, train_ops::embedding(wpe_, pos_t, sh));
  Tensor cos_rows, sin_rows;
  if (c.rope) {
    if (rope_cos_.device() != dev) {
      rope_cos_ = rope_cos_.to(dev);
      rope_sin_ = rope_sin_.to(dev);
    }
    cos_rows = bl::embedding(rope_cos_, pos_t);
    sin_rows = bl::embedding(rope_sin_, pos_t);
  }
  for (const auto& b : blocks_) {
    const Block& blk = *b;
    auto fn = [this, &blk, sequences, T, shards, cos_rows, sin_rows](const ag::Var& x) {
      return block_forward(blk, x, sequences, T, shards, cos_rows, sin_rows);
    };
    h = recompute && ag::grad_enabled() ? train_ops::recompute(h, fn) : fn(h);
  }
  return train_ops::norm(h, final_w_, final_b_, c.norm == models::NormKind::layer_norm, c.norm_eps, sh);
}

Transformer::Losses Transformer::loss(const Tensor& ids, const Tensor& labels, int64_t shards, int64_t per_shard,
                                      int64_t T, float coef, bool recompute) {
  ag::Var h = hidden(ids, shards, per_shard, T, recompute);
  Losses out;
  // Without recomputation the loss keeps its logits for the backward (memory for one GEMM less).
  out.root = train_ops::cross_entropy(h, head_weight(), labels, Shards{shards, per_shard * T}, coef,
                                      &out.shard_losses, !recompute);
  return out;
}

std::vector<Tensor> Transformer::eval_loss(const Tensor& ids, const Tensor& labels, int64_t shards,
                                           int64_t per_shard, int64_t T) {
  ag::NoGradGuard no_grad;
  ag::Var h = hidden(ids, shards, per_shard, T, false);
  return train_ops::cross_entropy_values(h.value(), head_weight().value(), labels, Shards{shards, per_shard * T});
}

void Transformer::finish_grads() {
  if (!tied_head_.defined() || !tied_head_.grad().defined()) return;
  train_ops::fold_grad(wte_, tied_head_.grad());
  tied_head_.zero_grad();
}

std::map<std::string, Tensor> Transformer::hf_tensors() const {
  std::map<std::string, Tensor> out;
  for (const auto& [name, v] : named_parameters()) out[name] = v.value();
  return out;
}

std::string Transformer::hf_config_json() const {
  const ModelConfig& c = config_;
  nlohmann::ordered_json j;
  if (c.model_type == "gpt2") {
    j["architectures"] = {"GPT2LMHeadModel"};
    j["model_type"] = "gpt2";
    j["vocab_size"] = c.vocab_size;
    j["n_positions"] = c.max_positions;
    j["n_embd"] = c.hidden_size;
    j["n_layer"] = c.num_layers;
    j["n_head"] = c.num_heads;
    j["n_inner"] = c.intermediate_size;
    j["activation_function"] = activation_name(c.activation, true);
    j["layer_norm_epsilon"] = c.norm_eps;
    j["resid_pdrop"] = 0.0;
    j["embd_pdrop"] = 0.0;
    j["attn_pdrop"] = 0.0;
  } else {
    static const std::map<std::string, std::string> arch = {
        {"llama", "LlamaForCausalLM"}, {"mistral", "MistralForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}};
    j["architectures"] = {arch.at(c.model_type)};
    j["model_type"] = c.model_type;
    j["vocab_size"] = c.vocab_size;
    j["hidden_size"] = c.hidden_size;
    j["intermediate_size"] = c.intermediate_size;
    j["num_hidden_layers"] = c.num_layers;
    j["num_attention_heads"] = c.num_heads;
    j["num_key_value_heads"] = c.num_kv_heads;
    j["head_dim"] = c.head_dim;
    j["max_position_embeddings"] = c.max_positions;
    j["rms_norm_eps"] = c.norm_eps;
    j["rope_theta"] = c.rope_theta;
    j["hidden_act"] = activation_name(c.activation, false);
    j["attention_bias"] = false;
    if (c.model_type == "mistral") j["sliding_window"] = c.sliding_window > 0 ? nlohmann::json(c.sliding_window) : nlohmann::json();
    if (c.model_type == "qwen2") j["use_sliding_window"] = false;
  }
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  if (c.eos_token_id) j["eos_token_id"] = *c.eos_token_id;
  j["torch_dtype"] = "float32";
  return j.dump(2) + "\n";
}

void save_hf(const Transformer& model, const std::string& dir, const std::string& tokenizer_json) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  BL_CHECK(!ec, "save_hf: cannot create folder '", dir, "': ", ec.message());
  save_safetensors(dir + "/model.safetensors", model.hf_tensors(), {{"format", "pt"}});
  write_file_atomic(dir + "/config.json", model.hf_config_json(), "config.json");
  if (!tokenizer_json.empty())
    write_file_atomic(dir + "/tokenizer.json", read_file_bytes(tokenizer_json, "tokenizer"), "tokenizer.json");
}

}  // namespace bl::lm
