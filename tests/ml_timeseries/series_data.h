// series_data.h: the series the time-series tests fit: the monthly airline passenger totals
// 1949-1960 (Box and Jenkins' series G, thousands; 144 values, period 12), read from
// tests/data/timeseries/airline.csv (a header line "y", then one value a line).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "ml_common/estimator_checks.h"

namespace bl::ts_test {

inline std::vector<double> airline() {
  std::ifstream in(ml_common::source_path("tests/data/timeseries/airline.csv"));
  std::string line;
  std::getline(in, line);  // the header
  std::vector<double> out;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(std::stod(line));
  return out;
}

}  // namespace bl::ts_test
