// digest.h: SHA-256 digests of byte streams and of tensors.
//
// Results are compared across devices and releases by digest, so the bytes that are hashed for a
// tensor are fixed here (the canonical tensor encoding below), independent of memory layout,
// device and host.
//
// Canonical tensor encoding "bitlearn.tensor.v1" (all integers little-endian):
//   the 18 ASCII bytes "bitlearn.tensor.v1" and one 0x00 byte
//   the dtype name in ASCII ("f32", "i32", ...) and one 0x00 byte
//   ndim as int64, then each extent as int64 (outermost first)
//   the element data size in bytes as int64
//   the elements in row-major order, each little-endian
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bl {

// The magic string that opens the canonical tensor encoding.
constexpr const char* kTensorDigestMagic = "bitlearn.tensor.v1";

// Streaming SHA-256 (FIPS 180-4) backed by OpenSSL libcrypto (EVP interface).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Appends bytes to the message.
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Appends v as 8 little-endian bytes.
  void update_i64_le(int64_t v);
  // Ends the message and returns the 32-byte digest; the object then starts a new empty message.
  std::array<uint8_t, 32> finish();
  // finish() as 64 lowercase hexadecimal digits.
  std::string finish_hex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Lowercase hexadecimal spelling of bytes (two digits per byte).
std::string to_hex(const uint8_t* bytes, size_t size);

// SHA-256 of a byte string, as 64 lowercase hex digits.
std::string sha256_hex(const void* data, size_t size);

// SHA-256 (hex) of the canonical tensor encoding above. data holds nbytes of row-major element
// bytes in host order (little-endian on every supported host). Throws bl::Error when the dtype
// name is empty or not printable ASCII, an extent is negative, or nbytes is not numel times an
// element size (nbytes must be 0 when numel is 0).
std::string tensor_digest(std::string_view dtype_name, const std::vector<int64_t>& shape,
                          const void* data, size_t nbytes);

// tensor_digest for contiguous binary32 data: dtype "f32", nbytes = 4 * numel(shape).
std::string tensor_digest_f32(const std::vector<int64_t>& shape, const float* data);

}  // namespace bl
