// zoo.cpp: the evidence models (MLP, CNN with a residual block, LSTM classifier).
#include "bitlearn/nn/zoo.h"

#include "core/error.h"

namespace bl::nn {

std::shared_ptr<Sequential> make_mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t classes,
                                     uint64_t seed) {
  InitStream init(seed);
  auto net = std::make_shared<Sequential>();
  int64_t width = in;
  for (int64_t h : hidden) {
    net->add(std::make_shared<Linear>(width, h, init));
    net->add(std::make_shared<ReLU>());
    width = h;
  }
  net->add(std::make_shared<Linear>(width, classes, init));
  return net;
}

std::shared_ptr<Sequential> make_cnn(int64_t c, int64_t classes, uint64_t seed, int64_t side, int64_t in_channels) {
  BL_CHECK(c >= 1, "make_cnn: channels must be >= 1, got ", c);
  BL_CHECK(in_channels >= 1, "make_cnn: in_channels must be >= 1, got ", in_channels);
  BL_CHECK(side >= 4 && side % 4 == 0, "make_cnn: side must be a positive multiple of 4, got ", side);
  InitStream init(seed);
  Conv2dOptions o;
  o.kernel = 3;
  o.padding = 1;
  o.bias = false;
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<Conv2d>(in_channels, c, o, init));
  net->add(std::make_shared<BatchNorm2d>(c));
  net->add(std::make_shared<ReLU>());
  net->add(std::make_shared<MaxPool2d>(2));
  net->add(std::make_shared<ResidualBlock>(c, init));
  net->add(std::make_shared<Conv2d>(c, 2 * c, o, init));
  net->add(std::make_shared<BatchNorm2d>(2 * c));
  net->add(std::make_shared<ReLU>());
  net->add(std::make_shared<MaxPool2d>(2));
  net->add(std::make_shared<Flatten>());
  net->add(std::make_shared<Linear>((side / 4) * (side / 4) * 2 * c, classes, init));
  return net;
}

LstmClassifier::LstmClassifier(int64_t features, int64_t hidden, int64_t classes, uint64_t seed,
                               int64_t layers) {
  InitStream init(seed);
  lstm = register_module("lstm", std::make_shared<LSTM>(features, hidden, init, layers));
  head = register_module("head", std::make_shared<Linear>(hidden, classes, init));
}

ag::Var LstmClassifier::forward(const ag::Var& x) {
  ag::Var seq = lstm->forward(x);
  int64_t t = seq.dim(1);
  ag::Var last = ag::reshape(ag::slice(seq, 1, t - 1, t), {seq.dim(0), seq.dim(2)});
  return head->forward(last);
}

}  // namespace bl::nn
