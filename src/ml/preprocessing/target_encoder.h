// target_encoder.h: the cross-fitted training output of target_encoder (scikit-learn's
// TargetEncoder.fit_transform), beside its registry entry (target_encoder.cpp).
#pragma once

#include "bitlearn/ml/estimator.h"
#include "bitlearn/tensor.h"

namespace bl::ml {

// The encodings of the training rows X [n, d] with target y [n] by cross fitting: each row encoded
// with the encodings fitted on the other folds (cv folds of the fitted target_encoder `est`'s
// parameters: contiguous blocks of the rows, or of their Philox permutation when shuffle is true;
// stratified by class for a binary or multiclass target). `est` must be a target_encoder fitted on
// the same X and y (its categories, target type and classes are used). f32 [n, d] ([n, d K] for K
// classes of a multiclass target) on X's device.
Tensor target_encoder_cross_fit(const Estimator& est, const Tensor& X, const Tensor& y);

}  // namespace bl::ml
