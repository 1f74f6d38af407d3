// SHA-256 through OpenSSL's EVP interface, and the canonical tensor encoding of digest.h.
#include "core/digest.h"

#include <openssl/evp.h>

#include <cstring>

#include "core/error.h"

// The canonical encoding stores elements little-endian; the hosts bitlearn supports (x86-64,
// AArch64) are little-endian, so element bytes are hashed as they lie in memory.
#if defined(__BYTE_ORDER__) && (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
#error "tensor digests assume a little-endian host"
#endif

namespace bl {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

namespace {
void start_message(EVP_MD_CTX* ctx) {
  BL_CHECK(EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1, "Sha256: EVP_DigestInit_ex failed");
}

// Bytes per element of the dtype names the library uses; 0 for a name it does not know.
size_t known_element_size(std::string_view dtype_name) {
  if (dtype_name == "f32" || dtype_name == "i32") return 4;
  if (dtype_name == "i64" || dtype_name == "f64") return 8;
  if (dtype_name == "f16" || dtype_name == "bf16") return 2;
  if (dtype_name == "u8" || dtype_name == "bool") return 1;
  return 0;
}
}  // namespace

Sha256::Sha256() : state_(new State) {
  state_->ctx = EVP_MD_CTX_new();
  BL_CHECK(state_->ctx != nullptr, "Sha256: EVP_MD_CTX_new failed (out of memory)");
  start_message(state_->ctx);
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::update(const void* data, size_t size) {
  if (size == 0) return;
  BL_CHECK(data != nullptr, "Sha256::update: data is null with size ", size);
  BL_CHECK(EVP_DigestUpdate(state_->ctx, data, size) == 1, "Sha256: EVP_DigestUpdate failed");
}

void Sha256::update_i64_le(int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(u >> (8 * i));
  update(bytes, sizeof bytes);
}

std::array<uint8_t, 32> Sha256::finish() {
  std::array<uint8_t, 32> out{};
  unsigned int len = 0;
  BL_CHECK(EVP_DigestFinal_ex(state_->ctx, out.data(), &len) == 1 && len == out.size(),
           "Sha256: EVP_DigestFinal_ex failed");
  start_message(state_->ctx);
  return out;
}

std::string Sha256::finish_hex() {
  std::array<uint8_t, 32> d = finish();
  return to_hex(d.data(), d.size());
}

std::string to_hex(const uint8_t* bytes, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(2 * size, '0');
  for (size_t i = 0; i < size; ++i) {
    s[2 * i] = kDigits[bytes[i] >> 4];
    s[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return s;
}

std::string sha256_hex(const void* data, size_t size) {
  Sha256 h;
  h.update(data, size);
  return h.finish_hex();
}

std::string tensor_digest(std::string_view dtype_name, const std::vector<int64_t>& shape,
                          const void* data, size_t nbytes) {
  BL_CHECK(!dtype_name.empty(), "tensor_digest: dtype name is empty; expected e.g. \"f32\"");
  for (char c : dtype_name)
    BL_CHECK(c > 0x20 && c < 0x7F, "tensor_digest: dtype name \"", dtype_name,
             "\" must be printable ASCII without spaces");
  // Element count, with the overflow check done before each multiplication.
  int64_t numel = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    BL_CHECK(shape[d] >= 0, "tensor_digest: extent ", d, " of the shape is ", shape[d],
             "; expected >= 0");
    if (shape[d] != 0 && numel > INT64_MAX / shape[d])
      BL_CHECK(false, "tensor_digest: the shape's element count overflows int64");
    numel *= shape[d];
  }
  BL_CHECK(nbytes <= static_cast<uint64_t>(INT64_MAX), "tensor_digest: data size too large");
  size_t element_size = known_element_size(dtype_name);
  if (numel == 0) {
    BL_CHECK(nbytes == 0, "tensor_digest: shape has no elements but data holds ", nbytes, " bytes");
  } else if (element_size != 0) {
    BL_CHECK(static_cast<uint64_t>(numel) <= UINT64_MAX / element_size &&
                 nbytes == static_cast<uint64_t>(numel) * element_size,
             "tensor_digest: dtype ", dtype_name, " with ", numel, " elements needs ",
             static_cast<uint64_t>(numel) * element_size, " bytes of data, got ", nbytes);
  } else {
    BL_CHECK(nbytes >= static_cast<uint64_t>(numel) && nbytes % static_cast<uint64_t>(numel) == 0,
             "tensor_digest: data of ", nbytes, " bytes is not a whole number of bytes for each of ",
             numel, " elements");
  }
  BL_CHECK(nbytes == 0 || data != nullptr, "tensor_digest: data is null with ", nbytes, " bytes");

  Sha256 h;
  const char zero = '\0';
  h.update(kTensorDigestMagic, std::strlen(kTensorDigestMagic));
  h.update(&zero, 1);
  h.update(dtype_name.data(), dtype_name.size());
  h.update(&zero, 1);
  h.update_i64_le(static_cast<int64_t>(shape.size()));
  for (int64_t extent : shape) h.update_i64_le(extent);
  h.update_i64_le(static_cast<int64_t>(nbytes));
  h.update(data, nbytes);
  return h.finish_hex();
}

std::string tensor_digest_f32(const std::vector<int64_t>& shape, const float* data) {
  int64_t numel = 1;
  for (int64_t extent : shape) {
    BL_CHECK(extent >= 0, "tensor_digest_f32: negative extent ", extent, " in the shape");
    BL_CHECK(extent == 0 || numel <= INT64_MAX / 4 / extent,
             "tensor_digest_f32: the shape's byte count overflows int64");
    numel *= extent;
  }
  return tensor_digest("f32", shape, data, static_cast<size_t>(numel) * sizeof(float));
}

}  // namespace bl
