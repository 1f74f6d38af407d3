// bitlearn_ml_trees_bench: fit + predict of one estimator on .npy files, timed, as one JSON line.
//
//   bitlearn_ml_trees_bench MODEL X_train.npy y_train.npy X_test.npy y_test.npy [key=value ...]
//                           [--threads N] [--device cpu|cuda]
//   bitlearn_ml_trees_bench MODEL --synthetic ROWS FEATURES regression|classification [...]
//
// --synthetic draws Philox normals (seed 7) and a fixed nonlinear target; the test part is a
// quarter of ROWS more rows.
// Prints {"model", "fit_s", "predict_s", "score", "model_sha256", "pred_sha256", "threads"}.
// Reads float32 (X, 2-d) and float32 (y, 1-d) little-endian C-order .npy files.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bitlearn/io.h"
#include "bitlearn/ml/estimator.h"
#include "core/digest.h"
#include "core/error.h"
#include "contract/rng.h"
#include "core/thread_pool.h"

namespace {

bl::Tensor read_npy(const std::string& path) {
  std::vector<uint8_t> bytes = bl::read_file_bytes(path, "npy file");
  BL_CHECK(bytes.size() >= 10 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0, path, ": not a .npy file");
  const int major = bytes[6];
  size_t header_len, offset;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    offset = 10;
  } else {
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    offset = 12;
  }
  std::string header(reinterpret_cast<const char*>(bytes.data() + offset), header_len);
  BL_CHECK(header.find("'<f4'") != std::string::npos, path, ": expected dtype <f4");
  BL_CHECK(header.find("'fortran_order': False") != std::string::npos, path, ": expected C order");
  size_t open = header.find("'shape': (");
  BL_CHECK(open != std::string::npos, path, ": no shape");
  size_t close = header.find(')', open);
  std::string dims = header.substr(open + 10, close - open - 10);
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string part = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (part.find_first_of("0123456789") != std::string::npos) shape.push_back(std::stoll(part));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  const size_t data_at = offset + header_len;
  BL_CHECK(bytes.size() == data_at + static_cast<size_t>(count) * 4, path, ": size does not match the shape");
  std::vector<float> v(static_cast<size_t>(count));
  std::memcpy(v.data(), bytes.data() + data_at, v.size() * 4);
  return bl::Tensor::from_vector(v, shape);
}

// Train and test parts of a synthetic problem (see the usage above).
void synthetic(int64_t rows, int64_t d, bool classification, bl::Tensor* Xtr, bl::Tensor* ytr, bl::Tensor* Xte,
               bl::Tensor* yte) {
  const int64_t total = rows + rows / 4;
  std::vector<float> x(static_cast<size_t>(total * d)), y(static_cast<size_t>(total));
  for (int64_t i = 0; i < total * d; ++i) x[i] = bl::normal_element(7, 1, static_cast<uint64_t>(i));
  for (int64_t i = 0; i < total; ++i) {
    const float* r = &x[i * d];
    double s = 0.0;
    for (int64_t f = 0; f < d && f < 10; ++f) s += (f % 2 ? -1.0 : 1.0) * (1.0 + 0.1 * f) * r[f];
    s += 1.5 * r[0] * r[1 % d] + 0.3 * bl::normal_element(7, 2, static_cast<uint64_t>(i));
    y[i] = classification ? (s > 0.0 ? 1.0f : 0.0f) : static_cast<float>(s);
  }
  std::vector<float> a(x.begin(), x.begin() + rows * d), b(x.begin() + rows * d, x.end());
  std::vector<float> ya(y.begin(), y.begin() + rows), yb(y.begin() + rows, y.end());
  *Xtr = bl::Tensor::from_vector(a, {rows, d});
  *ytr = bl::Tensor::from_vector(ya, {rows});
  *Xte = bl::Tensor::from_vector(b, {total - rows, d});
  *yte = bl::Tensor::from_vector(yb, {total - rows});
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    BL_CHECK(argc >= 6, "usage: bitlearn_ml_trees_bench MODEL X_train y_train X_test y_test [k=v ...] [--threads N] [--device D]");
    const std::string model = argv[1];
    bl::ml::Params params;
    int threads = 0;
    std::string device = "cpu";
    const bool synth = std::string(argv[2]) == "--synthetic";
    for (int i = 6; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
      else if (a == "--device" && i + 1 < argc) device = argv[++i];
      else {
        size_t eq = a.find('=');
        BL_CHECK(eq != std::string::npos, "argument ", a, ": expected key=value");
        params[a.substr(0, eq)] = a.substr(eq + 1);
      }
    }
    if (threads > 0) bl::set_num_threads(threads);
    bl::Tensor Xtr, ytr, Xte, yte;
    if (synth) {
      synthetic(std::stoll(argv[3]), std::stoll(argv[4]), std::string(argv[5]) == "classification", &Xtr, &ytr,
                &Xte, &yte);
    } else {
      Xtr = read_npy(argv[2]);
      ytr = read_npy(argv[3]);
      Xte = read_npy(argv[4]);
      yte = read_npy(argv[5]);
    }
    if (device != "cpu") Xtr = Xtr.to(bl::Device::parse(device));
    auto est = bl::ml::make_estimator(model, params);
    auto t0 = std::chrono::steady_clock::now();
    est->fit(Xtr, ytr);
    const double fit_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    bl::Tensor pred = est->predict(Xte);
    const double predict_s = seconds_since(t0);
    const double score = est->score(Xte, yte);
    const std::string text = est->to_json_text();
    const std::string msha = bl::sha256_hex(text.data(), text.size());
    const std::string psha = bl::sha256_hex(pred.raw_data(), static_cast<size_t>(pred.numel()) * 4);
    std::printf("{\"model\": \"%s\", \"fit_s\": %.6f, \"predict_s\": %.6f, \"score\": %.6f, "
                "\"model_sha256\": \"%s\", \"pred_sha256\": \"%s\", \"threads\": %d}\n",
                model.c_str(), fit_s, predict_s, score, msha.c_str(), psha.c_str(), bl::num_threads());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bitlearn_ml_trees_bench: %s\n", e.what());
    return 1;
  }
}
