// occ-report's analysis: BuildReport runs the inputs through the pipeline below and returns the
// Report message that every printer renders. analysis.cc drives the stages; each stage's header
// says what it takes and gives.
//
//   read    analysis_input.h     a file -> its devices and one row per launch configuration
//                                (ConfigStats, trace_rows.h): a trace through trace_reader.h
//                                (one reader per format, read_*.cc), or a summary of one
//                                written by `occ-report summarize` (trace_summary.h)
//   attribute pm_attribution.h   a trace's PM samples -> the configurations that ran alone in
//                                them (clean samples) and their achieved occupancy; run by the
//                                occtrace reader, its sums travel in ConfigStats::pm
//   group   grouping.h           the rows of every file -> groups of one kernel, configuration
//                                and GPU model; profiled launches folded into their siblings'
//   judge   judge.h              a group -> its verdict: theoretical occupancy (occupancy.h),
//                                limiter, waves, issues, achieved occupancy and its gap
//   advise  advice.h             a launch -> the model's suggestions (block size, register cap,
//                                shared memory, barriers, grid size)
//           group_advice.h       which suggestions fit the traced group; headroom, priority
//           throughput_ceiling.h is more occupancy useful? measured throughput against the
//                                hardware's ceilings; caps what a kernel near one can gain
//           measured_evidence.h  the owner's knobs and the trace's own measurements
//   report  report_builder.h     the groups -> the Report: summary, ranking, notes, --diff
//   print   reports/printer.h    the Report -> text, Markdown, HTML, JSON or CSV
#pragma once

#include <string>
#include <vector>

#include "schema/report.pb.h"
#include "status.h"

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

// Builds the report. Unusable inputs are BadInput naming the file; bad rows are warnings in
// Report.files[].warnings; no launch matching the filters is NotFound.
StatusOr<occtrace::Report> BuildReport(const ReportOptions& options);

}  // namespace occ
