// tabular_training.h: `bitlearn train --model mlp|cnn|lstm` on the user's data: a CSV file (--target), a
// folder of class subfolders of PNG/PGM/PPM images, or IDX files (--labels); a held-out split, the
// per-class report, the loss-curve SVG beside the checkpoint; and `bitlearn predict` with such a
// checkpoint of a CSV file. A classifier by default; --task regression fits a numeric CSV column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bitlearn/nn/optim.h"

namespace bl::cli {

struct UserDataOptions {
  std::string model = "mlp";  // mlp or cnn
  std::string device = "cpu";
  std::string data;      // FILE.csv, a folder of class subfolders, or an IDX images file
  std::string labels;    // the IDX labels file of an IDX images file
  std::string target;    // the CSV's class column (or value column, regression)
  std::string task = "classification";  // or regression (CSV only: mean squared error)
  std::vector<std::string> ignore;      // CSV columns that are not features
  std::vector<std::string> categorical; // CSV feature columns one-hot encoded (as `bitlearn fit`)
  std::string test;      // held-out data of the same kind ("": --val-fraction of data)
  std::string optimizer; // "": the model's default
  std::string checkpoint;
  float val_fraction = 0.2f, lr = 0;
  int64_t width = 0, depth = 0, steps = 0, epochs = 0, batch = 0, checkpoint_every = 0, stop_at = 0;
  // lstm on a CSV file: each row's feature columns are time_steps steps of n_features / time_steps
  // features, step-major (step t = columns t*F .. t*F+F-1).
  int64_t time_steps = 0;
  uint64_t seed = 1;
  bool resume = false;
};

// Whether --data names the user's data rather than a Fashion-MNIST folder (the built-in data set):
// a file, or a folder without train-images-idx3-ubyte.gz.
bool is_user_data(const std::string& data);

// Trains and prints the run, the validation report and where the checkpoint and curve went.
// Throws bl::Error on bad input.
void run_user_data_training(const UserDataOptions& options);

// The hidden widths of an MLP of `depth` hidden layers: width, width / 2, width / 4, ... (at least 1).
std::vector<int64_t> hidden_widths(int64_t width, int64_t depth);

// The optimizer of `bitlearn train` by name: sgd (plain), momentum (SGD, Nesterov momentum 0.9,
// weight decay 5e-4), adam, adamw (weight decay 1e-4). Other names: bl::Error.
std::unique_ptr<nn::Optimizer> make_optimizer(const std::string& name, const nn::NamedVars& params, float lr);
// The default peak learning rate of an optimizer: 1e-3 for adam and adamw, 0.05 for sgd and momentum.
float default_lr(const std::string& optimizer);

// `bitlearn predict --model CHECKPOINT`: when `path` is a checkpoint of `bitlearn train --data
// FILE.csv`, writes its predictions of the CSV `data` to `out` (output "predict": the class names,
// or the values of a regression; "proba": one probability column per class) and returns true; returns false for a file that is not
// a safetensors checkpoint with that description (the model-file path handles it).
bool predict_with_checkpoint(const std::string& path, const std::string& data, const std::string& out,
                             const std::string& output);

}  // namespace bl::cli
