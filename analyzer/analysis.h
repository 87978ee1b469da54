// occ-report's analysis: reads every input (trace_reader.h), merges launch configurations
// across files, judges each group with the occupancy model and the advice (occupancy.h,
// advice.h), ranks them by GPU-time share x occupancy headroom and fills the Report message
// (schema/report.proto) that every printer renders.
#pragma once

#include <string>
#include <vector>

#include "occupancy.h"
#include "schema/report.pb.h"
#include "status.h"
#include "trace_reader.h"

namespace occ {

struct ReportOptions {
  std::vector<std::string> inputs;
  int top = 20;                    // groups shown; 0 = all
  std::string kernel_regex;        // POSIX ERE over the demangled name; empty = all
  std::string sort = "priority";   // priority | time | headroom | launches | name
  double min_time_pct = 0;         // hide groups below this share of GPU time
  std::string gpu;                 // --gpu: re-evaluate on this GPU (arch table name or cc)
  std::string diff_base;           // --diff BASE: per-kernel deltas against this trace
  std::string command_line;        // recorded in Report.generated_for
};

// Validates option values (sort key, ranges, regex, GPU name) without touching any file.
Status ValidateReportOptions(const ReportOptions& options);

// Builds the report. Unusable inputs are BadInput naming the file; bad rows are warnings in
// Report.files[].warnings; no launch matching the filters is NotFound.
StatusOr<occtrace::Report> BuildReport(const ReportOptions& options);

// The model inputs for a recorded configuration (occupancy-model.md §9). InvalidArgument
// naming the absurd value (grid 0, 1000 registers...) when the record cannot be a launch.
// `on_traced_gpu` is false for --gpu what-if evaluation: the executed carveout the driver chose
// on the traced GPU says nothing about another GPU (whose carveout sizes may not even include it).
StatusOr<LaunchParams> LaunchParamsFor(const ConfigStats& config, const DeviceProps& device,
                                       bool on_traced_gpu = true);

// "grid 1024x1x1, block 256x1x1, 44 regs, smem 0+4096 B" (stable; used by diff rows).
std::string ConfigLabel(const occtrace::KernelGroup& group);

}  // namespace occ
