// recurrent.h: RNN, LSTM and GRU over sequences [N, T, input] (batch first).
//
// Gate equations follow PyTorch (gate order i, f, g, o for LSTM; r, z, n for GRU). The input
// projections of all time steps are one GEMM; each step adds the hidden projection. Multi-layer
// stacks feed each layer's output sequence to the next; bidirectional layers run a second stack
// over the reversed sequence and concatenate [forward, backward] on the feature dimension.
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/nn/module.h"

namespace bl::nn {

enum class RecurrentKind { rnn_tanh, lstm, gru };

// Output [N, T, hidden * (bidirectional ? 2 : 1)].
class Recurrent : public Module {
 public:
  Recurrent(RecurrentKind kind, int64_t input_size, int64_t hidden_size, int64_t num_layers,
            bool bidirectional, InitStream& init);
  ag::Var forward(const ag::Var& x) override;
  RecurrentKind kind;
  int64_t input_size, hidden_size, num_layers;
  bool bidirectional;

 private:
  struct Cell {
    ag::Var w_ih, w_hh, b_ih, b_hh;
  };
  ag::Var run_direction(const Cell& cell, const ag::Var& xproj_seq, int64_t steps, bool reverse);
  std::vector<Cell> cells_;  // layer-major, then direction
};

class RNN : public Recurrent {
 public:
  RNN(int64_t input_size, int64_t hidden_size, InitStream& init, int64_t num_layers = 1,
      bool bidirectional = false)
      : Recurrent(RecurrentKind::rnn_tanh, input_size, hidden_size, num_layers, bidirectional, init) {}
};
class LSTM : public Recurrent {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, InitStream& init, int64_t num_layers = 1,
       bool bidirectional = false)
      : Recurrent(RecurrentKind::lstm, input_size, hidden_size, num_layers, bidirectional, init) {}
};
class GRU : public Recurrent {
 public:
  GRU(int64_t input_size, int64_t hidden_size, InitStream& init, int64_t num_layers = 1,
      bool bidirectional = false)
      : Recurrent(RecurrentKind::gru, input_size, hidden_size, num_layers, bidirectional, init) {}
};

}  // namespace bl::nn
