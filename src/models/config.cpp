// config.cpp: Hugging Face config.json -> ModelConfig for gpt2, llama, mistral, qwen2, phi3, gemma,
// mamba and mamba2.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/models.h"
#include "core/error.h"

namespace bl::models {
namespace {

using nlohmann::json;

// Reads config fields with errors that name the source and the field.
class Fields {
 public:
  Fields(const json& j, const std::string& source) : j_(j), source_(source) {}

  bool present(const std::string& key) const { return j_.contains(key) && !j_[key].is_null(); }

  int64_t integer(const std::string& key) const {
    BL_CHECK(present(key), source_, ": field '", key, "' is missing");
    const json& v = j_[key];
    BL_CHECK(v.is_number_integer(), source_, ": field '", key, "' must be an integer, got ", v.dump());
    return v.get<int64_t>();
  }
  int64_t positive(const std::string& key) const {
    const int64_t v = integer(key);
    BL_CHECK(v > 0, source_, ": field '", key, "' must be positive, got ", v);
    return v;
  }
  // A positive size no larger than limit (ConfigLimits), checked before it sizes anything.
  int64_t sized(const std::string& key, int64_t limit) const {
    const int64_t v = positive(key);
    BL_CHECK(v <= limit, source_, ": field '", key, "' = ", v, " exceeds the limit of ", limit);
    return v;
  }
  int64_t integer_or(const std::string& key, int64_t fallback) const {
    return present(key) ? integer(key) : fallback;
  }
  double number_or(const std::string& key, double fallback) const {
    if (!present(key)) return fallback;
    const json& v = j_[key];
    BL_CHECK(v.is_number(), source_, ": field '", key, "' must be a number, got ", v.dump());
    return v.get<double>();
  }
  bool boolean_or(const std::string& key, bool fallback) const {
    if (!present(key)) return fallback;
    const json& v = j_[key];
    BL_CHECK(v.is_boolean(), source_, ": field '", key, "' must be true or false, got ", v.dump());
    return v.get<bool>();
  }
  std::string string_or(const std::string& key, const std::string& fallback) const {
    if (!present(key)) return fallback;
    const json& v = j_[key];
    BL_CHECK(v.is_string(), source_, ": field '", key, "' must be a string, got ", v.dump());
    return v.get<std::string>();
  }
  [[noreturn]] void unsupported(const std::string& key, const std::string& why) const {
    throw Error(detail::concat(source_, ": field '", key, "' = ", present(key) ? j_[key].dump() : "null",
                               " is not supported (", why, ")"));
  }
  const json& raw(const std::string& key) const { return j_[key]; }

 private:
  const json& j_;
  std::string source_;
};

Activation parse_activation(const Fields& f, const std::string& key) {
  const std::string act = f.string_or(key, "");
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  if (act == "gelu") return Activation::gelu_erf;
  if (act == "silu" || act == "swish") return Activation::silu;
  if (act == "relu") return Activation::relu;
  f.unsupported(key, "supported: gelu_new, gelu_pytorch_tanh, gelu, silu, swish, relu");
}

// rope_parameters (transformers 5) or rope_theta + rope_scaling (transformers 4).
void parse_rope(const Fields& f, ModelConfig& c) {
  double theta = f.number_or("rope_theta", 10000.0);
  if (f.present("rope_parameters")) {
    const json& rp = f.raw("rope_parameters");
    BL_CHECK(rp.is_object(), "config: field 'rope_parameters' must be an object");
    Fields r(rp, "config field 'rope_parameters'");
    const std::string type = r.string_or("rope_type", r.string_or("type", "default"));
    if (type != "default") r.unsupported("rope_type", "only the default rotary embedding is supported");
    theta = r.number_or("rope_theta", theta);
    const double partial = r.number_or("partial_rotary_factor", 1.0);
    if (partial != 1.0) r.unsupported("partial_rotary_factor", "only 1.0 is supported");
  }
  if (f.present("rope_scaling")) {
    const json& rs = f.raw("rope_scaling");
    Fields r(rs, "config field 'rope_scaling'");
    const std::string type = rs.is_object() ? r.string_or("rope_type", r.string_or("type", "")) : "";
    if (type != "default") f.unsupported("rope_scaling", "rope scaling variants are not supported");
  }
  if (f.number_or("partial_rotary_factor", 1.0) != 1.0)
    f.unsupported("partial_rotary_factor", "only 1.0 is supported");
  BL_CHECK(theta > 0 && std::isfinite(theta), "config: rope_theta ", theta, " must be positive");
  c.rope_theta = static_cast<float>(theta);
}

void parse_gpt2(const Fields& f, ModelConfig& c) {
  c.vocab_size = f.sized("vocab_size", ConfigLimits::vocab_size);
  c.hidden_size = f.sized("n_embd", ConfigLimits::hidden_size);
  c.num_layers = f.sized("n_layer", ConfigLimits::num_layers);
  c.num_heads = f.sized("n_head", ConfigLimits::num_heads);
  c.num_kv_heads = c.num_heads;
  BL_CHECK(c.hidden_size % c.num_heads == 0, "config: n_embd ", c.hidden_size, " is not a multiple of n_head ",
           c.num_heads);
  c.head_dim = c.hidden_size / c.num_heads;
  // Without n_inner the width is 4 * n_embd, within the intermediate_size limit (4 * 2^20 = 2^22).
  c.intermediate_size =
      f.present("n_inner") ? f.sized("n_inner", ConfigLimits::intermediate_size) : 4 * c.hidden_size;
  c.max_positions = f.sized("n_positions", ConfigLimits::max_positions);
  c.norm = NormKind::layer_norm;
  c.norm_eps = static_cast<float>(f.number_or("layer_norm_epsilon", 1e-5));
  c.activation = parse_activation(f, "activation_function");
  c.gated_mlp = false;
  c.learned_positions = true;
  c.rope = false;
  c.qkv_bias = true;
  c.output_bias = true;
  c.fused_qkv = true;
  c.tie_word_embeddings = f.boolean_or("tie_word_embeddings", true);
  if (f.boolean_or("scale_attn_by_inverse_layer_idx", false))
    f.unsupported("scale_attn_by_inverse_layer_idx", "only false is supported");
  if (!f.boolean_or("scale_attn_weights", true)) f.unsupported("scale_attn_weights", "only true is supported");
  if (f.boolean_or("add_cross_attention", false)) f.unsupported("add_cross_attention", "decoder-only models only");
}

void parse_llama_family(const Fields& f, ModelConfig& c) {
  c.vocab_size = f.sized("vocab_size", ConfigLimits::vocab_size);
  c.hidden_size = f.sized("hidden_size", ConfigLimits::hidden_size);
  c.num_layers = f.sized("num_hidden_layers", ConfigLimits::num_layers);
  c.num_heads = f.sized("num_attention_heads", ConfigLimits::num_heads);
  c.num_kv_heads =
      f.present("num_key_value_heads") ? f.sized("num_key_value_heads", ConfigLimits::num_heads) : c.num_heads;
  BL_CHECK(c.num_heads % c.num_kv_heads == 0, "config: num_attention_heads ", c.num_heads,
           " is not a multiple of num_key_value_heads ", c.num_kv_heads);
  if (f.present("head_dim")) {
    c.head_dim = f.sized("head_dim", ConfigLimits::head_dim);
  } else {
    BL_CHECK(c.hidden_size % c.num_heads == 0, "config: hidden_size ", c.hidden_size,
             " is not a multiple of num_attention_heads ", c.num_heads, " and head_dim is absent");
    c.head_dim = c.hidden_size / c.num_heads;
  }
  BL_CHECK(c.head_dim % 2 == 0, "config: head_dim ", c.head_dim, " must be even for rotary embeddings");
  BL_CHECK(c.head_dim <= ConfigLimits::head_dim, "config: head_dim ", c.head_dim, " exceeds the limit of ",
           ConfigLimits::head_dim);
  c.intermediate_size = f.sized("intermediate_size", ConfigLimits::intermediate_size);
  c.max_positions = f.sized("max_position_embeddings", ConfigLimits::max_positions);
  // Both factors are at most 2^20 and 2^16 here, so the product cannot overflow.
  BL_CHECK(c.max_positions * c.head_dim <= ConfigLimits::rope_table_elements, "config: max_position_embeddings ",
           c.max_positions, " * head_dim ", c.head_dim, " = ", c.max_positions * c.head_dim,
           " rotary table elements exceeds the limit of ", ConfigLimits::rope_table_elements);
  c.norm = NormKind::rms_norm;
  c.norm_eps = static_cast<float>(f.number_or("rms_norm_eps", 1e-6));
  c.gated_mlp = true;
  c.rope = true;
  parse_rope(f, c);
  c.tie_word_embeddings = f.boolean_or("tie_word_embeddings", c.model_type == "gemma");
  const std::string& t = c.model_type;
  if (t == "gemma" && f.present("hidden_activation")) {
    c.activation = parse_activation(f, "hidden_activation");
  } else {
    c.activation = parse_activation(f, "hidden_act");
  }
  if (f.boolean_or("mlp_bias", false)) f.unsupported("mlp_bias", "only false is supported");
  if (f.integer_or("pretraining_tp", 1) != 1) f.unsupported("pretraining_tp", "only 1 is supported");
  if (t == "llama" || t == "mistral" || t == "gemma") {
    if (f.boolean_or("attention_bias", false)) f.unsupported("attention_bias", "only false is supported");
  }
  if (t == "qwen2") {
    c.qkv_bias = true;
    if (f.boolean_or("use_sliding_window", false))
      f.unsupported("use_sliding_window", "Qwen2's per-layer sliding window is not supported");
  }
  if (t == "mistral" || t == "phi3") {
    c.sliding_window = f.present("sliding_window") ? f.positive("sliding_window") : 0;
  }
  if (t == "phi3") {
    c.fused_qkv = true;
    c.fused_gate_up = true;
  }
  if (t == "gemma") {
    c.norm_weight_plus_one = true;
    c.scale_embeddings = true;
    if (f.boolean_or("use_bidirectional_attention", false))
      f.unsupported("use_bidirectional_attention", "only causal attention is supported");
  }
}

// A config number that transformers may write as {"__float__": "Infinity"} (non-finite floats).
double extended_number(const json& v, const std::string& source, const std::string& key) {
  if (v.is_number()) return v.get<double>();
  const json* text = &v;
  if (v.is_object() && v.contains("__float__")) text = &v["__float__"];
  if (text->is_string()) {
    const std::string t = text->get<std::string>();
    if (t == "Infinity" || t == "inf") return std::numeric_limits<double>::infinity();
    if (t == "-Infinity" || t == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw Error(detail::concat(source, ": field '", key, "' must hold numbers, got ", v.dump()));
}

// Mamba (model_type "mamba") and Mamba-2 ("mamba2"). Fields that only shape the initialisation
// (time_step_min/max/floor/scale/init_scheme, rescale_prenorm_residual, initializer_range) or pick
// one of several equal computations (use_mambapy, use_associative_scan, chunk_size,
// residual_in_fp32 at float32) are accepted and ignored.
void parse_ssm(const Fields& f, ModelConfig& c, const std::string& source) {
  const bool v2 = c.model_type == "mamba2";
  c.vocab_size = f.sized("vocab_size", ConfigLimits::vocab_size);
  c.hidden_size = f.sized("hidden_size", ConfigLimits::hidden_size);
  c.num_layers = f.sized("num_hidden_layers", ConfigLimits::num_layers);
  c.ssm_state_size = f.sized("state_size", ConfigLimits::state_size);
  c.conv_kernel = f.sized("conv_kernel", ConfigLimits::conv_kernel);
  const double expand = f.number_or("expand", 2.0);
  BL_CHECK(expand > 0 && std::isfinite(expand), source, ": field 'expand' must be positive, got ", expand);
  // The product is checked as a double before it is converted (a conversion out of range is undefined).
  const double inner = expand * static_cast<double>(c.hidden_size);
  BL_CHECK(inner <= static_cast<double>(ConfigLimits::intermediate_size), source, ": expand ", expand,
           " * hidden_size ", c.hidden_size, " = ", inner, " exceeds the inner-width limit of ",
           ConfigLimits::intermediate_size);
  const int64_t from_expand = static_cast<int64_t>(inner);
  c.intermediate_size = !v2 && f.present("intermediate_size")
                            ? f.sized("intermediate_size", ConfigLimits::intermediate_size)
                            : from_expand;
  BL_CHECK(c.intermediate_size > 0, source, ": expand ", expand, " * hidden_size ", c.hidden_size,
           " gives no inner width");
  c.max_positions = std::numeric_limits<int32_t>::max();
  c.norm = NormKind::rms_norm;
  c.norm_eps = static_cast<float>(f.number_or("layer_norm_epsilon", 1e-5));
  c.activation = parse_activation(f, "hidden_act");
  if (c.activation != Activation::silu) f.unsupported("hidden_act", "Mamba blocks support silu (swish) only");
  c.conv_bias = f.boolean_or("use_conv_bias", true);
  c.proj_bias = f.boolean_or("use_bias", false);
  c.tie_word_embeddings = f.boolean_or("tie_word_embeddings", !v2);
  c.rope = false;
  c.gated_mlp = false;
  if (!v2) {
    c.ssm_heads = c.intermediate_size;
    c.ssm_head_dim = 1;
    c.ssm_groups = 1;
    if (f.present("time_step_rank") && f.raw("time_step_rank").is_string()) {
      if (f.string_or("time_step_rank", "") != "auto") f.unsupported("time_step_rank", "an integer or \"auto\"");
      c.time_step_rank = (c.hidden_size + 15) / 16;
    } else {
      c.time_step_rank = f.present("time_step_rank") ? f.sized("time_step_rank", ConfigLimits::hidden_size)
                                                     : (c.hidden_size + 15) / 16;
    }
    return;
  }
  c.ssm_heads = f.sized("num_heads", ConfigLimits::num_heads);
  c.ssm_head_dim = f.sized("head_dim", ConfigLimits::head_dim);
  c.ssm_groups = f.present("n_groups") ? f.sized("n_groups", ConfigLimits::num_heads) : 1;
  // num_heads and head_dim are at most 2^16 each here, so their product cannot overflow.
  BL_CHECK(c.ssm_heads * c.ssm_head_dim == c.intermediate_size, source, ": num_heads ", c.ssm_heads, " * head_dim ",
           c.ssm_head_dim, " must equal expand * hidden_size = ", c.intermediate_size);
  BL_CHECK(c.ssm_heads % c.ssm_groups == 0, source, ": num_heads ", c.ssm_heads, " is not a multiple of n_groups ",
           c.ssm_groups);
  if (f.present("chunk_size")) f.positive("chunk_size");
  c.time_step_min = 0.0f;
  c.time_step_max = std::numeric_limits<float>::infinity();
  if (f.present("time_step_limit")) {
    const json& lim = f.raw("time_step_limit");
    BL_CHECK(lim.is_array() && lim.size() == 2, source, ": field 'time_step_limit' must be [min, max], got ",
             lim.dump());
    const double lo = extended_number(lim[0], source, "time_step_limit");
    const double hi = extended_number(lim[1], source, "time_step_limit");
    BL_CHECK(lo >= 0 && lo <= hi, source, ": field 'time_step_limit' = ", lim.dump(), " must satisfy 0 <= min <= max");
    c.time_step_min = static_cast<float>(lo);
    c.time_step_max = static_cast<float>(hi);
  }
  if (f.present("layer_types")) {
    const json& types = f.raw("layer_types");
    BL_CHECK(types.is_array(), source, ": field 'layer_types' must be a list");
    for (const auto& t : types)
      if (!t.is_string() || t.get<std::string>() != "mamba")
        f.unsupported("layer_types", "only Mamba-2 blocks (\"mamba\") are supported, no hybrid layers");
  }
}

}  // namespace

ModelConfig parse_config(const std::string& json_text, const std::string& source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw Error(detail::concat(source, ": not valid JSON (", e.what(), ")"));
  }
  BL_CHECK(j.is_object(), source, ": must be a JSON object");
  Fields f(j, source);
  ModelConfig c;
  c.model_type = f.string_or("model_type", "");
  if (c.model_type == "gpt2") {
    parse_gpt2(f, c);
  } else if (c.model_type == "llama" || c.model_type == "mistral" || c.model_type == "qwen2" ||
             c.model_type == "phi3" || c.model_type == "gemma") {
    parse_llama_family(f, c);
  } else if (c.model_type == "mamba" || c.model_type == "mamba2") {
    parse_ssm(f, c, source);
  } else {
    f.unsupported("model_type", "supported: gpt2, llama, mistral, qwen2, phi3, gemma, mamba, mamba2");
  }
  if (f.present("eos_token_id") && j["eos_token_id"].is_number_integer()) {
    c.eos_token_id = j["eos_token_id"].get<int64_t>();
  } else if (f.present("eos_token_id") && j["eos_token_id"].is_array() && !j["eos_token_id"].empty() &&
             j["eos_token_id"][0].is_number_integer()) {
    c.eos_token_id = j["eos_token_id"][0].get<int64_t>();
  }
  BL_CHECK(c.norm_eps > 0, source, ": the norm epsilon must be positive");
  return c;
}

ModelConfig load_config(const std::string& path) {
  return parse_config(read_file_text(path, "config.json"), path);
}

}  // namespace bl::models
