// json_array.h: a JSON array of objects built from a sequence, one object an item, for the reports
// that list runs, checks or steps (bitlearn verify --json, the language-model reports).
#pragma once

#include <utility>

#include <nlohmann/json.hpp>

namespace bl {

// [object for item in items], where each object starts empty and fill(item, object) sets its
// members (in insertion order). An empty sequence gives [].
template <typename Items, typename Fill>
nlohmann::ordered_json json_object_array(const Items& items, Fill fill) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const auto& item : items) {
    nlohmann::ordered_json object;
    fill(item, object);
    array.push_back(std::move(object));
  }
  return array;
}

}  // namespace bl
