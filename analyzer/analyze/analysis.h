// occ-report's analysis: BuildReport runs the inputs through the pipeline below and returns the
// Report message that every printer renders. analysis.cc drives the stages; each stage's header
// says what it takes and gives.
//
//   read    analysis_input.h     a file -> its devices and one row per launch configuration
//                                (ConfigStats, trace_rows.h), by the reader of its format
//                                (read/registry/input_formats.h: occtrace/, nsys/,
//                                torch_profiler/, or a summary/ written by `occ-report summarize`)
//   attribute pm_attribution.h   a trace's PM samples -> each configuration's share of their
//                                counters (least squares over every sample, pm_rates.h) and its
//                                error; run by the occtrace reader, its sums travel in
//                                ConfigStats::pm
//   group   grouping.h           the rows of every file -> groups of one kernel, configuration
//                                and GPU model; profiled launches folded into their siblings'
//   judge   judge.h              a group -> its verdict: theoretical occupancy (occupancy.h),
//                                limiter, waves, issues, achieved occupancy and its gap
//           achieved_figure.h    which achieved figure a group shows, or why none
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

#include "analyzer/analyze/report_options.h"
#include "schema/report.pb.h"
#include "base/status.h"

namespace occ {

// Builds the report. Unusable inputs are BadInput naming the file; bad rows are warnings in
// Report.files[].warnings; no launch matching the filters is NotFound.
StatusOr<occtrace::Report> BuildReport(const ReportOptions& options);

}  // namespace occ
