// Trace summaries (schema/summary.proto): what the read stage takes from one trace, written to
// a small JSON file next to the trace so that a report across many ranks reads kilobytes per
// rank instead of every launch. `occ-report summarize` writes one (SummaryOf, through
// SummarizeTrace in registry/input_formats.h); the read stage opens one wherever it accepts a
// trace (TraceSummaryFormat, registered in registry/input_formats.cc). The file is the Protobuf
// JSON mapping of occtrace.TraceSummary, written and parsed by Protobuf's JSON util; a file that
// is not a summary, or a summary that is damaged, newer than this build or holds impossible
// values, is BadInput naming the file. A summary keeps the launches summed only: it is an
// AnalysisInput, not a TraceInput.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schema/summary.pb.h"
#include "base/status.h"
#include "analyzer/read/analysis_input.h"
#include "analyzer/read/input_format.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

inline constexpr char kSummaryFormatMarker[] = "occtrace-summary";
inline constexpr int kSummaryVersion = 2;
inline constexpr char kSummaryExtension[] = ".summary.json";

// The registry's entry (registry/input_formats.cc). Its sniff claims a summary by its name
// (ends in .summary.json) or its start: '{' and, within the first 512 bytes, the format marker
// (a torch.profiler trace is JSON too).
const InputFormat& TraceSummaryFormat();

// `trace` with its extension replaced by .summary.json: runs/rank3.db -> runs/rank3.summary.json.
std::string DefaultSummaryPath(const std::string& trace);

// The summary of `trace`, read as the report's read stage reads it: `scan` is its Scan of every
// kernel, run before (the scan's warnings are then in the trace's facts).
occtrace::TraceSummary SummaryOf(const AnalysisInput& trace, const TraceScan& scan);

// The summary as JSON text (field names as in summary.proto, one field per line).
StatusOr<std::string> SummaryToJson(const occtrace::TraceSummary& summary);

// Parses and checks a summary file's text; `path` names it in errors.
StatusOr<occtrace::TraceSummary> ParseSummary(const std::string& path, const std::string& json);

}  // namespace occ
