// Fuzz target: a CSV text through parse_csv, then the split into features and a last-column target.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bitlearn/csv.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const bl::CsvTable table = bl::parse_csv(text, "fuzz.csv");
    if (!table.columns.empty()) (void)bl::csv_to_xy(table, table.columns.back(), {}, "fuzz.csv");
  } catch (const bl::Error&) {
  }
  return 0;
}
