// Tests of the safetensors reader and writer: round trip, deterministic bytes, and clear errors on
// every kind of corrupt file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include "bitlearn/io.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"

namespace bl {
namespace {

std::string temp_path(const std::string& stem) {
  return ::testing::TempDir() + "bl_st_" + stem + "_" + std::to_string(::getpid()) + ".safetensors";
}

// A file made of a header length, the given header text and the given number of data bytes.
std::string write_raw(const std::string& stem, const std::string& header, size_t data_bytes,
                      uint64_t header_len_override = 0) {
  std::vector<uint8_t> bytes;
  const uint64_t n = header_len_override != 0 ? header_len_override : header.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>((n >> (8 * i)) & 0xFF));
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) bytes.push_back(static_cast<uint8_t>(i));
  const std::string path = temp_path(stem);
  write_file_atomic(path, bytes);
  return path;
}

// Expects SafetensorsFile::open(path) to throw a bl::Error whose message holds every needle.
void expect_open_error(const std::string& path, const std::vector<std::string>& needles) {
  try {
    SafetensorsFile::open(path);
    FAIL() << "no error for " << path;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
  }
  std::remove(path.c_str());
}

TEST(Safetensors, RoundTripAllDtypes) {
  std::map<std::string, Tensor> t;
  t["a.weight"] = Tensor::from_vector(std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-40f}, {2, 3});
  t["b"] = Tensor::from_vector(std::vector<int32_t>{1, -2, 3}, {3});
  t["c"] = Tensor::from_vector(std::vector<int64_t>{int64_t(1) << 40, -7}, {2, 1});
  t["d"] = Tensor::from_vector(std::vector<uint8_t>{0, 255, 7}, {3}, DType::u8);
  t["e"] = Tensor::from_vector(std::vector<uint8_t>{1, 0}, {2}, DType::boolean);
  t["empty"] = Tensor::zeros({0, 4});
  t["scalar"] = Tensor::scalar(4.5);
  // A strided view is written as its row-major contents.
  t["view"] = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  const std::string path = temp_path("roundtrip");
  save_safetensors(path, t, {{"format", "pt"}, {"note", "quote \" and \\ and \n"}});
  SafetensorsFile f = SafetensorsFile::open(path);
  std::vector<std::string> expected_names;
  for (const auto& kv : t) expected_names.push_back(kv.first);
  EXPECT_EQ(f.names(), expected_names);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.metadata().at("note"), "quote \" and \\ and \n");
  EXPECT_EQ(f.dtype("a.weight"), "F32");
  EXPECT_EQ(f.dtype("e"), "BOOL");
  EXPECT_EQ(f.shape("c"), (Shape{2, 1}));
  EXPECT_EQ(f.shape("scalar"), (Shape{}));
  EXPECT_TRUE(f.has("b"));
  EXPECT_FALSE(f.has("zzz"));
  for (const auto& kv : t) {
    Tensor back = f.get(kv.first);
    EXPECT_EQ(back.dtype(), kv.second.dtype()) << kv.first;
    EXPECT_EQ(back.shape(), kv.second.shape()) << kv.first;
    EXPECT_EQ(back.digest(), kv.second.digest()) << kv.first;
  }
  EXPECT_EQ(f.get_f64("a.weight")[2], 3.25);
  std::remove(path.c_str());
}

TEST(Safetensors, SameTensorsGiveSameBytes) {
  std::map<std::string, Tensor> t;
  t["z"] = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3});
  t["a"] = Tensor::from_vector(std::vector<uint8_t>{9}, {1}, DType::u8);
  const std::string p1 = temp_path("det1"), p2 = temp_path("det2");
  save_safetensors(p1, t, {{"k", "v"}});
  save_safetensors(p2, t, {{"k", "v"}});
  const auto b1 = read_file_bytes(p1), b2 = read_file_bytes(p2);
  EXPECT_EQ(b1, b2);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b1[i];
  EXPECT_EQ((8 + n) % 8, 0u);  // data starts 8-byte aligned
  const std::string header(b1.begin() + 8, b1.begin() + 8 + n);
  EXPECT_EQ(header.find("{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
                        "\"data_offsets\":[0,1]},\"z\":{\"dtype\":\"F32\",\"shape\":[3],"
                        "\"data_offsets\":[1,13]}}"),
            0u)
      << header;
  std::remove(p1.c_str());
  std::remove(p2.c_str());
}

TEST(Safetensors, WidensHalfAndBfloat16Exactly) {
  // F16: 1.0 (0x3C00), -2.0 (0xC000), smallest subnormal (0x0001 = 2^-24), max (0xFBFF... 65504),
  // +inf (0x7C00); BF16: 1.0 (0x3F80), -0.0 (0x8000).
  const std::string header =
      "{\"h\":{\"dtype\":\"F16\",\"shape\":[5],\"data_offsets\":[0,10]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[10,14]}}";
  std::vector<uint8_t> bytes;
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>((n >> (8 * i)) & 0xFF));
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (uint16_t v : {0x3C00, 0xC000, 0x0001, 0x7BFF, 0x7C00, 0x3F80, 0x8000}) {
    bytes.push_back(static_cast<uint8_t>(v & 0xFF));
    bytes.push_back(static_cast<uint8_t>(v >> 8));
  }
  const std::string path = temp_path("half");
  write_file_atomic(path, bytes);
  SafetensorsFile f = SafetensorsFile::open(path);
  const auto h = f.get("h").to_vector<float>();
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_EQ(h[2], 5.9604644775390625e-08f);
  EXPECT_EQ(h[3], 65504.0f);
  EXPECT_TRUE(std::isinf(h[4]));
  const auto b = f.get("b").to_vector<float>();
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_TRUE(b[1] == 0.0f && std::signbit(b[1]));
  std::remove(path.c_str());
}

TEST(Safetensors, TruncatedFile) {
  // A whole file cut short inside its data.
  std::map<std::string, Tensor> t;
  t["w"] = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  const std::string full = temp_path("full");
  save_safetensors(full, t);
  auto bytes = read_file_bytes(full);
  bytes.resize(bytes.size() - 3);
  write_file_atomic(full, bytes);
  expect_open_error(full, {"'w'", "beyond"});
  // An empty header is not JSON.
  expect_open_error(write_raw("short", "", 0, 0), {"not valid JSON"});
  // Shorter than the header length field.
  const std::string path = temp_path("tiny");
  write_file_atomic(path, std::string("abc"));
  expect_open_error(path, {"too short"});
}

TEST(Safetensors, HeaderLengthBeyondFile) {
  expect_open_error(write_raw("hdrlen", "{}", 0, 1000), {"header length 1000", "past the end"});
}

TEST(Safetensors, OffsetsOutOfRange) {
  expect_open_error(write_raw("range", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8),
                    {"'w'", "data_offsets", "beyond"});
  expect_open_error(write_raw("backward", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8),
                    {"'w'", "begin after end"});
}

TEST(Safetensors, OverlappingTensors) {
  expect_open_error(write_raw("overlap",
                              "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                              "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                              12),
                    {"'b'", "overlaps tensor 'a'"});
}

TEST(Safetensors, BadJson) {
  expect_open_error(write_raw("badjson", "{\"w\": [1, 2", 0), {"not valid JSON"});
  expect_open_error(write_raw("notobj", "[1, 2]", 0), {"must be a JSON object"});
  expect_open_error(write_raw("nodtype", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                    {"'w'", "'dtype'"});
  expect_open_error(write_raw("negshape", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4),
                    {"'w'", "'shape'"});
  expect_open_error(write_raw("meta", "{\"__metadata__\":{\"a\":1}}", 0), {"__metadata__", "'a'"});
}

TEST(Safetensors, UnknownDtype) {
  expect_open_error(write_raw("dtype", "{\"w\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                    {"'w'", "unknown dtype 'Q4'"});
}

TEST(Safetensors, ShapeSizeMismatch) {
  expect_open_error(write_raw("size", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8),
                    {"'w'", "spans 8 bytes", "needs 12"});
}

TEST(Safetensors, GetErrorsNameTheTensor) {
  const std::string path =
      write_raw("get", "{\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                       "\"q\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[8,10]}}", 10);
  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_THROW(f.get("d"), Error);
  EXPECT_EQ(f.get_f64("d").size(), 1u);
  try {
    f.get("q");  // bytes 8 and 9 are not 0/1
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'q'"), std::string::npos) << e.what();
  }
  try {
    f.get("missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'missing'"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Safetensors, ReadsFixtureModel) {
  const std::string dir = std::string(BITLEARN_SOURCE_DIR) + "/tests/data/hf/gpt2/";
  SafetensorsFile f = SafetensorsFile::open(dir + "reference.safetensors");
  EXPECT_EQ(f.dtype("logits_f64"), "F64");
  EXPECT_EQ(f.shape("logits_f64"), (Shape{48, 512}));
  EXPECT_EQ(f.get_f64("logits_f64").size(), 48u * 512u);
  EXPECT_EQ(f.get("input_ids").dtype(), DType::i64);
}

}  // namespace
}  // namespace bl
