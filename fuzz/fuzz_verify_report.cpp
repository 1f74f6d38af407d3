// Fuzz target: a `bitlearn verify --json` report through read_report_json, then the comparison
// of the report with itself and its exit status (what `bitlearn compare` does with it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "bitlearn/verify.h"
#include "core/error.h"
#include "support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = bl::fuzz::write_scratch_file("report.json", data, size);
  try {
    const bl::verify::Report r = bl::verify::read_report_json(path);
    (void)bl::verify::compare_reports(r, r);
    (void)bl::verify::exit_code(r);
  } catch (const bl::Error&) {
  }
  return 0;
}
