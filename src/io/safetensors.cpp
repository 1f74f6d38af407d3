// safetensors.cpp: the safetensors reader (memory-mapped, validated) and writer (see
// bitlearn/safetensors.h).
#include "bitlearn/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "bitlearn/io.h"
#include "core/error.h"

namespace bl {
namespace {

// Bytes per element of every safetensors dtype we recognise (0 = unknown).
uint64_t safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"I64", 8},  {"U64", 8}, {"F64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

// Exact widening of an IEEE binary16 bit pattern to binary32.
uint32_t f16_bits_to_f32_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {
    if (mantissa == 0) return sign;
    // Subnormal half: normalise the mantissa into a normal float.
    uint32_t e = 113;  // 127 - 15 + 1
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    mantissa &= 0x3FFu;
    return sign | (e << 23) | (mantissa << 13);
  }
  if (exponent == 31) return sign | 0x7F800000u | (mantissa << 13);
  return sign | ((exponent + 112) << 23) | (mantissa << 13);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

const char* safetensors_dtype_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return "F32";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::u8: return "U8";
    case DType::boolean: return "BOOL";
  }
  return "?";
}

}  // namespace

// The read-only memory map of the whole file.
struct SafetensorsFile::Mapping {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  ~Mapping() {
    if (data != nullptr && size > 0) ::munmap(const_cast<uint8_t*>(data), size);
  }
};

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  const std::string where = "safetensors " + path;
  const int fd = open_input_file(path, "safetensors", /*regular_only=*/true);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(where + ": cannot stat the file");
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    throw Error(detail::concat(where, ": file of ", file_size,
                               " bytes is too short for the 8-byte header length"));
  }
  void* p = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  BL_CHECK(p != MAP_FAILED, where, ": cannot map the file (", std::strerror(errno), ")");

  SafetensorsFile file;
  file.path_ = path;
  file.mapping_ = std::make_shared<Mapping>();
  file.mapping_->data = static_cast<const uint8_t*>(p);
  file.mapping_->size = file_size;
  const uint8_t* base = file.mapping_->data;

  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | base[i];
  BL_CHECK(header_len <= file_size - 8, where, ": header length ", header_len,
           " runs past the end of the file (", file_size, " bytes)");
  file.data_start_ = 8 + header_len;
  const uint64_t data_size = file_size - file.data_start_;

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(reinterpret_cast<const char*>(base + 8),
                                   reinterpret_cast<const char*>(base + 8 + header_len));
  } catch (const nlohmann::json::exception& e) {
    throw Error(detail::concat(where, ": the header is not valid JSON (", e.what(), ")"));
  }
  BL_CHECK(header.is_object(), where, ": the header must be a JSON object");

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      BL_CHECK(v.is_object(), where, ": __metadata__ must be an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        BL_CHECK(m.value().is_string(), where, ": __metadata__ field '", m.key(),
                 "' must be a string");
        file.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string tw = where + ": tensor '" + name + "'";
    BL_CHECK(v.is_object(), tw, ": entry must be an object");
    BL_CHECK(v.contains("dtype") && v["dtype"].is_string(), tw, ": field 'dtype' missing or not a string");
    BL_CHECK(v.contains("shape") && v["shape"].is_array(), tw, ": field 'shape' missing or not an array");
    BL_CHECK(v.contains("data_offsets") && v["data_offsets"].is_array() && v["data_offsets"].size() == 2,
             tw, ": field 'data_offsets' must be an array [begin, end]");
    Entry e;
    e.dtype = v["dtype"].get<std::string>();
    const uint64_t elem = safetensors_dtype_size(e.dtype);
    BL_CHECK(elem != 0, tw, ": field 'dtype' has the unknown dtype '", e.dtype, "'");
    uint64_t numel = 1;
    // The product of the non-zero extents must fit an int64 as well: shape arithmetic downstream
    // multiplies extents in any order, and [0, 2^62, 2^62] (no bytes) would overflow it.
    uint64_t nonzero = 1;
    for (const auto& d : v["shape"]) {
      BL_CHECK(d.is_number_unsigned(), tw, ": field 'shape' must hold non-negative integers, got ",
               d.dump());
      const uint64_t extent = d.get<uint64_t>();
      BL_CHECK(extent <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), tw,
               ": field 'shape' extent ", extent, " is too large");
      BL_CHECK(extent == 0 || numel <= std::numeric_limits<uint64_t>::max() / extent, tw,
               ": field 'shape' element count overflows");
      numel *= extent;
      if (extent != 0) {
        BL_CHECK(nonzero <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / extent, tw,
                 ": field 'shape' ", v["shape"].dump(), " has an extent product beyond int64");
        nonzero *= extent;
      }
      e.shape.push_back(static_cast<int64_t>(extent));
    }
    BL_CHECK(numel <= std::numeric_limits<uint64_t>::max() / elem, tw,
             ": field 'shape' byte size overflows");
    for (const auto& o : v["data_offsets"]) {
      BL_CHECK(o.is_number_unsigned(), tw, ": field 'data_offsets' must hold non-negative integers, got ",
               o.dump());
    }
    e.begin = v["data_offsets"][0].get<uint64_t>();
    e.end = v["data_offsets"][1].get<uint64_t>();
    BL_CHECK(e.begin <= e.end, tw, ": field 'data_offsets' [", e.begin, ", ", e.end,
             "] has begin after end");
    BL_CHECK(e.end <= data_size, tw, ": field 'data_offsets' [", e.begin, ", ", e.end,
             "] lies beyond the ", data_size, " data bytes of the file");
    BL_CHECK(e.end - e.begin == numel * elem, tw, ": field 'data_offsets' spans ", e.end - e.begin,
             " bytes but shape ", shape_str(e.shape), " of ", e.dtype, " needs ", numel * elem);
    file.entries_[name] = e;
  }

  // No two tensors may share bytes.
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> spans;
  for (const auto& kv : file.entries_) {
    if (kv.second.end > kv.second.begin) spans.push_back({{kv.second.begin, kv.second.end}, kv.first});
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    BL_CHECK(spans[i].first.first >= spans[i - 1].first.second, where, ": tensor '", spans[i].second,
             "' field 'data_offsets' overlaps tensor '", spans[i - 1].second, "'");
  }
  return file;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& kv : entries_) out.push_back(kv.first);
  return out;
}

bool SafetensorsFile::has(const std::string& name) const { return entries_.count(name) != 0; }

const SafetensorsFile::Entry& SafetensorsFile::entry(const std::string& name) const {
  auto it = entries_.find(name);
  BL_CHECK(it != entries_.end(), "safetensors ", path_, ": no tensor named '", name, "'");
  return it->second;
}

const uint8_t* SafetensorsFile::bytes(const Entry& e) const {
  return mapping_->data + data_start_ + e.begin;
}

std::string SafetensorsFile::dtype(const std::string& name) const { return entry(name).dtype; }

Shape SafetensorsFile::shape(const std::string& name) const { return entry(name).shape; }

Tensor SafetensorsFile::get(const std::string& name) const {
  const Entry& e = entry(name);
  const uint8_t* src = bytes(e);
  const uint64_t nbytes = e.end - e.begin;
  if (e.dtype == "F32" || e.dtype == "I32" || e.dtype == "I64" || e.dtype == "U8") {
    const DType dt = e.dtype == "F32"   ? DType::f32
                     : e.dtype == "I32" ? DType::i32
                     : e.dtype == "I64" ? DType::i64
                                        : DType::u8;
    Tensor t = Tensor::empty(e.shape, dt);
    if (nbytes > 0) std::memcpy(t.raw_data(), src, nbytes);
    return t;
  }
  if (e.dtype == "BOOL") {
    for (uint64_t i = 0; i < nbytes; ++i) {
      BL_CHECK(src[i] <= 1, "safetensors ", path_, ": tensor '", name, "' of dtype BOOL holds the byte ",
               static_cast<int>(src[i]), " at element ", i, " (expected 0 or 1)");
    }
    Tensor t = Tensor::empty(e.shape, DType::boolean);
    if (nbytes > 0) std::memcpy(t.raw_data(), src, nbytes);
    return t;
  }
  if (e.dtype == "F16" || e.dtype == "BF16") {
    Tensor t = Tensor::empty(e.shape, DType::f32);
    auto* out = static_cast<uint32_t*>(t.raw_data());
    const uint64_t n = nbytes / 2;
    const bool bf16 = e.dtype == "BF16";
    for (uint64_t i = 0; i < n; ++i) {
      const uint16_t h = static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8));
      out[i] = bf16 ? (static_cast<uint32_t>(h) << 16) : f16_bits_to_f32_bits(h);
    }
    return t;
  }
  throw Error(detail::concat("safetensors ", path_, ": tensor '", name, "' has dtype ", e.dtype,
                             ", which get() does not convert (F32, F16, BF16, I32, I64, U8, BOOL; use "
                             "get_f64 for F64)"));
}

std::vector<double> SafetensorsFile::get_f64(const std::string& name) const {
  const Entry& e = entry(name);
  const uint8_t* src = bytes(e);
  const uint64_t nbytes = e.end - e.begin;
  if (e.dtype == "F64") {
    std::vector<double> out(nbytes / 8);
    if (nbytes > 0) std::memcpy(out.data(), src, nbytes);
    return out;
  }
  if (e.dtype == "F32") {
    std::vector<float> f(nbytes / 4);
    if (nbytes > 0) std::memcpy(f.data(), src, nbytes);
    return std::vector<double>(f.begin(), f.end());
  }
  throw Error(detail::concat("safetensors ", path_, ": tensor '", name, "' has dtype ", e.dtype,
                             "; get_f64 reads F64 or F32"));
}

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<std::vector<uint8_t>> blobs;
  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first_m = true;
    for (const auto& kv : metadata) {
      if (!first_m) header += ",";
      first_m = false;
      header += "\"" + json_escape(kv.first) + "\":\"" + json_escape(kv.second) + "\"";
    }
    header += "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const auto& kv : tensors) {
    BL_CHECK(kv.first != "__metadata__", "save_safetensors ", path,
             ": '__metadata__' is reserved and cannot name a tensor");
    BL_CHECK(kv.second.defined(), "save_safetensors ", path, ": tensor '", kv.first, "' is undefined");
    const Tensor host = kv.second.to(Device::cpu()).contiguous();
    const uint64_t nbytes = static_cast<uint64_t>(host.numel()) * host.element_size();
    std::vector<uint8_t> blob(nbytes);
    if (nbytes > 0) std::memcpy(blob.data(), host.raw_data(), nbytes);
    if (!first) header += ",";
    first = false;
    header += "\"" + json_escape(kv.first) + "\":{\"dtype\":\"" + safetensors_dtype_of(host.dtype()) +
              "\",\"shape\":[";
    for (size_t d = 0; d < host.shape().size(); ++d) {
      if (d > 0) header += ",";
      header += std::to_string(host.shape()[d]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + nbytes) + "]}";
    offset += nbytes;
    blobs.push_back(std::move(blob));
  }
  header += "}";
  while ((8 + header.size()) % 8 != 0) header += ' ';

  std::vector<uint8_t> out;
  out.reserve(8 + header.size() + offset);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>((n >> (8 * i)) & 0xFF));
  out.insert(out.end(), header.begin(), header.end());
  for (const auto& b : blobs) out.insert(out.end(), b.begin(), b.end());
  write_file_atomic(path, out, "safetensors");
}

}  // namespace bl
