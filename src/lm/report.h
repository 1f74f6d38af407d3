// report.h: what the JSON reports of the language-model runs share (report.cpp, evidence.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace bl::lm {

// A binary32 value in a report: the number, and beside it (key + "_bits") its exact bits in hex.
void put_float(nlohmann::ordered_json& e, const std::string& key, float v);

}  // namespace bl::lm
