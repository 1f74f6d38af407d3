// init.h: parameter initializers from Philox (contract/rng.h): identical on every machine.
//
// Each returns a new CPU f32 tensor whose element i is a pure function of (seed, stream, i).
// Bounds and standard deviations are computed in binary32 with the contract's arithmetic.
#pragma once

#include <cstdint>

#include "bitlearn/tensor.h"

namespace bl::nn::init {

// Uniform in [a, b) (a < b).
Tensor uniform(const Shape& shape, float a, float b, uint64_t seed, uint64_t stream);
// Normal with mean and standard deviation stddev (Box-Muller, contract normal_element).
Tensor normal(const Shape& shape, float mean, float stddev, uint64_t seed, uint64_t stream);
// Normal restricted to [mean + a * stddev, mean + b * stddev]: a draw outside is redrawn from the
// next of up to 32 sub-streams (stream + k * 2^40), then clamped.
Tensor truncated_normal(const Shape& shape, float mean, float stddev, float a, float b,
                        uint64_t seed, uint64_t stream);
// Xavier (Glorot): uniform with bound gain * sqrt(6 / (fan_in + fan_out)), or normal with standard
// deviation gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_uniform(const Shape& shape, int64_t fan_in, int64_t fan_out, float gain,
                      uint64_t seed, uint64_t stream);
Tensor xavier_normal(const Shape& shape, int64_t fan_in, int64_t fan_out, float gain,
                     uint64_t seed, uint64_t stream);
// Kaiming (He): uniform with bound gain * sqrt(3 / fan_in), or normal with standard deviation
// gain / sqrt(fan_in); gain = sqrt(2) for ReLU.
Tensor kaiming_uniform(const Shape& shape, int64_t fan_in, float gain, uint64_t seed, uint64_t stream);
Tensor kaiming_normal(const Shape& shape, int64_t fan_in, float gain, uint64_t seed, uint64_t stream);

}  // namespace bl::nn::init
