// kmeans.h: the k-means++ initialization shared by the cluster and mixture families (kmeans.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

// k centers [k, d] (host, row-major) chosen from the rows of X by greedy k-means++ under seed.
// weight (f32 [n, 1] on X's device, or undefined): the draws and potentials weighted by it, as
// scikit-learn's k-means++ with sample_weight.
std::vector<float> kmeans_plus_plus(const Tensor& X, int64_t k, uint64_t seed, const Tensor& weight = Tensor());

}  // namespace bl::ml
