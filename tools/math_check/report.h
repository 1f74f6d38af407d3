// report.h: the checker's text and JSON reports.
#pragma once

#include <string>
#include <vector>

#include "check.h"

namespace mathcheck {

// One summary line per function, then its special-value table (all rows with `verbose`,
// otherwise the named specials, thresholds and every mismatch).
void print_report(const FnReport& r, bool verbose);

// Writes every report, with full special tables, as JSON to path; throws bl::Error on failure.
void write_json(const std::string& path, const std::vector<FnReport>& reports,
                const CheckOptions& opts);

}  // namespace mathcheck
