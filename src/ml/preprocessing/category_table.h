// category_table.h: the category table shared by the category encoders (ordinal_encoder,
// one_hot_encoder in encoders.cpp; target_encoder): each column's categories (its distinct values
// sorted ascending), the lookup of a value among them, and the table's model state.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "ml/linear/common.h"

namespace bl::ml::prep {

// Per column, its categories in ascending order.
using CategoryTable = std::vector<std::vector<float>>;

// The categories of d columns of n rows, value(i, j) being row i of column j (NaN refused by the
// callers' input checks): each column's distinct values sorted ascending, -0 read as 0. One task per
// column, so the table is the same at any thread count.
template <class Value>
CategoryTable fit_categories(int64_t n, int64_t d, const Value& value) {
  CategoryTable table(static_cast<size_t>(d));
  default_pool().parallel_for(d, [&](int64_t j) {
    std::vector<float> col(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const float v = value(i, j);
      col[i] = v == 0.0f ? 0.0f : v;  // -0 is 0
    }
    std::sort(col.begin(), col.end());
    col.erase(std::unique(col.begin(), col.end()), col.end());
    table[j] = std::move(col);
  });
  return table;
}

// The index of v among the ascending categories c (exact binary32 equality), -1 when unseen.
inline int64_t category_index(const std::vector<float>& c, float v) {
  auto it = std::lower_bound(c.begin(), c.end(), v);
  return it != c.end() && *it == v ? static_cast<int64_t>(it - c.begin()) : -1;
}

// The table in a model state: 'n_categories' (each column's count) and 'categories' (the values,
// column after column, as hex f32).
inline void put_categories(nlohmann::json& state, const CategoryTable& table) {
  std::vector<int64_t> counts;
  std::vector<float> flat;
  for (const std::vector<float>& c : table) {
    counts.push_back(static_cast<int64_t>(c.size()));
    flat.insert(flat.end(), c.begin(), c.end());
  }
  state["n_categories"] = counts;
  lin::put_f32(state, "categories", flat);
}

// The table of d columns read back from a model state (put_categories' fields), refused unless
// every count is 1 .. 2^31 (a category's code fits int32) and every column's categories are finite
// and strictly ascending.
inline CategoryTable get_categories(const nlohmann::json& state, int64_t d, const std::string& est) {
  BL_CHECK(state.contains("n_categories") && state["n_categories"].is_array() &&
               static_cast<int64_t>(state["n_categories"].size()) == d,
           est, ": model state field 'n_categories' must list ", d, " counts");
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const auto& c : state["n_categories"]) {
    BL_CHECK(c.is_number_integer() && c.get<int64_t>() >= 1 && c.get<int64_t>() <= (int64_t{1} << 31), est,
             ": model state field 'n_categories' holds a count outside 1 .. 2^31");
    counts.push_back(c.get<int64_t>());
    total += counts.back();
  }
  const std::vector<float> flat = lin::get_f32(state, "categories", total, est);
  CategoryTable table(static_cast<size_t>(d));
  size_t at = 0;
  for (int64_t j = 0; j < d; ++j) {
    table[j].assign(flat.begin() + static_cast<std::ptrdiff_t>(at),
                    flat.begin() + static_cast<std::ptrdiff_t>(at + counts[j]));
    at += static_cast<size_t>(counts[j]);
    for (size_t k = 0; k < table[j].size(); ++k)
      BL_CHECK(std::isfinite(table[j][k]) && (k == 0 || table[j][k - 1] < table[j][k]), est,
               ": model state: the categories of column ", j, " are not finite and strictly ascending");
  }
  return table;
}

}  // namespace bl::ml::prep
