// data.h: IDX files (MNIST / Fashion-MNIST format), the Fashion-MNIST data set and deterministic
// shuffling by (seed, epoch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bitlearn/tensor.h"

namespace bl::nn {

// An IDX array of unsigned bytes (type code 0x08): its dimensions and row-major data.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};
// Reads an IDX file, gzip-compressed (".gz", read through zlib) or plain. Validates the magic
// (two zero bytes, type 0x08, 1 to 4 dimensions) and that the data size equals the product of the
// dimensions; a wrong or truncated file gives a bl::Error naming the path and the field.
IdxArray read_idx(const std::string& path);

// Images as f32 [N, H * W] scaled to [0, 1] (byte / 255, correctly rounded) and labels i64 [N].
struct Dataset {
  Tensor images;
  Tensor labels;
  int64_t height = 0, width = 0;
  int64_t size() const { return labels.defined() ? labels.dim(0) : 0; }
};
// Builds a Dataset from an images IDX file [N, H, W] and a labels IDX file [N] (labels < classes).
Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path,
                         int64_t classes = 10);

struct FashionMnist {
  Dataset train, test;
};
// The directory of Debian's dataset-fashion-mnist package.
std::string default_fashion_mnist_dir();
// Loads train-{images,labels} and t10k-{images,labels} (*-ubyte.gz) from dir.
FashionMnist load_fashion_mnist(const std::string& dir = default_fashion_mnist_dir());

// A permutation of 0..n-1 that is a pure function of (seed, epoch): Fisher-Yates from i = n-1 down,
// j = floor(u * (i + 1) / 2^32) with u the Philox word i of stream epoch under seed.
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, uint64_t epoch);

// The sample indices of global step `step` for batches of batch_size over n samples: epoch
// step / (n / batch_size), the batch's slice of that epoch's permutation (the remainder of each
// epoch is dropped). Returns an i64 tensor [batch_size] on the CPU.
Tensor batch_indices(int64_t n, int64_t batch_size, int64_t step, uint64_t seed);

}  // namespace bl::nn
