// zoo.h: the small classifiers that bitlearn's training evidence uses (Fashion-MNIST sized).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bitlearn/nn/layers.h"
#include "bitlearn/nn/recurrent.h"

namespace bl::nn {

// MLP: [N, in] -> Linear + ReLU per hidden width -> Linear to classes.
std::shared_ptr<Sequential> make_mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t classes,
                                     uint64_t seed);

// CNN on [N, side, side, in_channels] (channels last: 1 grey, 3 colour): conv3x3(c) + BatchNorm + ReLU + maxpool 2, a residual block,
// conv3x3(2c) + BatchNorm + ReLU + maxpool 2, flatten, Linear to classes (side divisible by 4).
std::shared_ptr<Sequential> make_cnn(int64_t channels, int64_t classes, uint64_t seed, int64_t side = 28,
                                     int64_t in_channels = 1);

// Sequence classifier on [N, T, features]: an LSTM, its last time step, Linear to classes.
class LstmClassifier : public Module {
 public:
  LstmClassifier(int64_t features, int64_t hidden, int64_t classes, uint64_t seed, int64_t layers = 1);
  ag::Var forward(const ag::Var& x) override;
  std::shared_ptr<LSTM> lstm;
  std::shared_ptr<Linear> head;
};

}  // namespace bl::nn
