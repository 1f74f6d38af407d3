// causal_lm.cpp: weight loading and the forward pass of the decoder-only models (bitlearn/models.h).
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "bitlearn/models.h"
#include "bitlearn/ops.h"
#include "bitlearn/ops_attention.h"
#include "bitlearn/safetensors.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/matmul.h"
#include "kernels/matmul_packed.h"
#include "kernels/skinny_matmul.h"
#include "models/model_parts.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl::models {
namespace parts {

// cos and sin tables [positions, head_dim] as Hugging Face computes them in float32:
// inv_freq_i = 1 / theta^(2i / d), angle = inv_freq_i * position, the halves repeated.
void rope_tables(const ModelConfig& c, Tensor* cos_out, Tensor* sin_out) {
  const int64_t half = c.head_dim / 2;
  std::vector<float> exponents(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) exponents[i] = static_cast<float>(2 * i);  // exact
  Tensor e = div(Tensor::from_vector(exponents, {half}), Tensor::scalar(static_cast<double>(c.head_dim)));
  Tensor inv_freq = div(Tensor::scalar(1.0), pow(Tensor::scalar(c.rope_theta), e));
  Tensor pos = Tensor::arange(c.max_positions, DType::f32).unsqueeze(1);
  Tensor angles = mul(pos, inv_freq.unsqueeze(0));        // [P, half]
  Tensor full = concat({angles, angles}, 1);               // [P, head_dim]
  *cos_out = cos(full);
  *sin_out = sin(full);
}


Tensor WeightSource::take(const std::string& name, const Shape& expected, const std::string& config_fields) const {
  auto it = tensors_.find(name);
  BL_CHECK(it != tensors_.end(), source_, ": tensor '", name, "' is missing (expected shape ",
           shape_str(expected), " from ", config_fields, ")");
  const Tensor& t = it->second;
  BL_CHECK(t.dtype() == DType::f32, source_, ": tensor '", name, "' has dtype ", dtype_name(t.dtype()),
           "; expected a float tensor");
  BL_CHECK(t.shape() == expected, source_, ": tensor '", name, "' has shape ", shape_str(t.shape()),
           " but config.json (", config_fields, ") needs ", shape_str(expected));
  check_finite(t, name, source_);
  return t.to(device_);
}

void check_finite(const Tensor& t, const std::string& name, const std::string& source) {
  if (t.dtype() != DType::f32) return;
  const Tensor host = t.to(Device::cpu()).contiguous();
  const auto* bits = static_cast<const uint32_t*>(host.raw_data());
  const int64_t n = host.numel();
  // An all-ones exponent is NaN or an infinity; tested on the bits, so no float compare is involved.
  for (int64_t i = 0; i < n; ++i) {
    if ((bits[i] & 0x7F800000u) != 0x7F800000u) continue;
    const char* what = (bits[i] & 0x007FFFFFu) != 0 ? "NaN" : (bits[i] >> 31) != 0 ? "-inf" : "+inf";
    throw Error(detail::concat(source, ": tensor '", name, "' holds ", what, " at element ", i, " of ", n,
                               " (weights must be finite)"));
  }
}

std::string fields(const std::string& a, int64_t va, const std::string& b, int64_t vb) {
  std::string s = a + " " + std::to_string(va);
  if (!b.empty()) s += ", " + b + " " + std::to_string(vb);
  return s;
}

// A Hugging Face Linear (weight [out, in]), kept transposed as [in, out] so that products with few
// rows stream it row by row (skinny_matmul); the bits are the contract GEMM's either way.
CausalLM::Linear linear(const WeightSource& w, const std::string& name, int64_t out, int64_t in, bool bias,
                        const std::string& why) {
  CausalLM::Linear l;
  l.weight = w.take(name + ".weight", {out, in}, why).transpose(0, 1).contiguous();
  l.transposed = true;
  l.packed = pack_weight(l.weight);
  if (bias) l.bias = w.take(name + ".bias", {out}, why);
  return l;
}

std::shared_ptr<const PackedMatrix> pack_weight(const Tensor& w) {
  if (!w.device().is_cpu()) return nullptr;
  BL_CHECK(w.ndim() == 2 && w.is_contiguous(), "pack_weight: expected a contiguous [K, N] weight, got ",
           shape_str(w.shape()));
  const auto* wp = static_cast<const float*>(w.raw_data());
  return std::make_shared<const PackedMatrix>(matmul_pack_b_cpu(wp, w.dim(0), w.dim(1), w.dim(1), false, &op_pool()));
}

// x [M, K] times w [K, N] (dense): the skinny kernel for M <= kSkinnyMaxRows, else the
// weight-stationary GEMM when w was packed (CPU), else bl::matmul; all are the contract GEMM, so
// the choice changes no bit.
Tensor product(const Tensor& x_in, const Tensor& w, const PackedMatrix* packed) {
  const int64_t M = x_in.dim(0), K = x_in.dim(1), N = w.dim(1);
  if (M > kSkinnyMaxRows && packed != nullptr && x_in.device().is_cpu() && gemm_profile() == GemmProfile::contract) {
    BL_CHECK(packed->k() == K && packed->n() == N, "CausalLM: packed weight [", packed->k(), ", ", packed->n(),
             "] does not match the product's [", K, ", ", N, "]");
    const Tensor x = x_in.contiguous();
    Tensor out = Tensor::empty({M, N}, DType::f32, x.device());
    matmul_cpu_packed_b(static_cast<const float*>(x.raw_data()), M, K, *packed, static_cast<float*>(out.raw_data()),
                        N, &op_pool());
    return out;
  }
  if (M > kSkinnyMaxRows || !w.is_contiguous()) return matmul(x_in, w);
  const Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty({M, N}, DType::f32, x.device());
  const auto* xp = static_cast<const float*>(x.raw_data());
  const auto* wp = static_cast<const float*>(w.raw_data());
  auto* op = static_cast<float*>(out.raw_data());
  dispatch::skinny_matmul(x.device(), xp, wp, op, M, N, K);
  return out;
}

// x [M, K] times w [K, N] (contiguous) plus bias [N] on every row, the bias added as the product
// is stored (dispatch::matmul_bias, a CUDA kernel): the bits of bl::matmul followed by bl::add.
Tensor product_bias(const Tensor& x_in, const Tensor& w, const Tensor& bias_in) {
  const Tensor x = x_in.contiguous(), bias = bias_in.contiguous();
  const int64_t M = x.dim(0), K = x.dim(1), N = w.dim(1);
  BL_CHECK(w.dim(0) == K && bias.numel() == N, "CausalLM: weight [", w.dim(0), ", ", N, "] and bias of ",
           bias.numel(), " do not match an input of ", K, " features");
  Tensor out = Tensor::empty({M, N}, DType::f32, x.device());
  dispatch::matmul_bias(x.device(), matmul_dense_args(1, M, N, K), static_cast<const float*>(x.raw_data()),
                        static_cast<const float*>(w.raw_data()), static_cast<const float*>(bias.raw_data()),
                        static_cast<float*>(out.raw_data()));
  return out;
}

// x [N, in] -> [N, out]. On CUDA, products with many rows and a bias take the fused kernel.
Tensor apply(const CausalLM::Linear& l, const Tensor& x) {
  if (l.bias.defined() && l.transposed && x.device().is_cuda() && x.dim(0) > kSkinnyMaxRows &&
      gemm_profile() == GemmProfile::contract &&
      l.weight.is_contiguous() && x.dtype() == DType::f32 && l.bias.dtype() == DType::f32)
    return product_bias(x, l.weight, l.bias);
  Tensor y = l.transposed ? product(x, l.weight, l.packed.get()) : matmul(x, l.weight, false, true);
  if (l.bias.defined()) y = add(y, l.bias);
  return y;
}

namespace {

// True when `path` is `root` or lies below it (both canonical).
bool lies_under(const std::filesystem::path& path, const std::filesystem::path& root) {
  auto r = root.begin();
  auto p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

std::string shard_path(const std::string& dir, const std::string& index, const std::string& key,
                       const std::string& name) {
  namespace fs = std::filesystem;
  const std::string entry = detail::concat(index, ": weight_map entry '", key, "' names the shard '", name, "'");
  BL_CHECK(!name.empty(), entry, ", an empty file name");
  BL_CHECK(name.find('\0') == std::string::npos, entry, ", a file name holding a NUL byte");
  const fs::path rel(name);
  BL_CHECK(!rel.has_root_name() && !rel.has_root_directory(), entry,
           ", an absolute path (shards must lie inside the model folder)");
  for (const auto& part : rel)
    BL_CHECK(part != "..", entry, ", which leaves the model folder through '..'");
  const fs::path full = fs::path(dir) / rel;
  std::error_code ec;
  if (!fs::exists(full, ec)) return full.string();  // opening it reports the missing file
  const fs::path real = fs::canonical(full, ec);
  BL_CHECK(!ec, entry, ": cannot resolve the path (", ec.message(), ")");
  const fs::path root = fs::canonical(dir, ec);
  BL_CHECK(!ec, "model ", dir, ": cannot resolve the folder (", ec.message(), ")");
  // The Hugging Face hub cache keeps a revision in <repo>/snapshots/<revision>/ whose files are
  // symbolic links to <repo>/blobs/; those stay inside the repository's own cache folder.
  const bool hub_blob = root.parent_path().filename() == "snapshots" &&
                        lies_under(real, root.parent_path().parent_path() / "blobs");
  BL_CHECK(lies_under(real, root) || hub_blob, entry, ", which resolves (through a symbolic link) to ",
           real.string(), ", outside the model folder ", root.string());
  return full.string();
}

std::map<std::string, Tensor> read_safetensors_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const std::string index = dir + "/model.safetensors.index.json";
  if (fs::exists(dir + "/model.safetensors")) {
    files.push_back(dir + "/model.safetensors");
  } else if (fs::exists(index)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file_text(index, "safetensors index"));
    } catch (const nlohmann::json::exception& e) {
      throw Error(detail::concat(index, ": not valid JSON (", e.what(), ")"));
    }
    BL_CHECK(j.contains("weight_map") && j["weight_map"].is_object(), index,
             ": field 'weight_map' missing or not an object");
    // Every entry is checked before any shard is opened.
    std::map<std::string, bool> seen;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      BL_CHECK(it.value().is_string(), index, ": weight_map entry '", it.key(), "' must be a file name");
      const std::string f = it.value().get<std::string>();
      if (!seen[f]) files.push_back(shard_path(dir, index, it.key(), f));
      seen[f] = true;
    }
  } else {
    throw Error(detail::concat("model ", dir, ": neither model.safetensors nor model.safetensors.index.json"));
  }
  std::map<std::string, Tensor> out;
  for (const auto& f : files) {
    SafetensorsFile st = SafetensorsFile::open(f);
    for (const auto& name : st.names()) out[name] = st.get(name);
  }
  return out;
}

Tensor zero_padding(const Tensor& logits, const std::vector<uint8_t>& valid, int64_t B, int64_t T, Device dev) {
  bool padded = false;
  for (auto v : valid) padded = padded || v == 0;
  if (!padded) return logits;
  const Tensor mask = Tensor::from_vector(valid, {B, T, 1}, DType::boolean, dev);
  return where(mask, logits, Tensor::zeros({1}, DType::f32, dev));
}

}  // namespace parts

namespace {

using namespace parts;

// GPT-2's Conv1D: weight stored [in, out].
CausalLM::Linear conv1d(const WeightSource& w, const std::string& name, int64_t in, int64_t out,
                        const std::string& why) {
  CausalLM::Linear l;
  l.weight = w.take(name + ".weight", {in, out}, why);
  l.bias = w.take(name + ".bias", {out}, why);
  l.transposed = true;
  l.packed = pack_weight(l.weight);
  return l;
}

Tensor activate(Activation a, const Tensor& x) {
  switch (a) {
    case Activation::gelu_tanh: return gelu_tanh(x);
    case Activation::gelu_erf: return gelu(x);
    case Activation::silu: return silu(x);
    case Activation::relu: return relu(x);
  }
  return x;
}

Tensor norm(const ModelConfig& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  if (c.norm == NormKind::layer_norm) return layer_norm(x, w, b, c.norm_eps);
  return rms_norm(x, w, c.norm_eps);
}

// x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1); x [B, T, H, D], cos/sin [B, T, 1, D].
Tensor apply_rope(const Tensor& x, const Tensor& cos_t, const Tensor& sin_t) {
  const int64_t half = x.dim(3) / 2;
  Tensor rotated = concat({neg(x.slice(3, half, 2 * half)), x.slice(3, 0, half)}, 3);
  return add(mul(x, cos_t), mul(rotated, sin_t));
}

}  // namespace

CausalLM CausalLM::load(const std::string& dir, Device device) {
  const ModelConfig config = load_config(dir + "/config.json");
  return from_tensors(config, read_safetensors_dir(dir), device, dir);
}

CausalLM CausalLM::from_tensors(const ModelConfig& c, const std::map<std::string, Tensor>& tensors,
                                Device device, const std::string& source) {
  CausalLM m;
  m.config_ = c;
  m.device_ = device;
  if (c.is_ssm()) {
    m.load_ssm(tensors, source);
    return m;
  }
  const WeightSource w(tensors, source, device);
  const int64_t C = c.hidden_size, V = c.vocab_size, H = c.num_heads, G = c.num_kv_heads, D = c.head_dim;
  const int64_t I = c.intermediate_size;
  const std::string hid = fields("hidden_size", C);
  if (c.model_type == "gpt2") {
    const std::string p = w.has("transformer.wte.weight") ? "transformer." : "";
    m.embed_tokens = w.take(p + "wte.weight", {V, C}, fields("vocab_size", V, "n_embd", C));
    m.embed_positions = w.take(p + "wpe.weight", {c.max_positions, C}, fields("n_positions", c.max_positions, "n_embd", C));
    for (int64_t l = 0; l < c.num_layers; ++l) {
      const std::string b = p + "h." + std::to_string(l) + ".";
      Layer L;
      L.attn_norm_weight = w.take(b + "ln_1.weight", {C}, fields("n_embd", C));
      L.attn_norm_bias = w.take(b + "ln_1.bias", {C}, fields("n_embd", C));
      L.qkv = conv1d(w, b + "attn.c_attn", C, 3 * C, fields("n_embd", C));
      L.o = conv1d(w, b + "attn.c_proj", C, C, fields("n_embd", C));
      L.mlp_norm_weight = w.take(b + "ln_2.weight", {C}, fields("n_embd", C));
      L.mlp_norm_bias = w.take(b + "ln_2.bias", {C}, fields("n_embd", C));
      L.up = conv1d(w, b + "mlp.c_fc", C, I, fields("n_embd", C, "n_inner", I));
      L.down = conv1d(w, b + "mlp.c_proj", I, C, fields("n_embd", C, "n_inner", I));
      m.layers_.push_back(L);
    }
    m.final_norm_weight = w.take(p + "ln_f.weight", {C}, fields("n_embd", C));
    m.final_norm_bias = w.take(p + "ln_f.bias", {C}, fields("n_embd", C));
    m.lm_head = (c.tie_word_embeddings ? m.embed_tokens
                                       : w.take("lm_head.weight", {V, C}, fields("vocab_size", V, "n_embd", C)))
                    .transpose(0, 1)
                    .contiguous();
  } else {
    const std::string attn_f = fields("num_attention_heads", H, "head_dim", D) + ", " +
                               fields("num_key_value_heads", G, "hidden_size", C);
    const std::string mlp_f = fields("intermediate_size", I, "hidden_size", C);
    m.embed_tokens = w.take("model.embed_tokens.weight", {V, C}, fields("vocab_size", V, "hidden_size", C));
    for (int64_t l = 0; l < c.num_layers; ++l) {
      const std::string b = "model.layers." + std::to_string(l) + ".";
      Layer L;
      L.attn_norm_weight = w.take(b + "input_layernorm.weight", {C}, hid);
      L.mlp_norm_weight = w.take(b + "post_attention_layernorm.weight", {C}, hid);
      if (c.fused_qkv) {
        L.qkv = linear(w, b + "self_attn.qkv_proj", (H + 2 * G) * D, C, c.qkv_bias, attn_f);
      } else {
        L.q = linear(w, b + "self_attn.q_proj", H * D, C, c.qkv_bias, attn_f);
        L.k = linear(w, b + "self_attn.k_proj", G * D, C, c.qkv_bias, attn_f);
        L.v = linear(w, b + "self_attn.v_proj", G * D, C, c.qkv_bias, attn_f);
      }
      L.o = linear(w, b + "self_attn.o_proj", C, H * D, false, attn_f);
      if (c.fused_gate_up) {
        L.gate_up = linear(w, b + "mlp.gate_up_proj", 2 * I, C, false, mlp_f);
      } else {
        L.gate = linear(w, b + "mlp.gate_proj", I, C, false, mlp_f);
        L.up = linear(w, b + "mlp.up_proj", I, C, false, mlp_f);
      }
      L.down = linear(w, b + "mlp.down_proj", C, I, false, mlp_f);
      if (c.norm_weight_plus_one) {
        L.attn_norm_weight = add(L.attn_norm_weight, Tensor::scalar(1.0, DType::f32, device));
        L.mlp_norm_weight = add(L.mlp_norm_weight, Tensor::scalar(1.0, DType::f32, device));
      }
      m.layers_.push_back(L);
    }
    m.final_norm_weight = w.take("model.norm.weight", {C}, hid);
    if (c.norm_weight_plus_one) m.final_norm_weight = add(m.final_norm_weight, Tensor::scalar(1.0, DType::f32, device));
    m.lm_head = (c.tie_word_embeddings ? m.embed_tokens
                                       : w.take("lm_head.weight", {V, C}, fields("vocab_size", V, "hidden_size", C)))
                    .transpose(0, 1)
                    .contiguous();
    Tensor cos_t, sin_t;
    rope_tables(c, &cos_t, &sin_t);
    m.rope_cos = cos_t.to(device);
    m.rope_sin = sin_t.to(device);
  }
  m.lm_head_packed = pack_weight(m.lm_head);
  if (device.is_cuda() && c.tie_word_embeddings) m.lm_head_rows = m.embed_tokens;
  return m;
}

KvCache CausalLM::new_cache(int64_t batch, int64_t capacity) const {
  if (config_.is_ssm()) return new_ssm_cache(batch, capacity);
  BL_CHECK(batch >= 1, "new_cache: batch ", batch, " must be >= 1");
  BL_CHECK(capacity >= 1 && capacity <= config_.max_positions, "new_cache: capacity ", capacity,
           " must lie in [1, ", config_.max_positions, "] (max_position_embeddings)");
  KvCache cache;
  cache.capacity_ = capacity;
  cache.lengths_.assign(static_cast<size_t>(batch), 0);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    cache.keys.push_back(Tensor::zeros({batch, capacity, config_.num_kv_heads, config_.head_dim}, DType::f32, device_));
    cache.values.push_back(Tensor::zeros({batch, capacity, config_.num_kv_heads, config_.head_dim}, DType::f32, device_));
  }
  return cache;
}

Tensor CausalLM::forward(const Tensor& ids) const {
  BL_CHECK(ids.defined(), "CausalLM::forward: ids is undefined");
  BL_CHECK(ids.dtype() == DType::i32 || ids.dtype() == DType::i64, "CausalLM::forward: ids has dtype ",
           dtype_name(ids.dtype()), "; expected i32 or i64");
  BL_CHECK(ids.ndim() == 1 || ids.ndim() == 2, "CausalLM::forward: ids has shape ", shape_str(ids.shape()),
           "; expected [T] or [B, T]");
  const Tensor ids2 = ids.ndim() == 1 ? ids.unsqueeze(0) : ids;
  const Tensor host = cast(ids2.to(Device::cpu()), DType::i64);
  const std::vector<int64_t> flat = host.to_vector<int64_t>();
  const int64_t B = ids2.dim(0), T = ids2.dim(1);
  std::vector<std::vector<int32_t>> seqs(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      const int64_t id = flat[b * T + t];
      BL_CHECK(id >= 0 && id < config_.vocab_size, "CausalLM::forward: token id ", id, " at [", b, ", ", t,
               "] lies outside the vocabulary [0, ", config_.vocab_size, ")");
      seqs[b].push_back(static_cast<int32_t>(id));
    }
  }
  Tensor logits = run(seqs, nullptr);
  return ids.ndim() == 1 ? logits.squeeze(0) : logits;
}

Tensor CausalLM::forward(const std::vector<std::vector<int32_t>>& sequences, KvCache* cache) const {
  return run(sequences, cache);
}

Tensor CausalLM::run(const std::vector<std::vector<int32_t>>& seqs, KvCache* cache) const {
  if (config_.is_ssm()) return run_ssm(seqs, cache);
  const ModelConfig& c = config_;
  const int64_t B = static_cast<int64_t>(seqs.size());
  BL_CHECK(B >= 1, "CausalLM::forward: no sequences");
  if (cache != nullptr) {
    BL_CHECK(cache->batch() == B, "CausalLM::forward: the cache holds ", cache->batch(),
             " sequences but ", B, " were given");
    BL_CHECK(static_cast<int64_t>(cache->keys.size()) == c.num_layers && cache->keys[0].device() == device_,
             "CausalLM::forward: the cache was made for another model or device");
  }
  int64_t T = 0;
  for (const auto& s : seqs) T = std::max<int64_t>(T, static_cast<int64_t>(s.size()));
  BL_CHECK(T >= 1, "CausalLM::forward: every sequence is empty");
  std::vector<int64_t> ids(static_cast<size_t>(B * T), 0), pos(static_cast<size_t>(B * T), -1),
      pos_clamped(static_cast<size_t>(B * T), 0), kv_len(static_cast<size_t>(B), 0);
  std::vector<uint8_t> valid(static_cast<size_t>(B * T), 0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t start = cache != nullptr ? cache->lengths_[b] : 0;
    const int64_t n = static_cast<int64_t>(seqs[b].size());
    const int64_t limit = cache != nullptr ? cache->capacity_ : c.max_positions;
    BL_CHECK(start + n <= limit, "CausalLM::forward: sequence ", b, " would reach ", start + n,
             " tokens, beyond ", cache != nullptr ? "the cache capacity " : "max_position_embeddings ", limit);
    for (int64_t t = 0; t < n; ++t) {
      const int32_t id = seqs[b][t];
      BL_CHECK(id >= 0 && id < c.vocab_size, "CausalLM::forward: token id ", id, " of sequence ", b,
               " at index ", t, " lies outside the vocabulary [0, ", c.vocab_size, ")");
      ids[b * T + t] = id;
      pos[b * T + t] = start + t;
      pos_clamped[b * T + t] = start + t;
      valid[b * T + t] = 1;
    }
    kv_len[b] = start + n;
  }
  const Device dev = device_;
  const Tensor ids_t = Tensor::from_vector(ids, {B, T}, dev);
  const Tensor pos_t = Tensor::from_vector(pos, {B, T}, dev);
  const Tensor pos_idx = Tensor::from_vector(pos_clamped, {B, T}, dev);
  const Tensor kv_len_t = Tensor::from_vector(kv_len, {B}, dev);
  const int64_t C = c.hidden_size, H = c.num_heads, G = c.num_kv_heads, D = c.head_dim;
  const int64_t I = c.intermediate_size;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));

  Tensor h = embedding(embed_tokens, ids_t);  // [B, T, C]
  if (c.learned_positions) h = add(h, embedding(embed_positions, pos_idx));
  if (c.scale_embeddings) {
    const float normalizer = static_cast<float>(std::sqrt(static_cast<double>(C)));
    h = mul(h, Tensor::scalar(normalizer, DType::f32, dev));
  }
  Tensor cos_t, sin_t;
  if (c.rope) {
    cos_t = embedding(rope_cos, pos_idx).unsqueeze(2);  // [B, T, 1, D]
    sin_t = embedding(rope_sin, pos_idx).unsqueeze(2);
  }
  int64_t kv_max = 0;
  for (int64_t b = 0; b < B; ++b) kv_max = std::max(kv_max, kv_len[b]);

  h = h.reshape({B * T, C});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const Layer& L = layers_[l];
    Tensor x = norm(c, h, L.attn_norm_weight, L.attn_norm_bias);
    Tensor q, k, v;
    if (c.fused_qkv) {
      Tensor qkv = apply(L.qkv, x);
      q = qkv.slice(1, 0, H * D);
      k = qkv.slice(1, H * D, (H + G) * D);
      v = qkv.slice(1, (H + G) * D, (H + 2 * G) * D);
    } else {
      q = apply(L.q, x);
      k = apply(L.k, x);
      v = apply(L.v, x);
    }
    q = q.reshape({B, T, H, D});
    k = k.reshape({B, T, G, D});
    v = v.reshape({B, T, G, D});
    if (c.rope) {
      q = apply_rope(q, cos_t, sin_t);
      k = apply_rope(k, cos_t, sin_t);
    }
    Tensor keys = k, values = v;
    if (cache != nullptr) {
      Tensor& kc = cache->keys[l];
      Tensor& vc = cache->values[l];
      for (int64_t b = 0; b < B; ++b) {
        const int64_t start = cache->lengths_[b];
        const int64_t n = static_cast<int64_t>(seqs[b].size());
        if (n == 0) continue;
        Tensor kd = kc.slice(0, b, b + 1).slice(1, start, start + n);
        Tensor vd = vc.slice(0, b, b + 1).slice(1, start, start + n);
        copy_into(kd, k.slice(0, b, b + 1).slice(1, 0, n));
        copy_into(vd, v.slice(0, b, b + 1).slice(1, 0, n));
      }
      keys = kc.slice(1, 0, kv_max);
      values = vc.slice(1, 0, kv_max);
    }
    Tensor attn = causal_attention(q, keys, values, pos_t, kv_len_t, scale, c.sliding_window);
    h = add(h, apply(L.o, attn.reshape({B * T, H * D})));
    x = norm(c, h, L.mlp_norm_weight, L.mlp_norm_bias);
    Tensor mlp;
    if (!c.gated_mlp) {
      mlp = apply(L.down, activate(c.activation, apply(L.up, x)));
    } else if (c.fused_gate_up) {
      Tensor gu = apply(L.gate_up, x);
      mlp = apply(L.down, mul(gu.slice(1, I, 2 * I), activate(c.activation, gu.slice(1, 0, I))));
    } else {
      mlp = apply(L.down, mul(activate(c.activation, apply(L.gate, x)), apply(L.up, x)));
    }
    h = add(h, mlp);
  }
  if (cache != nullptr) {
    for (int64_t b = 0; b < B; ++b) cache->lengths_[b] = kv_len[b];
  }
  h = norm(c, h, final_norm_weight, final_norm_bias);
  // CUDA products with more rows than the skinny kernel takes read the tied embedding as stored
  // ([vocab, hidden], 16-byte aligned rows) as a transposed B; [hidden, vocab] rows of an odd vocab
  // are not 16-byte aligned. The contract GEMM gives the same bits either way.
  const bool rows_b = lm_head_rows.defined() && h.dim(0) > kSkinnyMaxRows;
  Tensor logits = (rows_b ? matmul(h, lm_head_rows, false, true) : product(h, lm_head, lm_head_packed.get()))
                      .reshape({B, T, c.vocab_size});
  return parts::zero_padding(logits, valid, B, T, dev);
}

}  // namespace bl::models
