// bitlearn.nn: the MLP, CNN and LSTM classifiers of bitlearn/nn/zoo.h built and trained from Python
// with the calls `bitlearn train --model mlp|cnn|lstm` makes, in its order: the model from the seed,
// the optimizer of the command's table (bl::cli::make_optimizer), the move to the device, then
// nn::train_classifier with a cosine schedule, so the same settings give the same per-step losses
// and the same checkpoint bytes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/nn.h"
#include "bitlearn/nn/image_folder.h"
#include "convert.h"
#include "core/error.h"
#include "tabular_training.h"

namespace bl::py {

namespace {

// One network with its optimizer, as `bitlearn train` builds them.
class Network {
 public:
  // kind mlp: dims = {inputs, hidden...}; cnn: {channels, side[, image channels]};
  // lstm: {features, hidden, time steps}.
  Network(const std::string& kind, const std::vector<int64_t>& dims, int64_t classes, uint64_t seed,
          const std::string& optimizer, float lr, const std::string& device)
      : lr_(lr), seed_(seed), device_(Device::parse(device)) {
    BL_CHECK(classes >= 2, "nn: a classifier needs at least 2 classes, got ", classes);
    for (int64_t d : dims) BL_CHECK(d >= 1, "nn: every layer size must be >= 1, got ", d);
    if (kind == "mlp") {
      BL_CHECK(dims.size() >= 2, "nn: an MLP needs its inputs and at least one hidden width");
      model_ = nn::make_mlp(dims[0], std::vector<int64_t>(dims.begin() + 1, dims.end()), classes, seed);
      input_shape_ = {-1, dims[0]};
    } else if (kind == "cnn") {
      BL_CHECK(dims.size() == 2 || dims.size() == 3,
               "nn: a CNN takes its channels, image side and (optionally) the image's channels");
      BL_CHECK(dims[1] % 4 == 0, "nn: a CNN takes square images whose side is a multiple of 4, got ", dims[1]);
      const int64_t in_channels = dims.size() == 3 ? dims[2] : 1;  // 1 grey, 3 colour (channels last)
      model_ = nn::make_cnn(dims[0], classes, seed, dims[1], in_channels);
      input_shape_ = {-1, dims[1], dims[1], in_channels};
    } else if (kind == "lstm") {
      BL_CHECK(dims.size() == 3, "nn: an LSTM takes its features, hidden width and time steps");
      model_ = std::make_shared<nn::LstmClassifier>(dims[0], dims[1], classes, seed);
      input_shape_ = {-1, dims[2], dims[0]};
    } else {
      throw Error("nn: model must be mlp, cnn or lstm, got '" + kind + "'");
    }
    optimizer_ = cli::make_optimizer(optimizer, model_->named_parameters(), lr);
    model_->to(device_);
  }

  // train_classifier over X (f32 [N, D]) and y (i64 [N]); returns (first step, per-step losses).
  std::pair<int64_t, std::vector<float>> fit(nb::handle X, nb::handle y, int64_t steps, int64_t batch,
                                             int64_t warmup, float clip, const std::string& checkpoint,
                                             int64_t checkpoint_every, bool resume,
                                             const std::map<std::string, std::string>& metadata, nb::object on_step) {
    nn::Dataset data;
    data.images = tensor_from_object(X, "X").to(device_);
    data.labels = tensor_from_object(y, "y").to(device_);
    BL_CHECK(data.images.dtype() == DType::f32 && data.labels.dtype() == DType::i64,
             "nn: fit takes float32 inputs and int64 labels");
    nn::TrainConfig cfg;
    cfg.data_seed = seed_;
    cfg.steps = steps;
    cfg.batch_size = batch;
    cfg.input_shape = input_shape_;
    cfg.schedule = nn::cosine_lr(lr_, warmup, steps, 0.0f);
    cfg.clip_norm = clip;
    cfg.checkpoint_path = checkpoint;
    cfg.checkpoint_every = checkpoint_every;
    cfg.resume = resume;
    cfg.checkpoint_metadata = metadata;
    metadata_ = metadata;
    if (!on_step.is_none())
      cfg.on_step = [on_step](int64_t step, float loss) {
        nb::gil_scoped_acquire gil;
        on_step(step, loss);
      };
    nn::TrainResult r;
    {
      nb::gil_scoped_release no_gil;
      r = nn::train_classifier(*model_, *optimizer_, data, cfg);
    }
    step_ = r.first_step + static_cast<int64_t>(r.losses.size());
    return {r.first_step, r.losses};
  }

  // The logits f32 [N, classes] of X in evaluation mode, batch rows at a time (on the CPU).
  nb::object logits(nb::handle X, int64_t batch) {
    Tensor x = tensor_from_object(X, "X");
    Tensor out;
    {
      nb::gil_scoped_release no_gil;
      out = forward(x.to(device_), batch);
    }
    return tensor_to_numpy(out);
  }

  // softmax of the logits (binary32, as `bitlearn predict --output proba` computes it).
  nb::object proba(nb::handle X, int64_t batch) {
    Tensor x = tensor_from_object(X, "X");
    Tensor out;
    {
      nb::gil_scoped_release no_gil;
      out = bl::softmax(forward(x.to(device_), batch), 1).contiguous();
    }
    return tensor_to_numpy(out);
  }

  // nn::evaluate_accuracy, the test accuracy `bitlearn train` prints (batches of 500 there).
  double accuracy(nb::handle X, nb::handle y, int64_t batch) {
    nn::Dataset data;
    data.images = tensor_from_object(X, "X").to(device_);
    data.labels = tensor_from_object(y, "y").to(device_);
    nb::gil_scoped_release no_gil;
    return nn::evaluate_accuracy(*model_, data, input_shape_, batch);
  }

  void save(const std::string& path) const {
    std::map<std::string, std::string> extra = metadata_;
    extra["rng.data_seed"] = std::to_string(seed_);
    nn::save_checkpoint(path, *model_, *optimizer_, step_, extra);
  }

  // Restores a checkpoint; returns its metadata (step, optimizer, rng.data_seed, ...).
  std::map<std::string, std::string> load(const std::string& path) {
    nn::CheckpointInfo info = nn::load_checkpoint(path, *model_, *optimizer_);
    step_ = info.step;
    metadata_ = info.metadata;  // the caller's entries, written again by save
    for (const char* own : {"format", "optimizer", "optimizer.steps", "step", "rng.data_seed"}) metadata_.erase(own);
    return info.metadata;
  }

  // Copies of the parameters and buffers ("param.<name>", "buffer.<name>") as NumPy arrays.
  nb::dict state() const {
    nb::dict d;
    for (const auto& [name, v] : model_->named_parameters())
      d[("param." + name).c_str()] = tensor_to_numpy(v.value().to(Device::cpu()).contiguous().clone());
    for (const auto& [name, v] : model_->named_buffers())
      d[("buffer." + name).c_str()] = tensor_to_numpy(v.value().to(Device::cpu()).contiguous().clone());
    return d;
  }

  int64_t num_parameters() const { return model_->num_parameters(); }
  int64_t step() const { return step_; }
  std::string device() const { return device_.str(); }

 private:
  Tensor forward(const Tensor& x, int64_t batch) {
    BL_CHECK(batch >= 1, "nn: batch must be >= 1, got ", batch);
    ag::NoGradGuard no_grad;
    const bool was_training = model_->is_training();
    model_->eval();
    std::vector<Tensor> parts;
    const int64_t n = x.dim(0);
    for (int64_t start = 0; start < n; start += batch) {
      const int64_t end = std::min(n, start + batch);
      parts.push_back(model_->forward(ag::Var(x.slice(0, start, end).reshape(input_shape_))).value());
    }
    model_->train(was_training);
    return bl::concat(parts, 0).to(Device::cpu()).contiguous();
  }

  float lr_;
  uint64_t seed_;
  Device device_;
  std::shared_ptr<nn::Module> model_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  Shape input_shape_;
  int64_t step_ = 0;
  std::map<std::string, std::string> metadata_;  // extra checkpoint entries (beside rng.data_seed)
};

nb::tuple dataset_arrays(const nn::Dataset& d) {
  return nb::make_tuple(tensor_to_numpy(d.images.contiguous()), tensor_to_numpy(d.labels.contiguous()), d.height,
                        d.width);
}

}  // namespace

void bind_nn(nb::module_& m) {
  nb::class_<Network>(m, "_NnNetwork")
      .def(nb::init<const std::string&, const std::vector<int64_t>&, int64_t, uint64_t, const std::string&, float,
                    const std::string&>(),
           nb::arg("kind"), nb::arg("dims"), nb::arg("classes"), nb::arg("seed"), nb::arg("optimizer"), nb::arg("lr"),
           nb::arg("device"))
      .def("fit", &Network::fit, nb::arg("X"), nb::arg("y"), nb::arg("steps"), nb::arg("batch"), nb::arg("warmup"),
           nb::arg("clip"), nb::arg("checkpoint"), nb::arg("checkpoint_every"), nb::arg("resume"),
           nb::arg("metadata"), nb::arg("on_step").none())
      .def("logits", &Network::logits, nb::arg("X"), nb::arg("batch"))
      .def("proba", &Network::proba, nb::arg("X"), nb::arg("batch"))
      .def("accuracy", &Network::accuracy, nb::arg("X"), nb::arg("y"), nb::arg("batch"))
      .def("save", &Network::save, nb::arg("path"))
      .def("load", &Network::load, nb::arg("path"))
      .def("state", &Network::state)
      .def_prop_ro("num_parameters", &Network::num_parameters)
      .def_prop_ro("step", &Network::step)
      .def_prop_ro("device", &Network::device);
  m.def("_nn_hidden_widths", &cli::hidden_widths, nb::arg("width"), nb::arg("depth"),
        "The MLP hidden widths of `bitlearn train --width W --depth D`: W, W/2, W/4, ...");
  m.def("_nn_shuffled_indices", &nn::shuffled_indices, nb::arg("n"), nb::arg("seed"), nb::arg("epoch"),
        "nn::shuffled_indices: the permutation of 0..n-1 drawn from (seed, epoch).");
  m.def("_nn_default_lr", &cli::default_lr, nb::arg("optimizer"),
        "The default peak learning rate of an optimizer in `bitlearn train`.");
  m.def(
      "_nn_load_fashion_mnist",
      [](const std::string& dir) {
        nn::FashionMnist f = nn::load_fashion_mnist(dir);
        return nb::make_tuple(dataset_arrays(f.train), dataset_arrays(f.test));
      },
      nb::arg("dir"));
  m.def(
      "_nn_load_idx",
      [](const std::string& images, const std::string& labels) {
        return dataset_arrays(nn::load_idx_dataset(images, labels, 256));
      },
      nb::arg("images"), nb::arg("labels"));
  m.def(
      "_nn_load_image_folder",
      [](const std::string& dir, const std::vector<std::string>& classes) {
        nn::ImageFolder f = nn::load_image_folder(dir, classes);
        return nb::make_tuple(dataset_arrays(f.data), f.channels, f.classes);
      },
      nb::arg("dir"), nb::arg("classes"));
}

}  // namespace bl::py
