// IDX reading (validation errors), Fashion-MNIST loading and deterministic shuffling.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "core/error.h"
#include "bitlearn/io.h"
#include "bitlearn/nn.h"

namespace bl::nn {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "bl_idx_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, size_t data_bytes, uint8_t type = 0x08) {
  std::vector<uint8_t> b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    b.push_back(d >> 24);
    b.push_back((d >> 16) & 255);
    b.push_back((d >> 8) & 255);
    b.push_back(d & 255);
  }
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<uint8_t>(i * 7));
  return b;
}

std::string error_of(const std::string& path) {
  try {
    read_idx(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NnData, IdxReadsPlainAndGzip) {
  std::string plain = temp_path("ok.idx");
  write_file_atomic(plain, idx_bytes({2, 3}, 6));
  IdxArray a = read_idx(plain);
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data[5], 35);
  std::string gz = temp_path("ok.idx.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  std::vector<uint8_t> bytes = idx_bytes({4}, 4);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  EXPECT_EQ(read_idx(gz).data, (std::vector<uint8_t>{0, 7, 14, 21}));
}

TEST(NnData, IdxRejectsBadFiles) {
  std::string p = temp_path("bad.idx");
  write_file_atomic(p, idx_bytes({2, 3}, 5));
  EXPECT_NE(error_of(p).find("truncated"), std::string::npos) << error_of(p);
  write_file_atomic(p, idx_bytes({2, 3}, 7));
  EXPECT_NE(error_of(p).find("trailing"), std::string::npos) << error_of(p);
  write_file_atomic(p, idx_bytes({2}, 2, 0x0D));
  EXPECT_NE(error_of(p).find("element type"), std::string::npos) << error_of(p);
  std::vector<uint8_t> b = idx_bytes({2}, 2);
  b[0] = 1;
  write_file_atomic(p, b);
  EXPECT_NE(error_of(p).find("magic"), std::string::npos) << error_of(p);
  write_file_atomic(p, std::vector<uint8_t>{0, 0, 8, 3, 0, 0});
  EXPECT_NE(error_of(p).find("dimension list"), std::string::npos) << error_of(p);
  EXPECT_NE(error_of(temp_path("missing")).find("cannot open"), std::string::npos);
}

TEST(NnData, FashionMnistLoads) {
  std::string dir = default_fashion_mnist_dir();
  if (::access((dir + "/t10k-labels-idx1-ubyte.gz").c_str(), R_OK) != 0)
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  FashionMnist f = load_fashion_mnist(dir);
  EXPECT_EQ(f.train.images.shape(), (Shape{60000, 784}));
  EXPECT_EQ(f.test.images.shape(), (Shape{10000, 784}));
  EXPECT_EQ(f.test.labels.shape(), (Shape{10000}));
  EXPECT_EQ(f.train.labels.to_vector<int64_t>()[0], 9);  // the first training image is an ankle boot
  EXPECT_LE(bl::amax(f.train.images).item(), 1.0);
  EXPECT_GE(bl::amin(f.train.images).item(), 0.0);
}

TEST(NnData, ShuffleIsAPermutationFixedBySeedAndEpoch) {
  std::vector<int64_t> a = shuffled_indices(1000, 5, 2);
  EXPECT_EQ(a, shuffled_indices(1000, 5, 2));
  EXPECT_NE(a, shuffled_indices(1000, 5, 3));
  EXPECT_NE(a, shuffled_indices(1000, 6, 2));
  std::vector<int64_t> s = a;
  std::sort(s.begin(), s.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(s[i], i);
  // Step 12 with batches of 100 over 1000 samples is batch 2 of epoch 1.
  std::vector<int64_t> b = batch_indices(1000, 100, 12, 5).to_vector<int64_t>();
  std::vector<int64_t> e1 = shuffled_indices(1000, 5, 1);
  EXPECT_EQ(b, std::vector<int64_t>(e1.begin() + 200, e1.begin() + 300));
}

}  // namespace
}  // namespace bl::nn
