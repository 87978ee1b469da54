// The report stage: turns what the pipeline found in the inputs (Analysis) into the Report
// message (schema/report.proto) that every printer in reports/ renders: the summary, GPU time
// by limiter, the judged groups ranked by --sort and cut by --top / --min-time-pct (each shown
// group with its block-size curve), the actions (measured_evidence.h), the unjudged groups, the
// notes; for --diff, the comparison with the base instead (diff.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analyze/report_options.h"
#include "analyzer/model/occupancy.h"
#include "schema/report.pb.h"
#include "base/status.h"
#include "analyzer/read/analysis_input.h"
#include "analyzer/analyze/run_figures.h"

namespace occ {

// What the read, group, judge and advise stages found in one set of inputs.
struct Analysis {
  std::vector<occtrace::InputFile> files;       // with every stage's warnings
  std::vector<occtrace::KernelGroup> judged;    // matched by the filters, unsorted
  std::vector<occtrace::KernelGroup> unjudged;
  std::vector<std::pair<const TraceDevice*, ConfigStats>> group_inputs;  // parallel to judged
  int64_t run_total_ns = 0;
  int64_t run_launches = 0;
  int64_t first_start = 0;
  int64_t last_end = 0;
  std::vector<std::string> rank_warnings;        // ResolveRanks: duplicate ranks, world sizes
  std::vector<std::unique_ptr<AnalysisInput>> inputs;  // traces or summaries, in file order
  RunActions actions;  // over every judged group (run_figures.h); views never change them
};

// NotFound when no launch matches --kernel. `what_if`: the --gpu GPU, if any.
StatusOr<occtrace::Report> ReportFromAnalysis(const ReportOptions& options,
                                              const std::optional<DeviceProps>& what_if,
                                              const Analysis& analysis);

// --diff BASE: the report is the comparison alone (diff.h): totals before → after, one row per
// kernel of either side, warnings when the two may not compare. `base` is null when the base has
// no launches (every kernel is then new). NotFound when no kernel matches --kernel.
StatusOr<occtrace::Report> DiffReport(const ReportOptions& options,
                                      const std::optional<DeviceProps>& what_if, const Analysis* base,
                                      const Analysis& analysis);

}  // namespace occ
