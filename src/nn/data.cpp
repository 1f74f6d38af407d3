// data.cpp: IDX data sets, Fashion-MNIST and deterministic shuffling.
#include "bitlearn/nn/data.h"

#include <numeric>

#include "bitlearn/ops.h"
#include "contract/rng.h"
#include "core/error.h"

namespace bl::nn {

Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path, int64_t classes) {
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);
  BL_CHECK(images.dims.size() == 3, "load_idx_dataset: '", images_path, "' must hold [N, H, W] images, got ",
           images.dims.size(), " dimensions");
  BL_CHECK(labels.dims.size() == 1, "load_idx_dataset: '", labels_path, "' must hold [N] labels, got ",
           labels.dims.size(), " dimensions");
  BL_CHECK(images.dims[0] == labels.dims[0], "load_idx_dataset: ", images.dims[0], " images in '",
           images_path, "' but ", labels.dims[0], " labels in '", labels_path, "'");
  int64_t n = images.dims[0], h = images.dims[1], w = images.dims[2];
  std::vector<int64_t> lab(labels.data.begin(), labels.data.end());
  for (int64_t i = 0; i < n; ++i)
    BL_CHECK(lab[i] < classes, "load_idx_dataset: label ", lab[i], " of sample ", i, " in '",
             labels_path, "' is not below ", classes);
  Dataset d;
  Tensor raw = Tensor::from_vector(images.data, {n, h * w}, DType::u8);
  d.images = bl::div(bl::cast(raw, DType::f32), Tensor::scalar(255.0));
  d.labels = Tensor::from_vector(lab, {n});
  d.height = h;
  d.width = w;
  return d;
}

std::string default_fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

FashionMnist load_fashion_mnist(const std::string& dir) {
  FashionMnist f;
  f.train = load_idx_dataset(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
  f.test = load_idx_dataset(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
  return f;
}

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, uint64_t epoch) {
  BL_CHECK(n >= 0, "shuffled_indices: n must be >= 0, got ", n);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t u = random_u32_element(seed, epoch, static_cast<uint64_t>(i));
    int64_t j = static_cast<int64_t>((u * static_cast<uint64_t>(i + 1)) >> 32);
    std::swap(idx[i], idx[j]);
  }
  return idx;
}

Tensor batch_indices(int64_t n, int64_t batch_size, int64_t step, uint64_t seed) {
  BL_CHECK(batch_size >= 1 && batch_size <= n, "batch_indices: batch_size ", batch_size,
           " must lie in [1, ", n, "]");
  int64_t per_epoch = n / batch_size;
  int64_t epoch = step / per_epoch, b = step % per_epoch;
  // The permutation of the current epoch is kept between calls (steps run in order).
  thread_local int64_t cached_n = -1;
  thread_local uint64_t cached_seed = 0;
  thread_local int64_t cached_epoch = -1;
  thread_local std::vector<int64_t> perm;
  if (cached_n != n || cached_seed != seed || cached_epoch != epoch) {
    perm = shuffled_indices(n, seed, static_cast<uint64_t>(epoch));
    cached_n = n;
    cached_seed = seed;
    cached_epoch = epoch;
  }
  std::vector<int64_t> out(perm.begin() + b * batch_size, perm.begin() + (b + 1) * batch_size);
  return Tensor::from_vector(out, {batch_size});
}

}  // namespace bl::nn
