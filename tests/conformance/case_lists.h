// case_lists.h: every case list of the conformance driver, and the support-matrix row each one
// verifies. The CPU test (test_conformance_driver.cpp) and the CUDA test
// (tests/cuda/test_conformance_driver_cuda.cu) both run exactly this table, and
// scripts/support_matrix.py reads it to fill the matrix's verification columns: keep one entry per
// line in the form {"list", "row", &builder}.
#pragma once

#include <string>
#include <vector>

#include "conformance/cases_attention.h"
#include "conformance/cases_elementwise.h"
#include "conformance/cases_kernels.h"
#include "conformance/cases_matmul.h"
#include "conformance/cases_reduce.h"
#include "conformance/cases_shape.h"
#include "conformance/cases_train.h"

namespace bl::conformance {

inline const std::vector<CaseList>& case_lists() {
  static const std::vector<CaseList> lists = {
      {"unary_f32", "elementwise", &unary_f32_cases},
      {"binary_f32", "elementwise", &binary_f32_cases},
      {"elementwise_int_compare_cast", "elementwise", &elementwise_int_cases},
      {"reduce", "reduce", &reduce_cases},
      {"softmax", "softmax", &softmax_cases},
      {"norm", "norm", &norm_cases},
      {"cumsum", "cumsum", &cumsum_cases},
      {"sort", "sort", &sort_cases},
      {"matmul", "matmul", &matmul_cases},
      {"exact_gemm", "exact_gemm", &exact_gemm_cases},
      {"attention", "attention", &attention_cases},
      {"attention_backward", "attention_backward", &attention_backward_cases},
      {"norm_backward", "norm_backward", &norm_backward_cases},
      {"train_maps", "train_maps", &train_map_cases},
      {"index", "index", &index_cases},
      {"shape", "shape (copy, concat)", &shape_cases},
      {"im2col", "im2col", &im2col_cases},
      {"tile_max", "tile_max", &tile_max_cases},
      {"skinny_matmul", "skinny_matmul", &skinny_matmul_cases},
      {"math_map", "math_map", &math_map_cases},
      {"histogram", "histogram", &histogram_cases},
      {"rng_fill", "rng_fill", &rng_fill_cases},
      {"adam", "adam", &adam_cases},
  };
  return lists;
}

// The list names, for INSTANTIATE_TEST_SUITE_P.
inline std::vector<std::string> case_list_names() {
  std::vector<std::string> names;
  for (const CaseList& l : case_lists()) names.push_back(l.name);
  return names;
}

inline const CaseList& case_list(const std::string& name) {
  for (const CaseList& l : case_lists())
    if (name == l.name) return l;
  throw Error("conformance: no case list named " + name);
}

}  // namespace bl::conformance
