// pca.h: the decomposition family's factory.
#pragma once

#include <memory>

#include "bitlearn/ml/decomposition.h"

namespace bl::ml {

std::unique_ptr<Estimator> make_pca();

}  // namespace bl::ml
