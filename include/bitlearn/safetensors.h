// safetensors.h: reading and writing the safetensors format (Hugging Face model weights).
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of JSON mapping each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data that
// follows the header), an optional "__metadata__" object of strings, then the raw little-endian
// tensor bytes. The reader validates everything against the file size before touching the data.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl {

class SafetensorsFile {
 public:
  // Memory-maps the file; validates the 8-byte header length, the JSON header, every dtype, shape
  // and data_offsets against the file size (no overlap, in range, size = numel * dtype size).
  // Errors name the path and the tensor or field.
  static SafetensorsFile open(const std::string& path);

  // The tensor names in sorted order (without "__metadata__").
  std::vector<std::string> names() const;
  // True when the file holds a tensor of that name.
  bool has(const std::string& name) const;
  // The file's dtype string for the tensor: "F32", "F16", "BF16", "F64", "I64", "I32", "U8", "BOOL", ...
  std::string dtype(const std::string& name) const;
  // The tensor's shape as stored.
  Shape shape(const std::string& name) const;
  // A new CPU tensor: F32 as is, F16/BF16 widened exactly to f32, I32, I64, U8, BOOL natively;
  // F64 or another dtype throws naming the tensor (use get_f64 for F64).
  Tensor get(const std::string& name) const;
  // The values of an F64 tensor (F32 widened exactly), row-major.
  std::vector<double> get_f64(const std::string& name) const;
  // The "__metadata__" strings (empty when the file has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The path the file was opened from (for error messages).
  const std::string& path() const { return path_; }

  struct Entry {
    std::string dtype;
    Shape shape;
    uint64_t begin = 0;  // byte offsets within the data section
    uint64_t end = 0;
  };

 private:
  struct Mapping;
  const Entry& entry(const std::string& name) const;
  const uint8_t* bytes(const Entry& e) const;

  std::string path_;
  std::shared_ptr<Mapping> mapping_;
  uint64_t data_start_ = 0;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Writes the tensors (any device; read back to the host) in name order with the metadata; the same
// tensors always give the same bytes (fixed header formatting, header padded with spaces so the
// data starts 8-byte aligned, tensors packed back to back); atomic write.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace bl
