// What a user asks of a report (occ-report's flags), shared by the pipeline (analysis.h) and the
// report stage (report_builder.h).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace occ {

struct ReportOptions {
  std::vector<std::string> inputs;
  int top = 20;                    // groups shown; 0 = all
  std::string kernel_regex;        // POSIX ERE over the demangled name; empty = all
  std::string sort = "time";       // time | priority | recoverable | owner | headroom | launches | name
  double min_time_pct = 0;         // hide groups below this share of GPU time
  std::string gpu;                 // --gpu: re-evaluate on this GPU (arch table name or cc)
  std::string diff_base;           // --diff BASE: the comparison with this trace (or summary) alone
  int jobs = 0;                    // threads per input's launch table; 0 = automatic
  std::string command_line;        // recorded in Report.generated_for
};

// Validates option values (sort key, ranges, regex, GPU name) without touching any file.
Status ValidateReportOptions(const ReportOptions& options);

}  // namespace occ
