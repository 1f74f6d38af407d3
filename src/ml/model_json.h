// model_json.h: the JSON parse of a model file, fast for the long hex strings that hold fitted
// arrays (a k-NN model keeps its training rows: 160 MB of hex at 10^6 x 20).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bl::ml {

// The same value as nlohmann::json::parse(text), and the same exception for bad text. String
// values of at least 4096 bytes of printable ASCII without escapes are cut out of the text and
// copied whole (instead of byte by byte through the JSON lexer), then put back into the parsed tree.
nlohmann::json parse_model_json(const std::string& text);

}  // namespace bl::ml
