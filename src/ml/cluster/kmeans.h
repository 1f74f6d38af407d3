// kmeans.h: factories and the shared k-means++ initialization of the cluster family.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bitlearn/ml/estimator.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_kmeans();
std::unique_ptr<Estimator> make_minibatch_kmeans();
std::unique_ptr<Estimator> make_bisecting_kmeans();  // bisecting_kmeans.cpp
// k centers [k, d] (host, row-major) chosen from the rows of X by greedy k-means++ under seed.
// weight (f32 [n, 1] on X's device, or undefined): the draws and potentials weighted by it, as
// scikit-learn's k-means++ with sample_weight.
std::vector<float> kmeans_plus_plus(const Tensor& X, int64_t k, uint64_t seed, const Tensor& weight = Tensor());

}  // namespace bl::ml
