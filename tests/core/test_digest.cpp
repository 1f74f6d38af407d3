// SHA-256 (FIPS 180-2 vectors) and the canonical tensor digest (core/digest.h).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/digest.h"
#include "core/error.h"

namespace {

// FIPS 180-2, Appendix B: the one-block, two-block and long-message examples, plus the empty
// message (also listed in the NIST example set).
TEST(Sha256, FipsVectors) {
  EXPECT_EQ(bl::sha256_hex("abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(bl::sha256_hex("", 0),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char* m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(bl::sha256_hex(m448, std::strlen(m448)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAStreamedInPieces) {
  bl::Sha256 h;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  EXPECT_EQ(h.finish_hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FinishStartsANewMessage) {
  bl::Sha256 h;
  h.update("ab");
  h.update("c");
  EXPECT_EQ(h.finish_hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(h.finish_hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Sabotage arm: one changed bit of the message must change the digest.
TEST(Sha256, SabotageOneBitChangesDigest) {
  EXPECT_NE(bl::sha256_hex("abb", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, Hex) {
  const uint8_t bytes[] = {0x00, 0x0f, 0xa0, 0xff};
  EXPECT_EQ(bl::to_hex(bytes, 4), "000fa0ff");
  EXPECT_EQ(bl::to_hex(bytes, 0), "");
}

// Golden values computed independently from the documented encoding (a few lines of Python with
// hashlib and struct.pack('<q', ...)), so they pin the byte layout, not just this implementation.
TEST(TensorDigest, GoldenValues) {
  const float m[6] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(bl::tensor_digest("f32", {2, 3}, m, sizeof m),
            "9c90a5e6948dba605ec5d9b5d737eb0356ffe0b7db79c2f8d7d0b1f589bd5fc5");
  const float scalar = 1.5f;
  EXPECT_EQ(bl::tensor_digest_f32({}, &scalar),
            "e01571aae352eab6e0c62e2ab5359dc7fb80c27abc031021234b40df36114cec");
  EXPECT_EQ(bl::tensor_digest_f32({2, 3}, m), bl::tensor_digest("f32", {2, 3}, m, sizeof m));
}

TEST(TensorDigest, ShapeAndDtypeChangeTheDigest) {
  const float m[6] = {1, 2, 3, 4, 5, 6};
  std::string base = bl::tensor_digest("f32", {2, 3}, m, sizeof m);
  // Same bytes, other shapes.
  EXPECT_NE(base, bl::tensor_digest("f32", {3, 2}, m, sizeof m));
  EXPECT_NE(base, bl::tensor_digest("f32", {6}, m, sizeof m));
  EXPECT_NE(base, bl::tensor_digest("f32", {1, 2, 3}, m, sizeof m));
  // Same bytes, another dtype of the same size.
  EXPECT_NE(base, bl::tensor_digest("i32", {2, 3}, m, sizeof m));
  // Same shape and dtype, one element changed by one ulp.
  float m2[6] = {1, 2, 3, 4, 5, 6};
  uint32_t u;
  std::memcpy(&u, &m2[5], 4);
  ++u;
  std::memcpy(&m2[5], &u, 4);
  EXPECT_NE(base, bl::tensor_digest("f32", {2, 3}, m2, sizeof m2));
  // -0.0 and +0.0 are different bits and must give different digests.
  const float pz = 0.0f, nz = -0.0f;
  EXPECT_NE(bl::tensor_digest_f32({1}, &pz), bl::tensor_digest_f32({1}, &nz));
  // Empty tensors of different shapes differ.
  EXPECT_NE(bl::tensor_digest("f32", {0, 3}, nullptr, 0), bl::tensor_digest("f32", {3, 0}, nullptr, 0));
  // Unknown dtype names are allowed when the data divides evenly, and still change the digest.
  EXPECT_NE(base, bl::tensor_digest("q4x8", {2, 3}, m, sizeof m));
  EXPECT_NE(bl::tensor_digest("q4x8", {3}, m, sizeof m), bl::tensor_digest("q4x8", {2}, m, sizeof m));
  // Deterministic.
  EXPECT_EQ(base, bl::tensor_digest("f32", {2, 3}, m, sizeof m));
}

TEST(TensorDigest, BadInputThrows) {
  const float m[6] = {1, 2, 3, 4, 5, 6};
  EXPECT_THROW(bl::tensor_digest("", {6}, m, sizeof m), bl::Error);
  EXPECT_THROW(bl::tensor_digest("f 32", {6}, m, sizeof m), bl::Error);
  EXPECT_THROW(bl::tensor_digest("f32", {-1, 6}, m, sizeof m), bl::Error);
  EXPECT_THROW(bl::tensor_digest("f32", {7}, m, sizeof m), bl::Error);      // size mismatch
  EXPECT_THROW(bl::tensor_digest("i64", {6}, m, sizeof m), bl::Error);      // 8 bytes each
  EXPECT_THROW(bl::tensor_digest("f32", {0}, m, sizeof m), bl::Error);      // empty with data
  EXPECT_THROW(bl::tensor_digest("odd", {4}, m, 6), bl::Error);             // 6 bytes / 4 elems
  EXPECT_THROW(bl::tensor_digest("f32", {6}, nullptr, 24), bl::Error);
  EXPECT_THROW(bl::tensor_digest("u8", {1ll << 40, 1ll << 40}, m, 1), bl::Error);  // overflow
  try {
    bl::tensor_digest("f32", {7}, m, sizeof m);
  } catch (const bl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor_digest"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("28"), std::string::npos) << e.what();
  }
}

}  // namespace
