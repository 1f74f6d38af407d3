// `bitlearn train`: trains the MLP, CNN or LSTM classifier of bitlearn/nn/zoo.h on Fashion-MNIST,
// with checkpoints and resumption; prints the loss, the time per step and the test accuracy.
#include <chrono>
#include <cstdio>
#include <memory>

#include "bitlearn/nn.h"
#include "command.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace {

struct TrainOptions {
  std::string model = "mlp";
  std::string device = "cpu";
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::string checkpoint;
  int64_t steps = 0, batch = 0, checkpoint_every = 0, train_subset = 0, width = 0;
  int threads = 0;
  float lr = 0;
  uint64_t seed = 1;
  bool resume = false, no_eval = false;
};

void run(const TrainOptions& o) {
  using namespace bl::nn;
  if (o.threads > 0) bl::set_num_threads(o.threads);
  bl::Device device = bl::Device::parse(o.device);
  FashionMnist data = load_fashion_mnist(o.data);
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
  if (o.model == "mlp") {
    int64_t w = o.width > 0 ? o.width : 256;
    model = make_mlp(784, {w, w / 2}, 10, o.seed);
    float lr = o.lr > 0 ? o.lr : 1e-3f;
    opt = std::make_unique<AdamW>(model->named_parameters(), lr, 0.9f, 0.999f, 1e-8f, 1e-4f);
    cfg.steps = o.steps > 0 ? o.steps : 2000;
    cfg.batch_size = o.batch > 0 ? o.batch : 128;
    cfg.input_shape = {-1, 784};
    cfg.schedule = cosine_lr(lr, 50, cfg.steps, 0.0f);
  } else if (o.model == "cnn") {
    model = make_cnn(o.width > 0 ? o.width : 16, 10, o.seed);
    float lr = o.lr > 0 ? o.lr : 0.05f;
    opt = std::make_unique<SGD>(model->named_parameters(), lr, 0.9f, true, 5e-4f);
    cfg.steps = o.steps > 0 ? o.steps : 2000;
    cfg.batch_size = o.batch > 0 ? o.batch : 64;
    cfg.input_shape = {-1, 28, 28, 1};
    cfg.schedule = cosine_lr(lr, 50, cfg.steps, 0.0f);
    cfg.clip_norm = 5.0f;
  } else if (o.model == "lstm") {
    model = std::make_shared<LstmClassifier>(28, o.width > 0 ? o.width : 64, 10, o.seed);
    float lr = o.lr > 0 ? o.lr : 3e-3f;
    opt = std::make_unique<Adam>(model->named_parameters(), lr);
    cfg.steps = o.steps > 0 ? o.steps : 2000;
    cfg.batch_size = o.batch > 0 ? o.batch : 64;
    cfg.input_shape = {-1, 28, 28};
    cfg.schedule = cosine_lr(lr, 50, cfg.steps, 0.0f);
    cfg.clip_norm = 1.0f;
  } else {
    throw bl::Error("bitlearn train: --model must be mlp, cnn or lstm, got '" + o.model + "'");
  }
  model->to(device);
  cfg.checkpoint_path = o.checkpoint;
  cfg.checkpoint_every = o.checkpoint_every;
  cfg.resume = o.resume;
  std::printf("model %s (%lld parameters), device %s, threads %d, steps %lld, batch %lld\n",
              o.model.c_str(), static_cast<long long>(model->num_parameters()), device.str().c_str(),
              bl::num_threads(), static_cast<long long>(cfg.steps), static_cast<long long>(cfg.batch_size));
  using clock = std::chrono::steady_clock;
  auto t_start = clock::now();
  auto t_timed = t_start;
  int64_t timed_from = -1;
  double window = 0;
  int64_t window_n = 0;
  cfg.on_step = [&](int64_t step, float loss) {
    if (timed_from < 0) {
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
  int64_t timed_steps = static_cast<int64_t>(r.losses.size()) - 1;
  if (timed_steps > 0)
    std::printf("time per step: %.3f ms (%lld steps)\n", 1e3 * total / static_cast<double>(timed_steps),
                static_cast<long long>(timed_steps));
  if (!o.no_eval) {
    bl::Shape shape = cfg.input_shape;
    double acc = evaluate_accuracy(*model, data.test, shape, 500);
    std::printf("test accuracy: %.4f\n", acc);
  }
}

void setup(CLI::App& root) {
  auto o = std::make_shared<TrainOptions>();
  auto* cmd = root.add_subcommand("train", "Train an MLP, CNN or LSTM classifier on Fashion-MNIST");
  cmd->add_option("--model", o->model, "mlp, cnn or lstm")->capture_default_str();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--data", o->data, "Fashion-MNIST folder (*-ubyte.gz)")->capture_default_str();
  cmd->add_option("--steps", o->steps, "Training steps (default 2000)");
  cmd->add_option("--batch", o->batch, "Batch size (mlp 128, cnn 64, lstm 64)");
  cmd->add_option("--lr", o->lr, "Peak learning rate (cosine schedule with 50 warmup steps)");
  cmd->add_option("--width", o->width, "Hidden width / channels (mlp 256, cnn 16, lstm 64)");
  cmd->add_option("--seed", o->seed, "Initialization and shuffling seed")->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads");
  cmd->add_option("--train-subset", o->train_subset, "Use only the first N training images");
  cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint file (safetensors)");
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "Save every N steps");
  cmd->add_flag("--resume", o->resume, "Continue from --checkpoint when it exists");
  cmd->add_flag("--no-eval", o->no_eval, "Skip the test-set evaluation");
  cmd->callback([o] { run(*o); });
}
BL_REGISTER_COMMAND(setup);

}  // namespace
