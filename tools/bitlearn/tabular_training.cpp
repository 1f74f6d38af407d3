// tabular_training.cpp: `bitlearn train` on the user's data (CSV, image folder, IDX files) and
// `bitlearn predict` with a checkpoint of a CSV file.
#include "tabular_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "bitlearn/csv.h"
#include "bitlearn/io.h"
#include "bitlearn/lm.h"
#include "bitlearn/ml/metrics.h"
#include "bitlearn/ml/progress.h"
#include "bitlearn/nn.h"
#include "bitlearn/nn/image_folder.h"
#include "bitlearn/safetensors.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model_file.h"

namespace bl::cli {

namespace {

// The checkpoint metadata entry that describes the data and the network (JSON), for predict and resume.
constexpr const char* kSpecKey = "train.data";
// The Philox stream (the "epoch" of nn::shuffled_indices) that draws the held-out split.
constexpr uint64_t kSplitStream = ~uint64_t{0};
constexpr int64_t kEvalBatch = 512;
constexpr int64_t kMaxClasses = 1000;

// Inputs minus the training split's mean, divided by its standard deviation: buffers "mean" and
// "scale" [1, d], saved in the checkpoint with the weights.
class Standardize : public nn::Module {
 public:
  Standardize(const std::vector<float>& mean, const std::vector<float>& scale) {
    const int64_t d = static_cast<int64_t>(mean.size());
    mean_ = register_buffer("mean", Tensor::from_vector(mean, {1, d}));
    scale_ = register_buffer("scale", Tensor::from_vector(scale, {1, d}));
  }
  ag::Var forward(const ag::Var& x) override { return ag::div(ag::sub(x, mean_), scale_); }

 private:
  ag::Var mean_, scale_;
};

// A CSV row of T * F features as a sequence of T time steps of F features, step-major: time step t
// is columns t*F .. t*F+F-1. [n, T * F] -> [n, T, F], for the LSTM.
class StepView : public nn::Module {
 public:
  StepView(int64_t steps, int64_t features) : steps_(steps), features_(features) {}
  ag::Var forward(const ag::Var& x) override { return ag::reshape(x, Shape{-1, steps_, features_}); }

 private:
  int64_t steps_, features_;
};

// What a checkpoint was trained on and how its network is built.
struct Spec {
  std::string source = "csv";  // csv, images (a folder) or idx
  std::string task = "classification";  // or regression (csv only)
  std::string model = "mlp", optimizer;
  std::vector<int64_t> hidden;  // mlp
  int64_t channels_cnn = 0;     // cnn: channels; lstm: hidden size
  int64_t inputs = 0;           // features per row (H * W * C for images)
  int64_t time_steps = 0;       // lstm on a CSV: time steps per row (inputs / time_steps features each)
  int64_t height = 0, width = 0, channels = 0;
  std::string target;
  std::vector<std::string> features, classes;
  std::vector<std::string> input_columns;  // with categories: the CSV columns the features come from
  std::vector<Categorical> categories;     // one-hot encoded columns (features holds the indicators)
  float y_mean = 0, y_scale = 1;  // regression: the network predicts (y - y_mean) / y_scale

  int64_t outputs() const { return task == "regression" ? 1 : static_cast<int64_t>(classes.size()); }
  std::string json() const {
    nlohmann::ordered_json j;
    j["source"] = source;
    j["task"] = task;
    j["model"] = model;
    j["optimizer"] = optimizer;
    if (model == "mlp") j["hidden"] = hidden;
    else if (model == "lstm") j["hidden_size"] = channels_cnn;
    else j["channels"] = channels_cnn;
    j["inputs"] = inputs;
    if (time_steps > 0) j["time_steps"] = time_steps;
    if (source != "csv") {
      j["image"] = {height, width, channels};
    } else {
      j["features"] = features;
      j["target"] = target;
    }
    if (!categories.empty()) {
      j["input_columns"] = input_columns;
      j["categories"] = nlohmann::ordered_json::array();
      for (const Categorical& c : categories) j["categories"].push_back({{"column", c.column}, {"values", c.values}});
    }
    if (task == "regression") j["target_moments"] = {float_to_text(y_mean), float_to_text(y_scale)};
    else j["classes"] = classes;
    return j.dump();
  }
  static Spec parse(const std::string& text, const std::string& path) {
    Spec s;
    try {
      nlohmann::json j = nlohmann::json::parse(text);
      s.source = j.at("source").get<std::string>();
      s.task = j.at("task").get<std::string>();
      s.model = j.at("model").get<std::string>();
      s.optimizer = j.at("optimizer").get<std::string>();
      if (s.model == "mlp") s.hidden = j.at("hidden").get<std::vector<int64_t>>();
      else if (s.model == "lstm") s.channels_cnn = j.at("hidden_size").get<int64_t>();
      else s.channels_cnn = j.at("channels").get<int64_t>();
      s.inputs = j.at("inputs").get<int64_t>();
      if (j.contains("time_steps")) s.time_steps = j.at("time_steps").get<int64_t>();
      if (s.source != "csv") {
        const auto hwc = j.at("image").get<std::vector<int64_t>>();
        BL_CHECK(hwc.size() == 3, path, ": metadata '", kSpecKey, "' has a bad image size");
        s.height = hwc[0];
        s.width = hwc[1];
        s.channels = hwc[2];
      } else {
        s.features = j.at("features").get<std::vector<std::string>>();
        s.target = j.at("target").get<std::string>();
        if (j.contains("categories")) {
          s.input_columns = j.at("input_columns").get<std::vector<std::string>>();
          for (const auto& c : j.at("categories"))
            s.categories.push_back({c.at("column").get<std::string>(), c.at("values").get<std::vector<std::string>>()});
        }
      }
      if (s.task == "regression") {
        const auto m = j.at("target_moments").get<std::vector<std::string>>();
        BL_CHECK(m.size() == 2, path, ": metadata '", kSpecKey, "' has a bad target_moments");
        s.y_mean = std::strtof(m[0].c_str(), nullptr);
        s.y_scale = std::strtof(m[1].c_str(), nullptr);
      } else {
        s.classes = j.at("classes").get<std::vector<std::string>>();
      }
    } catch (const nlohmann::json::exception& e) {
      throw Error(detail::concat(path, ": metadata '", kSpecKey, "' is not a valid description (", e.what(), ")"));
    }
    BL_CHECK(s.inputs >= 1 && (s.task == "regression" || s.classes.size() >= 2) &&
                 (s.source != "csv" || s.features.size() == size_t(s.inputs)) &&
                 (s.source != "csv" || s.model != "lstm" || (s.time_steps >= 1 && s.inputs % s.time_steps == 0)),
             path, ": metadata '", kSpecKey, "' is inconsistent");
    return s;
  }
  Shape input_shape() const {
    // lstm: each image row is one time step of width x channels features; a CSV row is reshaped by
    // the network itself (StepView, after the standardization of its columns).
    if (model == "lstm" && source != "csv") return Shape{-1, height, width * (channels > 0 ? channels : 1)};
    return model == "cnn" ? Shape{-1, height, width, channels > 0 ? channels : 1} : Shape{-1, inputs};
  }
};

std::shared_ptr<nn::Module> build_model(const Spec& s, uint64_t seed, const std::vector<float>& mean,
                                        const std::vector<float>& scale) {
  const int64_t k = s.outputs();
  if (s.model == "cnn") return nn::make_cnn(s.channels_cnn, k, seed, s.height, s.channels > 0 ? s.channels : 1);
  if (s.model == "lstm" && s.source != "csv")
    return std::make_shared<nn::LstmClassifier>(s.width * (s.channels > 0 ? s.channels : 1), s.channels_cnn, k, seed);
  if (s.model == "lstm") {  // CSV sequences: standardize each column, then [n, T, F] into the LSTM
    const int64_t f = s.inputs / s.time_steps;
    auto net = std::make_shared<nn::Sequential>();
    net->add(std::make_shared<Standardize>(mean, scale));
    net->add(std::make_shared<StepView>(s.time_steps, f));
    net->add(std::make_shared<nn::LstmClassifier>(f, s.channels_cnn, k, seed));
    return net;
  }
  auto mlp = nn::make_mlp(s.inputs, s.hidden, k, seed);
  if (s.source != "csv") return mlp;
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<Standardize>(mean, scale));
  net->add(mlp);
  return net;
}

struct Loaded {
  nn::Dataset data;  // images = the features [n, d] (f32), labels i64 [n]
  std::vector<std::string> classes, features;
  std::vector<std::string> inputs;       // the CSV columns of the features (before one-hot)
  std::vector<Categorical> categories;   // one-hot encoded columns
  int64_t channels = 0;
};

// Refuses a missing value (NaN) among the features, naming its column and row.
void check_no_missing(const Tensor& X, const std::vector<std::string>& features, const std::string& source) {
  const int64_t n = X.dim(0), d = X.dim(1);
  const float* x = X.data<float>();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < d; ++j)
      BL_CHECK(!std::isnan(x[r * d + j]), source, ": feature column '", features[static_cast<size_t>(j)],
               "' is missing on data row ", r + 1, " (line ", r + 2,
               "); the neural trainer takes no missing values (fill them in or drop the row or column)");
}

// xy's features and labels into `out`: class indices by name (out.classes empty: this file's
// classes, ascending; else those, which every label must be among), or a regression's values.
Loaded labelled(const CsvXy& xy, Loaded out, const std::string& target, const std::string& path, bool regression) {
  out.features = xy.feature_names;
  out.data = nn::Dataset{};
  out.data.images = xy.X;
  if (regression) {
    BL_CHECK(xy.label_names.empty(), path, ": target column '", target, "' holds text ('", xy.label_names[0],
             "', ...); --task regression needs a numeric target");
    out.data.labels = xy.y;
    return out;
  }
  const int64_t n = xy.y.dim(0);
  const float* y = xy.y.data<float>();
  // Each row's class name: a text label as it is, a number in its shortest text.
  std::vector<std::string> names(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r)
    names[r] = xy.label_names.empty() ? float_to_text(y[r]) : xy.label_names[static_cast<size_t>(y[r])];
  if (out.classes.empty()) {
    if (!xy.label_names.empty()) {
      out.classes = xy.label_names;
    } else {  // numbers: ascending by value
      std::vector<float> v(y, y + n);
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      BL_CHECK(static_cast<int64_t>(v.size()) <= kMaxClasses, path, ": target column '", target, "' has ", v.size(),
               " distinct values; a classifier takes at most ", kMaxClasses, " classes (is it a continuous target?)");
      for (float c : v) out.classes.push_back(float_to_text(c));
    }
    BL_CHECK(out.classes.size() >= 2, path, ": target column '", target, "' holds one class only ('", out.classes[0],
             "'); a classifier needs at least two (--task regression for a numeric target)");
  }
  std::map<std::string, int64_t> index;
  for (size_t k = 0; k < out.classes.size(); ++k) index[out.classes[k]] = static_cast<int64_t>(k);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    auto it = index.find(names[r]);
    BL_CHECK(it != index.end(), path, ": class '", names[r], "' of data row ", r + 1,
             " is not one of the training classes");
    labels[r] = it->second;
  }
  out.data.labels = Tensor::from_vector(labels, {n});
  return out;
}

// The features of a table as `bitlearn fit` takes them: `inputs` (the CSV columns), the categorical
// ones replaced by their indicator columns.
CsvXy table_xy(CsvTable table, const std::string& target, const std::vector<std::string>& inputs,
               const std::vector<Categorical>& categories, const std::string& source) {
  std::vector<std::string> features = inputs;
  if (!categories.empty()) table = one_hot(table, categories, features, source);
  CsvXy xy = csv_to_xy(table, target, features, source);
  check_no_missing(xy.X, xy.feature_names, source);
  return xy;
}

// A training CSV of features and a class (or value) column: every column but the target and
// `ignore`, the `categorical` ones one-hot encoded as `bitlearn fit --categorical` does.
Loaded load_csv(const std::string& path, const std::string& target, const std::vector<std::string>& ignore,
                const std::vector<std::string>& categorical, bool regression) {
  CsvTable table = read_table(path);
  Loaded out;
  out.inputs = select_features(table, target, {}, ignore, path);
  out.categories = find_categories(table, categorical, out.inputs, path);
  return labelled(table_xy(table, target, out.inputs, out.categories, path), out, target, path, regression);
}

// A held-out CSV with the training data's columns, categories and classes (labels must be among them).
Loaded load_held_out_csv(const std::string& path, const std::string& target, const Loaded& training, bool regression) {
  Loaded out = training;
  CsvXy xy = table_xy(read_table(path), target, training.inputs, training.categories, path);
  return labelled(xy, out, target, path, regression);
}

Loaded load_idx(const std::string& images, const std::string& labels) {
  Loaded out;
  out.data = nn::load_idx_dataset(images, labels, 256);
  std::vector<int64_t> y = out.data.labels.to_vector<int64_t>();
  const int64_t k = *std::max_element(y.begin(), y.end()) + 1;
  BL_CHECK(k >= 2, labels, ": every label is 0; a classifier needs at least two classes");
  for (int64_t c = 0; c < k; ++c) out.classes.push_back(std::to_string(c));
  out.channels = 1;
  return out;
}

Loaded load_folder(const std::string& dir, const std::vector<std::string>& classes) {
  nn::ImageFolder f = nn::load_image_folder(dir, classes);
  Loaded out;
  out.data = f.data;
  out.classes = f.classes;
  out.channels = f.channels;
  return out;
}

nn::Dataset take_rows(const nn::Dataset& d, std::vector<int64_t> rows) {
  std::sort(rows.begin(), rows.end());  // the file's order within each part
  const int64_t n = static_cast<int64_t>(rows.size());
  Tensor idx = Tensor::from_vector(rows, {n});
  nn::Dataset out = d;
  out.images = bl::index_select(d.images, 0, idx);
  out.labels = bl::index_select(d.labels, 0, idx);
  return out;
}

// The held-out split: the first round(fraction * n) entries of the permutation drawn from (seed,
// kSplitStream) are validation rows, the rest training rows, each part in the file's order.
void split_rows(const nn::Dataset& all, float fraction, uint64_t seed, nn::Dataset& train, nn::Dataset& val) {
  const int64_t n = all.size();
  const int64_t n_val = static_cast<int64_t>(std::floor(static_cast<double>(fraction) * static_cast<double>(n) + 0.5));
  BL_CHECK(n_val >= 1 && n_val < n, "--val-fraction ", fraction, " of ", n, " rows leaves ", n_val,
           " validation rows and ", n - n_val, " training rows; each part needs at least one");
  std::vector<int64_t> perm = nn::shuffled_indices(n, seed, kSplitStream);
  val = take_rows(all, std::vector<int64_t>(perm.begin(), perm.begin() + n_val));
  train = take_rows(all, std::vector<int64_t>(perm.begin() + n_val, perm.end()));
}

// Per-feature mean and standard deviation (population) of the training rows, in binary64 summed in
// row order, each rounded once to binary32; a constant feature gets scale 1.
void feature_moments(const Tensor& X, std::vector<float>& mean, std::vector<float>& scale) {
  const int64_t n = X.dim(0), d = X.dim(1);
  const float* x = X.data<float>();
  mean.assign(static_cast<size_t>(d), 0.0f);
  scale.assign(static_cast<size_t>(d), 1.0f);
  for (int64_t j = 0; j < d; ++j) {
    double s = 0;
    for (int64_t r = 0; r < n; ++r) s += x[r * d + j];
    const double m = s / static_cast<double>(n);
    double ss = 0;
    for (int64_t r = 0; r < n; ++r) ss += (x[r * d + j] - m) * (x[r * d + j] - m);
    const double sd = std::sqrt(ss / static_cast<double>(n));
    mean[static_cast<size_t>(j)] = static_cast<float>(m);
    if (sd > 0) scale[static_cast<size_t>(j)] = static_cast<float>(sd);
  }
}

struct Evaluation {
  double loss = 0;
  std::vector<int64_t> predicted;  // classification: the argmax class of each row
  std::vector<float> values;       // regression: each row's output (standardized units)
};

// The mean loss (cross-entropy, or the squared error for regression; each batch's mean weighted by
// its rows, summed in batch order) and each row's prediction, in evaluation mode.
Evaluation evaluate(nn::Module& model, const nn::Dataset& d, const Shape& shape, bool regression) {
  ag::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  Evaluation e;
  const int64_t n = d.size();
  for (int64_t start = 0; start < n; start += kEvalBatch) {
    const int64_t end = std::min(n, start + kEvalBatch);
    ag::Var logits = model.forward(ag::Var(d.images.slice(0, start, end).reshape(shape)));
    Tensor y = d.labels.slice(0, start, end);
    if (regression) {
      e.loss += nn::mse_loss(logits, ag::Var(y.reshape({-1, 1}))).item() * static_cast<double>(end - start);
      std::vector<float> v = logits.value().to(Device::cpu()).contiguous().to_vector<float>();
      e.values.insert(e.values.end(), v.begin(), v.end());
      continue;
    }
    e.loss += nn::cross_entropy(logits, y).item() * static_cast<double>(end - start);
    std::vector<int64_t> p = bl::argmax(logits.value(), 1).to(Device::cpu()).to_vector<int64_t>();
    e.predicted.insert(e.predicted.end(), p.begin(), p.end());
  }
  e.loss /= static_cast<double>(n);
  model.train(was_training);
  return e;
}

void print_report(const std::vector<std::string>& classes, const std::vector<int64_t>& truth,
                  const std::vector<int64_t>& predicted, const char* part) {
  std::vector<double> t(truth.begin(), truth.end()), p(predicted.begin(), predicted.end()), labels;
  for (size_t k = 0; k < classes.size(); ++k) labels.push_back(static_cast<double>(k));
  ml::ClassificationMetrics m = ml::classification_metrics(t, p, labels);
  size_t w = 12;
  for (const std::string& c : classes) w = std::max(w, c.size());
  std::printf("%s report (%zu rows):\n%-*s  precision  recall      f1  support\n", part, truth.size(),
              static_cast<int>(w), "class");
  for (const ml::ClassMetrics& c : m.per_class)
    std::printf("%-*s  %9.4f  %6.4f  %6.4f  %7lld\n", static_cast<int>(w),
                classes[static_cast<size_t>(c.label)].c_str(), c.precision, c.recall, c.f1,
                static_cast<long long>(c.support));
  std::printf("%-*s  %9.4f  %6.4f  %6.4f  %7zu\n", static_cast<int>(w), "macro avg", m.macro_precision,
              m.macro_recall, m.macro_f1, truth.size());
  std::printf("%-*s  %9.4f  %6.4f  %6.4f  %7zu\n", static_cast<int>(w), "weighted avg", m.weighted_precision,
              m.weighted_recall, m.weighted_f1, truth.size());
  std::printf("%s accuracy: %.4f\n", part, m.accuracy);
}

// "FILE.svg" for "FILE.safetensors" (or FILE + ".svg" without an extension).
std::string beside(const std::string& path, const std::string& ext) {
  std::filesystem::path p(path);
  return p.has_extension() ? p.replace_extension(ext).string() : path + ext;
}

struct StopRun {};  // thrown by the step callback at --stop-at

}  // namespace

bool is_user_data(const std::string& data) {
  std::error_code ec;
  if (data.empty()) return false;
  if (!std::filesystem::is_directory(data, ec)) return true;
  return !std::filesystem::exists(data + "/train-images-idx3-ubyte.gz", ec);
}

std::vector<int64_t> hidden_widths(int64_t width, int64_t depth) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < depth; ++i) out.push_back(std::max<int64_t>(1, width >> std::min<int64_t>(i, 62)));
  return out;
}

float default_lr(const std::string& optimizer) {
  return optimizer == "sgd" || optimizer == "momentum" ? 0.05f : 1e-3f;
}

std::unique_ptr<nn::Optimizer> make_optimizer(const std::string& name, const nn::NamedVars& params, float lr) {
  if (name == "sgd") return std::make_unique<nn::SGD>(params, lr);
  if (name == "momentum") return std::make_unique<nn::SGD>(params, lr, 0.9f, true, 5e-4f);
  if (name == "adam") return std::make_unique<nn::Adam>(params, lr);
  if (name == "adamw") return std::make_unique<nn::AdamW>(params, lr, 0.9f, 0.999f, 1e-8f, 1e-4f);
  throw Error("--optimizer must be sgd, momentum, adam or adamw, got '" + name + "'");
}

void run_user_data_training(const UserDataOptions& o) {
  BL_CHECK(o.model == "mlp" || o.model == "cnn" || o.model == "lstm", "--model ", o.model,
           " trains on Fashion-MNIST only; --data FILE.csv, an image folder or IDX files take mlp, cnn or lstm");
  BL_CHECK(o.task == "classification" || o.task == "regression", "--task must be classification or regression, got '",
           o.task, "'");
  BL_CHECK(o.val_fraction > 0 && o.val_fraction < 1, "--val-fraction must lie strictly between 0 and 1, got ",
           o.val_fraction);
  BL_CHECK(o.stop_at == 0 || !o.checkpoint.empty(), "--stop-at needs --checkpoint (the run resumes from it)");
  BL_CHECK(o.steps == 0 || o.epochs == 0, "give --steps or --epochs, not both");
  std::error_code ec;
  BL_CHECK(std::filesystem::exists(o.data, ec), "--data ", o.data, ": no such file or folder");
  const bool folder = std::filesystem::is_directory(o.data, ec);
  const bool idx = !o.labels.empty();
  const bool regression = o.task == "regression";
  Spec spec;
  spec.model = o.model;
  spec.task = o.task;
  Loaded all, held;
  if (idx || folder) {
    BL_CHECK(!regression, "--task regression takes a CSV file (--data FILE.csv --target COLUMN)");
    BL_CHECK(o.target.empty(), "--target names a CSV column; ",
             idx ? "IDX files take --labels" : "an image folder's classes are its subfolders");
    BL_CHECK(o.ignore.empty() && o.categorical.empty(), o.ignore.empty() ? "--categorical" : "--ignore",
             " names CSV columns; --data ", o.data, " is not a CSV file");
  }
  if (idx) {
    BL_CHECK(!folder, "--labels goes with an IDX images file, but --data ", o.data, " is a folder");
    BL_CHECK(o.test.empty(), "--test is read for CSV files and image folders; IDX files take --val-fraction");
    spec.source = "idx";
    all = load_idx(o.data, o.labels);
  } else if (folder) {
    spec.source = "images";
    all = load_folder(o.data, {});
    if (!o.test.empty()) held = load_folder(o.test, all.classes);
  } else {
    BL_CHECK(!o.target.empty(), "--data ", o.data, " is read as a CSV file and needs --target COLUMN (the ",
             regression ? "value to predict" : "class column", ")");
    all = load_csv(o.data, o.target, o.ignore, o.categorical, regression);
    if (!o.test.empty()) held = load_held_out_csv(o.test, o.target, all, regression);
    spec.features = all.features;
    if (!all.categories.empty()) {
      spec.input_columns = all.inputs;
      spec.categories = all.categories;
    }
    spec.target = o.target;
  }
  spec.classes = all.classes;
  spec.inputs = all.data.images.dim(1);
  if (spec.source != "csv") {
    spec.height = all.data.height;
    spec.width = all.data.width;
    spec.channels = all.channels;
    if (!o.test.empty())
      BL_CHECK(held.data.height == spec.height && held.data.width == spec.width && held.channels == spec.channels,
               "--test ", o.test, " holds ", held.data.width, "x", held.data.height, "x", held.channels,
               " images but --data ", o.data, " holds ", spec.width, "x", spec.height, "x", spec.channels);
  }
  if (o.model == "cnn")
    BL_CHECK(spec.source != "csv" && spec.height == spec.width && spec.height % 4 == 0,
             "--model cnn takes square images (grey or colour) whose side is a multiple of 4; ",
             spec.source == "csv" ? std::string("a CSV file is a table (use --model mlp)")
                                  : detail::concat("these are ", spec.width, "x", spec.height, "x", spec.channels,
                                                   " (width x height x channels)"));
  BL_CHECK(o.time_steps == 0 || (o.model == "lstm" && spec.source == "csv"),
           "--time-steps goes with --model lstm on a CSV file (images give one time step per image row)");
  if (o.model == "lstm" && spec.source == "csv") {
    BL_CHECK(o.time_steps > 0, "--model lstm on a CSV file needs --time-steps T: each row's ", spec.inputs,
             " feature columns are T time steps of n_features / T features, step-major (time step t is feature "
             "columns t*F .. t*F+F-1)");
    BL_CHECK(spec.inputs % o.time_steps == 0, "--time-steps ", o.time_steps, " does not divide the ", spec.inputs,
             " feature columns of ", o.data, "; each row must hold T time steps of the same number of features");
    BL_CHECK(spec.categories.empty(), "--categorical with --model lstm: the one-hot columns would break the time "
             "step layout; encode the categories per time step in the CSV");
    spec.time_steps = o.time_steps;
  }
  nn::Dataset train, val;
  if (o.test.empty()) {
    split_rows(all.data, o.val_fraction, o.seed, train, val);
  } else {
    train = all.data;
    val = held.data;
  }
  const bool tabular = spec.source == "csv";
  std::vector<float> mean, scale;
  if (tabular) feature_moments(train.images, mean, scale);
  Tensor val_targets = val.labels;  // regression: the values in their own units, for the report
  if (regression) {
    std::vector<float> m, sd;
    feature_moments(train.labels.reshape({-1, 1}), m, sd);
    spec.y_mean = m[0];
    spec.y_scale = sd[0];
    auto standardized = [&](const Tensor& y) {
      return bl::div(bl::sub(y, Tensor::scalar(spec.y_mean)), Tensor::scalar(spec.y_scale));
    };
    train.labels = standardized(train.labels);
    val.labels = standardized(val.labels);
  }
  if (o.model == "mlp")
    spec.hidden = hidden_widths(o.width > 0 ? o.width : (tabular ? 64 : 256), o.depth > 0 ? o.depth : 2);
  else
    spec.channels_cnn = o.width > 0 ? o.width : (o.model == "lstm" ? 64 : 16);
  spec.optimizer = !o.optimizer.empty() ? o.optimizer
                   : o.model == "cnn"   ? "momentum"
                   : o.model == "lstm"  ? "adam"
                                        : "adamw";

  const Device device = Device::parse(o.device);
  std::shared_ptr<nn::Module> model = build_model(spec, o.seed, mean, scale);
  model->to(device);
  const float lr = o.lr > 0                                            ? o.lr
                   : o.model == "lstm" && spec.optimizer == "adam" ? 3e-3f  // as on Fashion-MNIST
                                                                   : default_lr(spec.optimizer);
  std::unique_ptr<nn::Optimizer> opt = make_optimizer(spec.optimizer, model->named_parameters(), lr);
  nn::TrainConfig cfg;
  cfg.data_seed = o.seed;
  cfg.batch_size = std::min(train.size(), o.batch > 0 ? o.batch : (tabular || o.model != "mlp" ? 64 : 128));
  cfg.steps = o.steps > 0    ? o.steps
              : o.epochs > 0 ? o.epochs * (train.size() / cfg.batch_size)
                             : (tabular ? 1000 : 2000);
  cfg.input_shape = spec.input_shape();
  cfg.schedule = nn::cosine_lr(lr, std::min<int64_t>(50, cfg.steps / 10), cfg.steps, 0.0f);
  if (o.model == "cnn") cfg.clip_norm = 5.0f;
  if (o.model == "lstm") cfg.clip_norm = 1.0f;
  BL_CHECK(o.stop_at == 0 || o.stop_at < cfg.steps, "--stop-at ", o.stop_at, " must be below the run's ", cfg.steps,
           " steps");
  // Checkpoints are written here (not by the training loop) so that each carries the data description.
  cfg.checkpoint_path = o.checkpoint;
  cfg.checkpoint_every = 0;
  cfg.resume = o.resume;
  const std::map<std::string, std::string> meta{{"rng.data_seed", std::to_string(o.seed)}, {kSpecKey, spec.json()}};
  cfg.checkpoint_metadata = meta;
  if (regression)  // mean squared error of the standardized target, one output column
    cfg.loss = [](const ag::Var& output, const Tensor& target) {
      return nn::mse_loss(output, ag::Var(target.reshape({-1, 1})));
    };
  if (o.resume && !o.checkpoint.empty() && std::filesystem::exists(o.checkpoint, ec)) {
    const auto m = SafetensorsFile::open(o.checkpoint).metadata();
    for (const auto& [key, value] : meta) {
      auto it = m.find(key);
      BL_CHECK(it != m.end() && it->second == value, "--resume: checkpoint '", o.checkpoint, "' was trained ",
               key == kSpecKey ? "on other data or another network" : "with another --seed", " (its '", key,
               "' differs)");
    }
  }
  train.images = train.images.to(device);
  train.labels = train.labels.to(device);
  val.images = val.images.to(device);
  val.labels = val.labels.to(device);

  std::printf("model %s (%lld parameters), optimizer %s, device %s, threads %d, steps %lld, batch %lld\n",
              o.model.c_str(), static_cast<long long>(model->num_parameters()), spec.optimizer.c_str(),
              device.str().c_str(), bl::num_threads(), static_cast<long long>(cfg.steps),
              static_cast<long long>(cfg.batch_size));
  const char* unit = tabular ? "rows" : "images";
  const char* part = o.test.empty() ? "validation" : "test";
  std::printf("data %s: %lld training %s, %lld %s %s, ", o.data.c_str(), static_cast<long long>(train.size()), unit,
              static_cast<long long>(val.size()), part, unit);
  if (tabular && spec.time_steps > 0)
    std::printf("%lld features (%lld time steps of %lld), target '%s'", static_cast<long long>(spec.inputs),
                static_cast<long long>(spec.time_steps), static_cast<long long>(spec.inputs / spec.time_steps),
                o.target.c_str());
  else if (tabular) std::printf("%lld features, target '%s'", static_cast<long long>(spec.inputs), o.target.c_str());
  else std::printf("%lldx%lldx%lld", static_cast<long long>(spec.width), static_cast<long long>(spec.height),
                   static_cast<long long>(spec.channels));
  if (regression) std::printf(", regression (mean squared error of the standardized target)\n");
  else std::printf(", %zu classes\n", spec.classes.size());
  std::fflush(stdout);

  const int64_t eval_every = std::max<int64_t>(1, cfg.steps / 50);
  std::vector<lm::StepRecord> curve;
  double window = 0;
  int64_t window_n = 0;
  bool first = true;
  auto t0 = std::chrono::steady_clock::now();
  cfg.on_step = [&](int64_t step, float loss) {
    if (first && step > 0)
      std::printf("resumed from %s after step %lld\n", o.checkpoint.c_str(), static_cast<long long>(step));
    first = false;
    window += loss;
    ++window_n;
    const int64_t done = step + 1;
    const bool print = done % 100 == 0 || done == cfg.steps;
    if (print || done % eval_every == 0) {
      lm::StepRecord r;  // the train loss: the mean over the steps since the previous point
      r.step = done;
      r.loss = static_cast<float>(window / static_cast<double>(window_n));
      r.val_loss = static_cast<float>(evaluate(*model, val, cfg.input_shape, regression).loss);
      curve.push_back(r);
      if (print)
        std::printf("step %6lld  loss %.4f  %s loss %.4f\n", static_cast<long long>(done), r.loss, part, r.val_loss);
      std::fflush(stdout);
      window = 0;
      window_n = 0;
    }
    const bool stop = o.stop_at > 0 && done == o.stop_at;
    const bool periodic = o.checkpoint_every > 0 && done % o.checkpoint_every == 0;
    if (!o.checkpoint.empty() && done < cfg.steps && (stop || periodic))
      nn::save_checkpoint(o.checkpoint, *model, *opt, done, meta);
    if (stop) throw StopRun{};
  };
  nn::TrainResult result;
  try {
    result = nn::train_classifier(*model, *opt, train, cfg);
  } catch (const StopRun&) {
    std::printf("stopped after step %lld; checkpoint %s (--resume continues)\n", static_cast<long long>(o.stop_at),
                o.checkpoint.c_str());
    return;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu steps run in %.2f s\n", result.losses.size(), secs);
  if (!o.checkpoint.empty()) {
    nn::save_checkpoint(o.checkpoint, *model, *opt, cfg.steps, meta);
    std::printf("checkpoint %s\n", o.checkpoint.c_str());
    if (!curve.empty()) {
      const std::string svg = beside(o.checkpoint, ".svg");
      write_file_atomic(svg, lm::loss_curve_svg(curve), "loss curve");
      std::printf("loss curve %s\n", svg.c_str());
    }
  }
  Evaluation e = evaluate(*model, val, cfg.input_shape, regression);
  if (regression) {
    std::vector<float> truth = val_targets.to_vector<float>();
    std::vector<double> t(truth.begin(), truth.end()), p;
    for (float v : e.values) p.push_back(static_cast<double>(v) * spec.y_scale + spec.y_mean);
    ml::RegressionMetrics m = ml::regression_metrics(t, p);
    std::printf("%s report (%zu rows): R^2 %.4f  MAE %.6g  RMSE %.6g  max error %.6g\n", part, t.size(), m.r2, m.mae,
                m.rmse, m.max_error);
    return;
  }
  print_report(spec.classes, val.labels.to(Device::cpu()).to_vector<int64_t>(), e.predicted, part);
}

bool predict_with_checkpoint(const std::string& path, const std::string& data, const std::string& out,
                             const std::string& output) {
  std::map<std::string, std::string> meta;
  try {
    meta = SafetensorsFile::open(path).metadata();
  } catch (const Error&) {
    return false;
  }
  auto it = meta.find(kSpecKey);
  if (it == meta.end()) return false;
  Spec spec = Spec::parse(it->second, path);
  BL_CHECK(spec.source == "csv", path, ": a checkpoint trained on images; predict reads CSV rows, so it takes "
           "checkpoints of `bitlearn train --data FILE.csv`");
  const bool regression = spec.task == "regression";
  BL_CHECK(output == "predict" || (output == "proba" && !regression), "--output ", output, ": a ",
           regression ? "regression checkpoint gives predict" : "classifier checkpoint gives predict (class names) or proba");
  std::shared_ptr<nn::Module> model = build_model(spec, 0, std::vector<float>(spec.features.size(), 0.0f),
                                                  std::vector<float>(spec.features.size(), 1.0f));
  std::unique_ptr<nn::Optimizer> opt = make_optimizer(spec.optimizer, model->named_parameters(), 1.0f);
  nn::load_checkpoint(path, *model, *opt);
  CsvXy xy = table_xy(read_table(data), "", spec.categories.empty() ? spec.features : spec.input_columns,
                      spec.categories, data);
  ag::NoGradGuard no_grad;
  model->eval();
  const int64_t n = xy.X.dim(0), k = static_cast<int64_t>(spec.classes.size());
  std::vector<float> proba;
  std::vector<int64_t> predicted;
  for (int64_t start = 0; start < n; start += kEvalBatch) {
    Tensor logits = model->forward(ag::Var(xy.X.slice(0, start, std::min(n, start + kEvalBatch)))).value();
    if (regression) {  // back to the target's units: output * scale + mean, in binary32
      Tensor v = bl::add(bl::mul(logits, Tensor::scalar(spec.y_scale)), Tensor::scalar(spec.y_mean));
      std::vector<float> p = v.contiguous().to_vector<float>();
      proba.insert(proba.end(), p.begin(), p.end());
      ml::report_progress("predict rows", std::min(n, start + kEvalBatch), n);
      continue;
    }
    std::vector<float> p = bl::softmax(logits, 1).contiguous().to_vector<float>();
    std::vector<int64_t> a = bl::argmax(logits, 1).to_vector<int64_t>();
    proba.insert(proba.end(), p.begin(), p.end());
    predicted.insert(predicted.end(), a.begin(), a.end());
    ml::report_progress("predict rows", std::min(n, start + kEvalBatch), n);
  }
  if (regression) {
    write_csv(out, {spec.target}, Tensor::from_vector(proba, {n}));
    return true;
  }
  if (output == "proba") {
    std::vector<std::string> header;
    for (const std::string& c : spec.classes) header.push_back("proba_" + c);
    write_csv(out, header, Tensor::from_vector(proba, {n, k}));
    return true;
  }
  std::string text = csv_field(spec.target) + "\n";
  for (int64_t c : predicted) text += csv_field(spec.classes[static_cast<size_t>(c)]) + "\n";
  write_file_atomic(out, text, "predictions CSV");
  return true;
}

}  // namespace bl::cli
