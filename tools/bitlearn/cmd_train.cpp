// `bitlearn train`: trains the MLP, CNN or LSTM classifier of bitlearn/nn/zoo.h on Fashion-MNIST,
// with checkpoints and resumption, printing the loss, the time per step and the test accuracy; the
// MLP or CNN on the user's data (a CSV file, a folder of images, IDX files: tabular_training.h); or,
// with --model gpt2, llama or a language-model preset, a decoder language model (cmd_train_lm.h).
// Errors print `bitlearn train: <message>` and exit with code 2.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "bitlearn/nn.h"
#include "cmd_train_lm.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "tabular_training.h"

namespace {

constexpr const char* kDefaultImageData = "/usr/share/datasets/fashion-mnist";

struct TrainOptions {
  std::string model = "mlp";
  std::string device = "cpu";
  std::string data;  // empty: kDefaultImageData (classifiers); the corpus of a language model
  std::string checkpoint;
  std::string target, labels, test, optimizer;  // the user's data (tabular_training.h); optimizer: all
  std::string task = "classification";
  std::vector<std::string> ignore, categorical;
  int64_t steps = 0, batch = 0, checkpoint_every = 0, train_subset = 0, width = 0, depth = 0, epochs = 0;
  int64_t time_steps = 0;  // lstm on a CSV: time steps per row
  int threads = 0;
  float lr = 0;
  uint64_t seed = 1;
  bool resume = false, no_eval = false;
};

void run(const TrainOptions& o) {
  using namespace bl::nn;
  if (o.threads > 0) bl::set_num_threads(o.threads);
  bl::Device device = bl::Device::parse(o.device);
  FashionMnist data = load_fashion_mnist(o.data.empty() ? kDefaultImageData : o.data);
  if (o.train_subset > 0) {
    data.train.images = data.train.images.slice(0, 0, o.train_subset).contiguous();
    data.train.labels = data.train.labels.slice(0, 0, o.train_subset).contiguous();
  }
  data.train.images = data.train.images.to(device);
  data.train.labels = data.train.labels.to(device);
  data.test.images = data.test.images.to(device);
  data.test.labels = data.test.labels.to(device);
  std::shared_ptr<Module> model;
  std::unique_ptr<Optimizer> opt;
  TrainConfig cfg;
  cfg.data_seed = o.seed;
  std::string optimizer = o.optimizer;
  if (o.model == "mlp") {
    model = make_mlp(784, bl::cli::hidden_widths(o.width > 0 ? o.width : 256, o.depth > 0 ? o.depth : 2), 10, o.seed);
    if (optimizer.empty()) optimizer = "adamw";
    float lr = o.lr > 0 ? o.lr : bl::cli::default_lr(optimizer);
    opt = bl::cli::make_optimizer(optimizer, model->named_parameters(), lr);
    cfg.steps = o.steps > 0 ? o.steps : 2000;
    cfg.batch_size = o.batch > 0 ? o.batch : 128;
    cfg.input_shape = {-1, 784};
    cfg.schedule = cosine_lr(lr, 50, cfg.steps, 0.0f);
  } else if (o.model == "cnn") {
    model = make_cnn(o.width > 0 ? o.width : 16, 10, o.seed);
    if (optimizer.empty()) optimizer = "momentum";
    float lr = o.lr > 0 ? o.lr : bl::cli::default_lr(optimizer);
    opt = bl::cli::make_optimizer(optimizer, model->named_parameters(), lr);
    cfg.steps = o.steps > 0 ? o.steps : 2000;
    cfg.batch_size = o.batch > 0 ? o.batch : 64;
    cfg.input_shape = {-1, 28, 28, 1};
    cfg.schedule = cosine_lr(lr, 50, cfg.steps, 0.0f);
    cfg.clip_norm = 5.0f;
  } else if (o.model == "lstm") {
    model = std::make_shared<LstmClassifier>(28, o.width > 0 ? o.width : 64, 10, o.seed);
    if (optimizer.empty()) optimizer = "adam";
    float lr = o.lr > 0 ? o.lr : optimizer == "adam" ? 3e-3f : bl::cli::default_lr(optimizer);
    opt = bl::cli::make_optimizer(optimizer, model->named_parameters(), lr);
    cfg.steps = o.steps > 0 ? o.steps : 2000;
    cfg.batch_size = o.batch > 0 ? o.batch : 64;
    cfg.input_shape = {-1, 28, 28};
    cfg.schedule = cosine_lr(lr, 50, cfg.steps, 0.0f);
    cfg.clip_norm = 1.0f;
  } else {
    throw bl::Error("--model must be mlp, cnn, lstm (classifiers) or gpt2, llama, llama-tiny, llama-162m, "
                    "gpt2-tiny, gpt2-124m (language models), got '" + o.model + "'");
  }
  model->to(device);
  cfg.checkpoint_path = o.checkpoint;
  cfg.checkpoint_every = o.checkpoint_every;
  cfg.resume = o.resume;
  std::printf("model %s (%lld parameters), optimizer %s, device %s, threads %d, steps %lld, batch %lld\n",
              o.model.c_str(), static_cast<long long>(model->num_parameters()), optimizer.c_str(), device.str().c_str(),
              bl::num_threads(), static_cast<long long>(cfg.steps), static_cast<long long>(cfg.batch_size));
  using clock = std::chrono::steady_clock;
  auto t_start = clock::now();
  auto t_timed = t_start;
  int64_t timed_from = -1;
  double window = 0;
  int64_t window_n = 0;
  cfg.on_step = [&](int64_t step, float loss) {
    if (timed_from < 0) {
      if (step > 0)
        std::printf("resumed from %s after step %lld\n", cfg.checkpoint_path.c_str(), static_cast<long long>(step));
      timed_from = step + 1;  // the first step warms caches and is not timed
      t_timed = clock::now();
    }
    window += loss;
    ++window_n;
    if ((step + 1) % 100 == 0 || step + 1 == cfg.steps) {
      std::printf("step %6lld  loss %.4f\n", static_cast<long long>(step + 1), window / window_n);
      std::fflush(stdout);
      window = 0;
      window_n = 0;
    }
  };
  TrainResult r = train_classifier(*model, *opt, data.train, cfg);
  double total = std::chrono::duration<double>(clock::now() - t_timed).count();
  const int64_t ran = static_cast<int64_t>(r.losses.size());
  if (ran > 1)
    std::printf("time per step: %.3f ms (%lld steps run, the first one untimed)\n",
                1e3 * total / static_cast<double>(ran - 1), static_cast<long long>(ran));
  else
    std::printf("%lld steps run\n", static_cast<long long>(ran));
  if (!o.no_eval) {
    bl::Shape shape = cfg.input_shape;
    double acc = evaluate_accuracy(*model, data.test, shape, 500);
    std::printf("test accuracy: %.4f\n", acc);
  }
}

// "--a, --b apply" / "--a applies": the options among opts that the command line gave, for the
// error of a path that does not read them ("" when none was given).
std::string given(const std::vector<CLI::Option*>& opts) {
  std::string out;
  int n = 0;
  for (const CLI::Option* opt : opts)
    if (opt->count() > 0) {
      out += (n++ > 0 ? ", " : "") + opt->get_name();
    }
  return n == 0 ? "" : out + (n == 1 ? " applies" : " apply");
}

// The message of e without the library's own "lm train: " prefix (the command names itself).
std::string message_of(const bl::Error& e) {
  const char* m = e.what();
  const char* prefix = "lm train: ";
  return std::strncmp(m, prefix, std::strlen(prefix)) == 0 ? m + std::strlen(prefix) : m;
}

struct TrainCommand {
  TrainOptions classifier;
  bl::cli::LmTrainArgs lm;
  CLI::Option *model = nullptr, *steps = nullptr, *batch = nullptr, *lr = nullptr, *width = nullptr,
              *train_subset = nullptr, *threads = nullptr, *checkpoint_every = nullptr, *depth = nullptr,
              *epochs = nullptr, *no_eval = nullptr, *val_fraction = nullptr, *time_steps = nullptr;
  std::vector<CLI::Option*> lm_only, classifier_only;
  // Options of the user's data (not of Fashion-MNIST); --stop-at and --val-fraction are the LM's too.
  std::vector<CLI::Option*> user_data_only;
};

// Refuses an out-of-range value of an option the command line gave: a classifier would otherwise
// take 0 or a negative number as "use the default" and train something other than what was asked.
void check_classifier_options(const TrainCommand& t) {
  const TrainOptions& c = t.classifier;
  auto at_least_one = [](const CLI::Option* opt, int64_t v) {
    BL_CHECK(opt->count() == 0 || v >= 1, opt->get_name(), " must be >= 1, got ", v);
  };
  at_least_one(t.steps, c.steps);
  at_least_one(t.batch, c.batch);
  at_least_one(t.width, c.width);
  at_least_one(t.depth, c.depth);
  at_least_one(t.epochs, c.epochs);
  at_least_one(t.time_steps, c.time_steps);
  at_least_one(t.train_subset, c.train_subset);
  BL_CHECK(t.lr->count() == 0 || (std::isfinite(c.lr) && c.lr > 0), "--lr must be a finite number > 0, got ",
           c.lr);
}

void dispatch(TrainCommand& t) {
  if (t.threads->count() > 0) bl::check_thread_count(t.classifier.threads, "--threads");
  BL_CHECK(t.checkpoint_every->count() == 0 || t.classifier.checkpoint_every >= 0,
           "--checkpoint-every must be >= 0, got ", t.classifier.checkpoint_every);
  // --config or --init-from without --model: a language model of that folder's or file's kind.
  if (t.model->count() == 0 && (!t.lm.options.init_from.empty() || !t.lm.options.config_path.empty())) {
    const std::string cfg = !t.lm.options.init_from.empty() ? t.lm.options.init_from + "/config.json"
                                                             : t.lm.options.config_path;
    t.classifier.model = bl::models::load_config(cfg).model_type == "gpt2" ? "gpt2" : "llama";
  }
  const std::string& name = t.classifier.model;
  if (!bl::cli::is_lm_model(name)) {
    BL_CHECK(name == "mlp" || name == "cnn" || name == "lstm",
             "--model must be mlp, cnn, lstm (classifiers) or gpt2, llama, llama-tiny, llama-162m, gpt2-tiny, "
             "gpt2-124m (language models), got '", name, "'");
    std::vector<CLI::Option*> lm_only;
    for (CLI::Option* opt : t.lm_only)
      if (std::find(t.user_data_only.begin(), t.user_data_only.end(), opt) == t.user_data_only.end())
        lm_only.push_back(opt);
    const std::string bad = given(lm_only);
    BL_CHECK(bad.empty(), bad, " only to language models (--model gpt2, llama or a preset); --model ", name,
             " is a classifier");
    check_classifier_options(t);
    const TrainOptions& c = t.classifier;
    if (!bl::cli::is_user_data(c.data)) {
      const std::string own = given(t.user_data_only);
      BL_CHECK(own.empty(), own, " only with --data of your own (FILE.csv, a folder of class subfolders, or IDX "
               "files with --labels), not to Fashion-MNIST");
      run(c);
      return;
    }
    const std::string fashion = given({t.train_subset, t.no_eval});
    BL_CHECK(fashion.empty(), fashion, " only to Fashion-MNIST, not to --data ", c.data);
    bl::cli::UserDataOptions u;
    u.model = c.model;
    u.device = c.device;
    u.data = c.data;
    u.labels = c.labels;
    u.target = c.target;
    u.task = c.task;
    u.ignore = c.ignore;
    u.categorical = c.categorical;
    u.test = c.test;
    u.optimizer = c.optimizer;
    u.checkpoint = c.checkpoint;
    u.lr = c.lr;
    u.width = c.width;
    u.depth = c.depth;
    u.steps = c.steps;
    u.epochs = c.epochs;
    u.time_steps = c.time_steps;
    u.batch = c.batch;
    u.checkpoint_every = c.checkpoint_every;
    u.seed = c.seed;
    u.resume = c.resume;
    u.stop_at = t.lm.options.stop_at;
    if (t.val_fraction->count() > 0) u.val_fraction = t.lm.options.val_fraction;
    BL_CHECK(u.stop_at >= 0, "--stop-at must be >= 0, got ", u.stop_at);
    if (c.threads > 0) bl::set_num_threads(c.threads);
    bl::cli::run_user_data_training(u);
    return;
  }
  const std::string bad = given(t.classifier_only);
  BL_CHECK(bad.empty(), bad, " only to the classifiers (--model mlp, cnn, lstm), not to --model ", name);
  bl::lm::TrainOptions& o = t.lm.options;
  if (t.model->count() > 0 && !o.init_from.empty()) {
    // The folder decides the shape; a --model of the other family is a mistake, not a request.
    const std::string type = bl::models::load_config(o.init_from + "/config.json").model_type;
    BL_CHECK((name.rfind("gpt2", 0) == 0) == (type == "gpt2"), "--model ", name, " but the --init-from folder ",
             o.init_from, " holds a ", type, " model");
  }
  const TrainOptions& c = t.classifier;
  o.model = name;
  o.data = c.data;
  o.device = c.device;
  o.threads = c.threads;
  o.seed = c.seed;
  o.checkpoint = c.checkpoint;
  o.checkpoint_every = c.checkpoint_every;
  o.resume = c.resume;
  if (t.steps->count() > 0) o.steps = c.steps;
  if (t.batch->count() > 0) o.batch = c.batch;
  if (t.lr->count() > 0) o.lr = c.lr;
  bl::cli::run_lm_train(t.lm);
}

void setup(CLI::App& root) {
  auto t = std::make_shared<TrainCommand>();
  TrainOptions* o = &t->classifier;
  auto* cmd = root.add_subcommand(
      "train", "Train a classifier (mlp, cnn, lstm) on Fashion-MNIST or on your data (CSV, image folder, IDX), "
               "or a language model (gpt2, llama, presets) on a text corpus");
  t->model = cmd->add_option("--model", o->model,
                             "mlp, cnn, lstm; or gpt2, llama, llama-tiny, llama-162m, gpt2-tiny, gpt2-124m")
                 ->capture_default_str();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--data", o->data,
                  std::string("Classifiers: Fashion-MNIST folder (default ") + kDefaultImageData +
                      "), or your data: FILE.csv (with --target), a folder of class subfolders of PNG/PGM/PPM "
                      "images, or an IDX images file (with --labels); LM: a UTF-8 text file or folder");
  t->steps = cmd->add_option("--steps", o->steps, "Training steps (classifiers 2000, on a CSV 1000; LM 200)");
  t->batch = cmd->add_option("--batch", o->batch, "Batch size (mlp 128, cnn 64, lstm 64, mlp on a CSV 64; LM 8 sequences)");
  t->lr = cmd->add_option("--lr", o->lr, "Peak learning rate (classifiers: 50 warmup steps, your data min(50, steps / 10); LM 3e-4, see --warmup)");
  t->width = cmd->add_option("--width", o->width, "Hidden width / channels (mlp 256, mlp on a CSV 64, cnn 16, lstm 64)");
  t->classifier_only.push_back(t->width);
  t->depth = cmd->add_option("--depth", o->depth, "mlp: hidden layers, widths halving from --width (default 2)");
  t->classifier_only.push_back(t->depth);
  t->classifier_only.push_back(cmd->add_option(
      "--optimizer", o->optimizer, "Classifiers: sgd, momentum, adam or adamw (mlp adamw, cnn momentum, lstm adam)"));
  t->epochs = cmd->add_option("--epochs", o->epochs, "Your data: passes over the training rows (instead of --steps)");
  t->user_data_only.push_back(cmd->add_option("--target", o->target, "Your data: the CSV's class column"));
  t->user_data_only.push_back(cmd->add_option("--labels", o->labels, "Your data: the IDX labels file of --data"));
  t->user_data_only.push_back(
      cmd->add_option("--test", o->test, "Your data: held-out CSV or image folder (instead of --val-fraction)"));
  t->user_data_only.push_back(t->epochs);
  t->time_steps = cmd->add_option("--time-steps", o->time_steps,
                                  "Your data, --model lstm on a CSV: each row is T time steps of n_features / T "
                                  "features, step-major (step t = feature columns t*F .. t*F+F-1)");
  t->user_data_only.push_back(t->time_steps);
  t->user_data_only.push_back(
      cmd->add_option("--task", o->task, "Your data: classification (default) or regression (a numeric CSV column, "
                                         "mean squared error)"));
  t->user_data_only.push_back(
      cmd->add_option("--ignore", o->ignore, "Your data: CSV columns that are not features (comma-separated)")
          ->delimiter(','));
  t->user_data_only.push_back(cmd->add_option("--categorical", o->categorical,
                                              "Your data: CSV feature columns to one-hot encode (comma-separated; "
                                              "predict applies the same)")
                                  ->delimiter(','));
  cmd->add_option("--seed", o->seed, "Initialization and data seed")->capture_default_str();
  t->threads = cmd->add_option("--threads", o->threads, "CPU threads (1 to 1024; default BITLEARN_THREADS or all cores)");
  t->train_subset = cmd->add_option("--train-subset", o->train_subset, "Use only the first N training images");
  t->classifier_only.push_back(t->train_subset);
  cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint file (safetensors)");
  t->checkpoint_every = cmd->add_option("--checkpoint-every", o->checkpoint_every, "Save every N steps");
  cmd->add_flag("--resume", o->resume, "Continue from --checkpoint when it exists");
  t->no_eval = cmd->add_flag("--no-eval", o->no_eval, "Skip the test-set evaluation");
  t->classifier_only.push_back(t->no_eval);
  // The options of the user's data so far are the classifiers' only (the language models refuse them).
  t->classifier_only.insert(t->classifier_only.end(), t->user_data_only.begin(), t->user_data_only.end());
  t->lm_only = bl::cli::add_lm_only_options(cmd, &t->lm);
  // Shared with the language models: --stop-at, and --val-fraction (your data: default 0.2, drawn by --seed).
  for (CLI::Option* opt : t->lm_only)
    if (opt->get_name() == "--stop-at") {
      opt->description("LM and your data: end after this step, leaving a checkpoint to --resume");
      t->user_data_only.push_back(opt);
    } else if (opt->get_name() == "--val-fraction") {
      opt->description("LM: tail of the token stream held out (default 0.05); your data: rows held out, drawn by "
                       "--seed (default 0.2)");
      t->user_data_only.push_back(opt);
      t->val_fraction = opt;
    }
  cmd->callback([t] {
    try {
      dispatch(*t);
    } catch (const bl::Error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "bitlearn train: %s\n", message_of(e).c_str());
      throw bl::cli::CommandExit{2};
    }
  });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
