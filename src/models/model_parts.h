// model_parts.h: pieces shared by the transformer (causal_lm.cpp) and state-space (mamba.cpp)
// halves of CausalLM: weight lookup with shape checks, linear layers, the row-count-independent
// product, and reading a folder of safetensors files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bitlearn/models.h"

namespace bl::models::parts {

// Looks tensors up by name, checks their dtype and shape against the config, moves them to the device.
class WeightSource {
 public:
  WeightSource(const std::map<std::string, Tensor>& tensors, const std::string& source, Device device)
      : tensors_(tensors), source_(source), device_(device) {}

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  // The tensor `name` on the device; throws bl::Error naming it and config_fields when it is
  // missing, not f32, not of the expected shape, or holds NaN or an infinity.
  Tensor take(const std::string& name, const Shape& expected, const std::string& config_fields) const;

 private:
  const std::map<std::string, Tensor>& tensors_;
  std::string source_;
  Device device_;
};

// "a va" or "a va, b vb": config fields for error messages.
std::string fields(const std::string& a, int64_t va, const std::string& b = "", int64_t vb = 0);

// A Hugging Face Linear (weight [out, in]), kept transposed as [in, out]; with a bias when asked.
CausalLM::Linear linear(const WeightSource& w, const std::string& name, int64_t out, int64_t in, bool bias,
                        const std::string& why);

// x [M, K] times w [K, N]: the skinny kernel for few rows, else the weight-stationary GEMM with
// `packed` (w packed by pack_weight; CPU) or bl::matmul; all are the contract GEMM, so the bits of a
// row never depend on M.
Tensor product(const Tensor& x, const Tensor& w, const PackedMatrix* packed = nullptr);

// logits [B, T, vocab] with the rows of padding positions (valid[b * T + t] == 0) set to +0.0;
// logits itself when every position is valid.
Tensor zero_padding(const Tensor& logits, const std::vector<uint8_t>& valid, int64_t B, int64_t T, Device dev);

// w [K, N] (contiguous) packed for the CPU weight-stationary GEMM; null for a weight on a GPU.
std::shared_ptr<const PackedMatrix> pack_weight(const Tensor& w);

// x [N, in] -> [N, out] through a Linear (bias added when present).
Tensor apply(const CausalLM::Linear& l, const Tensor& x);

// The rotary tables cos, sin [max_positions, head_dim] as Hugging Face computes them in float32.
void rope_tables(const ModelConfig& c, Tensor* cos_out, Tensor* sin_out);

// Every tensor of dir/model.safetensors, or of the shards of dir/model.safetensors.index.json
// (each shard name checked by shard_path before any file is opened).
std::map<std::string, Tensor> read_safetensors_dir(const std::string& dir);

// dir/name for the weight_map entry `key` of the index file; throws bl::Error naming the entry when
// the name is empty, absolute, has a '..' component, or resolves (symbolic links followed) outside
// dir. The one exception: a Hugging Face hub snapshot folder <repo>/snapshots/<rev> may link to
// <repo>/blobs/.
std::string shard_path(const std::string& dir, const std::string& index, const std::string& key,
                       const std::string& name);

// Throws bl::Error naming source, the tensor and the element when an f32 tensor holds NaN or an
// infinity (other dtypes pass).
void check_finite(const Tensor& t, const std::string& name, const std::string& source);

}  // namespace bl::models::parts
