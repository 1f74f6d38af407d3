// mamba.cpp: Mamba (MambaForCausalLM) and Mamba-2 (Mamba2ForCausalLM) in CausalLM: weight loading,
// the recurrent cache, and the forward pass.
//
// Block (both): h += out_proj(mixer(rms_norm(h))); then rms_norm(h) and the LM head.
// Mamba mixer:   [x | z] = in_proj(h); x = silu(conv(x)); [dt_low | B | C] = x_proj(x);
//                dt = softplus(dt_proj(dt_low)); y = scan(x, dt, A = -exp(A_log), B, C, D);
//                out = out_proj(y * silu(z)).
// Mamba-2 mixer: [z | xBC | dt] = in_proj(h); xBC = silu(conv(xBC)); [x | B | C] = xBC;
//                dt = clamp(softplus(dt + dt_bias), time_step_limit); y = scan over heads (A scalar
//                per head, B and C per group); out = out_proj(rms_norm(y * silu(z))).
// conv is the causal depthwise convolution: out_t = (sum_k w_k * in_{t-K+1+k}, k ascending) + bias,
// over a window that starts with the cache's last K-1 inputs (zeros for a new sequence). The scan is
// the sequential recurrence of kernels/selective_scan.h. Every step is a Tensor op or that kernel,
// each row computed on its own, so a padded batch, a decode step and a prefill agree bit for bit,
// on the CPU and on CUDA.
#include <algorithm>
#include <limits>

#include "bitlearn/models.h"
#include "bitlearn/ops.h"
#include "contract/math.h"
#include "core/allocator.h"
#include "core/error.h"
#include "kernels/selective_scan.h"
#include "models/model_parts.h"
#include "ops/dispatch.h"
#include "ops/op_util.h"

namespace bl::models {
namespace {

using namespace parts;

int64_t conv_channels(const ModelConfig& c) {
  return c.model_type == "mamba2" ? c.intermediate_size + 2 * c.ssm_groups * c.ssm_state_size : c.intermediate_size;
}

const float* fptr(const Tensor& t) { return static_cast<const float*>(t.raw_data()); }

// Largest decay-factor buffer (elements) computed ahead of the scan.
constexpr int64_t kMaxDecayElements = int64_t{1} << 24;

// Runs the selective scan on contiguous f32 tensors of one device: x [B*T, H*P], dt [B*T, H],
// Bm and Cm [B*T, G*N]; state [B, H, P, N] is updated in place. Returns y [B*T, H*P].
Tensor selective_scan(const ModelConfig& c, const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm,
                      const Tensor& Cm, const Tensor& D, const std::vector<int64_t>& lengths, int64_t steps,
                      Tensor& state) {
  const Device dev = x.device();
  const Tensor xc = x.contiguous(), dtc = dt.contiguous(), bc = Bm.contiguous(), cc = Cm.contiguous();
  Tensor y = Tensor::empty(x.shape(), DType::f32, dev);
  ScanArgs a;
  a.shape.batch = static_cast<int64_t>(lengths.size());
  a.shape.steps = steps;
  a.shape.heads = c.ssm_heads;
  a.shape.head_dim = c.ssm_head_dim;
  a.shape.state = c.ssm_state_size;
  a.shape.groups = c.ssm_groups;
  a.x = fptr(xc), a.dt = fptr(dtc), a.A = fptr(A), a.Bm = fptr(bc), a.Cm = fptr(cc), a.D = fptr(D);
  a.state = static_cast<float*>(state.raw_data());
  a.y = static_cast<float*>(y.raw_data());
  // The decay factors exp(dt * A) by the (vectorised) Tensor ops when they fit a modest buffer;
  // the kernel computes the same bits itself otherwise.
  const int64_t rows = x.dim(0), H = c.ssm_heads, N = c.ssm_state_size;
  Tensor decay;
  if (rows * H * N <= kMaxDecayElements) {
    decay = exp(mul(dtc.reshape({rows, H, 1}), A.reshape({1, H, N})));
    a.decay = fptr(decay);
  }
  // The kernel reads the sequence lengths on the scan's device.
  const Tensor len = Tensor::from_vector(lengths, {static_cast<int64_t>(lengths.size())}, dev);
  a.lengths = static_cast<const int64_t*>(len.raw_data());
  dispatch::selective_scan(dev, a);
  return y;
}

// Causal depthwise conv of x [B, T, Cc] over the window (state [B, K-1, Cc] ++ x); when update is
// true, state row b becomes the last K-1 inputs of the window after lengths[b] new tokens.
Tensor causal_conv(const CausalLM::MambaLayer& L, const Tensor& x, Tensor& state, const std::vector<int64_t>& lengths,
                   bool update) {
  const int64_t K = static_cast<int64_t>(L.conv_taps.size()), T = x.dim(1);
  const Tensor window = K > 1 ? concat({state, x}, 1) : x;  // [B, T + K - 1, Cc]
  Tensor acc = mul(window.slice(1, 0, T), L.conv_taps[0]);
  for (int64_t k = 1; k < K; ++k) acc = add(acc, mul(window.slice(1, k, k + T), L.conv_taps[k]));
  if (L.conv_bias.defined()) acc = add(acc, L.conv_bias);
  if (update && K > 1) {
    for (int64_t b = 0; b < static_cast<int64_t>(lengths.size()); ++b) {
      const int64_t n = lengths[b];
      if (n == 0) continue;
      Tensor dst = state.slice(0, b, b + 1);
      copy_into(dst, window.slice(0, b, b + 1).slice(1, n, n + K - 1));
    }
  }
  return acc;
}

// A_log -> A = -exp(A_log) as [heads, state] (Mamba-2: each head's value repeated state times).
Tensor decay_rates(const Tensor& a_log, int64_t heads, int64_t state, bool per_head, Device device) {
  const std::vector<float> logs = a_log.to(Device::cpu()).contiguous().to_vector<float>();
  std::vector<float> a(static_cast<size_t>(heads * state));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t n = 0; n < state; ++n) a[h * state + n] = bl::neg(bl::exp(logs[per_head ? h : h * state + n]));
  return Tensor::from_vector(a, {heads, state}, device);
}

}  // namespace

void CausalLM::load_ssm(const std::map<std::string, Tensor>& tensors, const std::string& source) {
  const ModelConfig& c = config_;
  const bool v2 = c.model_type == "mamba2";
  const WeightSource w(tensors, source, device_);
  const int64_t C = c.hidden_size, V = c.vocab_size, I = c.intermediate_size, N = c.ssm_state_size;
  const int64_t K = c.conv_kernel, H = c.ssm_heads, R = c.time_step_rank, G = c.ssm_groups;
  const int64_t Cc = conv_channels(c);
  const int64_t in_out = v2 ? I + Cc + H : 2 * I;
  const std::string hid = fields("hidden_size", C);
  const std::string inner = v2 ? fields("num_heads", H, "head_dim", c.ssm_head_dim) + ", " +
                                     fields("n_groups", G, "state_size", N) + ", " + hid
                               : fields("intermediate_size", I, "hidden_size", C);
  // Hugging Face names the table backbone.embeddings, the original checkpoints backbone.embedding.
  const std::string embed_name =
      w.has("backbone.embedding.weight") ? "backbone.embedding.weight" : "backbone.embeddings.weight";
  embed_tokens = w.take(embed_name, {V, C}, fields("vocab_size", V, "hidden_size", C));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "backbone.layers." + std::to_string(l) + ".";
    const std::string m = b + "mixer.";
    MambaLayer L;
    L.norm_weight = w.take(b + "norm.weight", {C}, hid);
    L.in_proj = linear(w, m + "in_proj", in_out, C, c.proj_bias, inner);
    const Tensor conv = w.take(m + "conv1d.weight", {Cc, 1, K}, inner + ", " + fields("conv_kernel", K));
    const Tensor taps = conv.reshape({Cc, K}).transpose(0, 1).contiguous();  // [K, Cc]
    for (int64_t k = 0; k < K; ++k) L.conv_taps.push_back(taps.slice(0, k, k + 1).reshape({Cc}).contiguous());
    if (c.conv_bias) L.conv_bias = w.take(m + "conv1d.bias", {Cc}, inner + " (use_conv_bias true)");
    if (v2) {
      L.A = decay_rates(w.take(m + "A_log", {H}, inner), H, N, true, device_);
      L.D = w.take(m + "D", {H}, inner);
      L.dt_bias = w.take(m + "dt_bias", {H}, inner);
      L.gated_norm_weight = w.take(m + "norm.weight", {I}, inner);
    } else {
      const std::string ssm_f = inner + ", " + fields("state_size", N, "time_step_rank", R);
      L.x_proj = linear(w, m + "x_proj", R + 2 * N, I, false, ssm_f);
      L.dt_proj = linear(w, m + "dt_proj", I, R, true, ssm_f);
      L.A = decay_rates(w.take(m + "A_log", {I, N}, ssm_f), I, N, false, device_);
      L.D = w.take(m + "D", {I}, inner);
    }
    L.out_proj = linear(w, m + "out_proj", C, I, c.proj_bias, inner);
    mamba_layers_.push_back(L);
  }
  final_norm_weight = w.take("backbone.norm_f.weight", {C}, hid);
  lm_head = (c.tie_word_embeddings ? embed_tokens
                                   : w.take("lm_head.weight", {V, C}, fields("vocab_size", V, "hidden_size", C)))
                .transpose(0, 1)
                .contiguous();
  lm_head_packed = pack_weight(lm_head);
}

KvCache CausalLM::new_ssm_cache(int64_t batch, int64_t capacity) const {
  BL_CHECK(batch >= 1, "new_cache: batch ", batch, " must be >= 1");
  BL_CHECK(capacity >= 1 && capacity <= config_.max_positions, "new_cache: capacity ", capacity, " must lie in [1, ",
           config_.max_positions, "]");
  const ModelConfig& c = config_;
  KvCache cache;
  cache.capacity_ = capacity;
  cache.lengths_.assign(static_cast<size_t>(batch), 0);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    cache.conv_states.push_back(Tensor::zeros({batch, c.conv_kernel - 1, conv_channels(c)}, DType::f32, device_));
    cache.ssm_states.push_back(
        Tensor::zeros({batch, c.ssm_heads, c.ssm_head_dim, c.ssm_state_size}, DType::f32, device_));
  }
  return cache;
}

Tensor CausalLM::mamba_mixer(const MambaLayer& L, const Tensor& x, int64_t batch, int64_t steps,
                             const std::vector<int64_t>& lengths, Tensor* conv_state, Tensor* ssm_state) const {
  const ModelConfig& c = config_;
  const int64_t I = c.intermediate_size, N = c.ssm_state_size, H = c.ssm_heads, G = c.ssm_groups;
  const int64_t Cc = conv_channels(c), rows = batch * steps;
  const Device dev = device_;
  Tensor fresh_conv, fresh_ssm;
  const bool update = conv_state != nullptr;
  if (!update) {
    fresh_conv = Tensor::zeros({batch, c.conv_kernel - 1, Cc}, DType::f32, dev);
    fresh_ssm = Tensor::zeros({batch, H, c.ssm_head_dim, N}, DType::f32, dev);
    conv_state = &fresh_conv;
    ssm_state = &fresh_ssm;
  }
  const Tensor proj = apply(L.in_proj, x);  // [rows, in_proj outputs]
  if (c.model_type == "mamba") {
    const Tensor conv_in = proj.slice(1, 0, I).contiguous().reshape({batch, steps, I});
    const Tensor z = proj.slice(1, I, 2 * I);
    const Tensor xs = silu(causal_conv(L, conv_in, *conv_state, lengths, update)).reshape({rows, I});
    const Tensor ssm = apply(L.x_proj, xs);  // [rows, R + 2N]
    const int64_t R = c.time_step_rank;
    const Tensor dt = softplus(apply(L.dt_proj, ssm.slice(1, 0, R).contiguous()));
    const Tensor y = selective_scan(c, xs, dt, L.A, ssm.slice(1, R, R + N), ssm.slice(1, R + N, R + 2 * N), L.D,
                                    lengths, steps, *ssm_state);
    return apply(L.out_proj, mul(y, silu(z)));
  }
  const Tensor z = proj.slice(1, 0, I);
  const Tensor conv_in = proj.slice(1, I, I + Cc).contiguous().reshape({batch, steps, Cc});
  Tensor dt = softplus(add(proj.slice(1, I + Cc, I + Cc + H), L.dt_bias));
  if (c.time_step_min > 0.0f) dt = maximum(dt, Tensor::scalar(c.time_step_min, DType::f32, dev));
  if (c.time_step_max < std::numeric_limits<float>::infinity())
    dt = minimum(dt, Tensor::scalar(c.time_step_max, DType::f32, dev));
  const Tensor xbc = silu(causal_conv(L, conv_in, *conv_state, lengths, update)).reshape({rows, Cc});
  const Tensor y = selective_scan(c, xbc.slice(1, 0, I), dt, L.A, xbc.slice(1, I, I + G * N),
                                  xbc.slice(1, I + G * N, I + 2 * G * N), L.D, lengths, steps, *ssm_state);
  return apply(L.out_proj, rms_norm(mul(y, silu(z)), L.gated_norm_weight, c.norm_eps));
}

Tensor CausalLM::run_ssm(const std::vector<std::vector<int32_t>>& seqs, KvCache* cache) const {
  const ModelConfig& c = config_;
  const int64_t B = static_cast<int64_t>(seqs.size());
  BL_CHECK(B >= 1, "CausalLM::forward: no sequences");
  if (cache != nullptr) {
    BL_CHECK(cache->batch() == B, "CausalLM::forward: the cache holds ", cache->batch(), " sequences but ", B,
             " were given");
    BL_CHECK(static_cast<int64_t>(cache->ssm_states.size()) == c.num_layers &&
                 cache->ssm_states[0].device() == device_ &&
                 cache->ssm_states[0].dim(1) == c.ssm_heads && cache->ssm_states[0].dim(3) == c.ssm_state_size,
             "CausalLM::forward: the cache was made for another model or device");
  }
  int64_t T = 0;
  for (const auto& s : seqs) T = std::max<int64_t>(T, static_cast<int64_t>(s.size()));
  BL_CHECK(T >= 1, "CausalLM::forward: every sequence is empty");
  std::vector<int64_t> ids(static_cast<size_t>(B * T), 0), lengths(static_cast<size_t>(B), 0);
  std::vector<uint8_t> valid(static_cast<size_t>(B * T), 0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = static_cast<int64_t>(seqs[b].size());
    if (cache != nullptr)
      BL_CHECK(cache->lengths_[b] + n <= cache->capacity_, "CausalLM::forward: sequence ", b, " would reach ",
               cache->lengths_[b] + n, " tokens, beyond the cache capacity ", cache->capacity_);
    for (int64_t t = 0; t < n; ++t) {
      const int32_t id = seqs[b][t];
      BL_CHECK(id >= 0 && id < c.vocab_size, "CausalLM::forward: token id ", id, " of sequence ", b, " at index ", t,
               " lies outside the vocabulary [0, ", c.vocab_size, ")");
      ids[b * T + t] = id;
      valid[b * T + t] = 1;
    }
    lengths[b] = n;
  }
  const Device dev = device_;
  Tensor h = embedding(embed_tokens, Tensor::from_vector(ids, {B, T}, dev)).reshape({B * T, c.hidden_size});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const MambaLayer& L = mamba_layers_[l];
    Tensor* conv_state = cache != nullptr ? &cache->conv_states[l] : nullptr;
    Tensor* ssm_state = cache != nullptr ? &cache->ssm_states[l] : nullptr;
    h = add(h, mamba_mixer(L, rms_norm(h, L.norm_weight, c.norm_eps), B, T, lengths, conv_state, ssm_state));
  }
  if (cache != nullptr)
    for (int64_t b = 0; b < B; ++b) cache->lengths_[b] += lengths[b];
  h = rms_norm(h, final_norm_weight, c.norm_eps);
  Tensor logits = product(h, lm_head, lm_head_packed.get()).reshape({B, T, c.vocab_size});
  return parts::zero_padding(logits, valid, B, T, dev);
}

}  // namespace bl::models
