// Trace summaries (schema/summary.proto): what the read stage takes from one trace, written to
// a small JSON file next to the trace so that a report across many ranks reads kilobytes per
// rank instead of every launch. `occ-report summarize` writes one (SummarizeTrace); the read
// stage opens one wherever it accepts a trace (OpenSummary, via analysis_input.h). The file is
// the Protobuf JSON mapping of occtrace.TraceSummary, written and parsed by Protobuf's JSON
// util; a file that is not a summary, or a summary that is damaged, newer than this build or
// holds impossible values, is BadInput naming the file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyzer/read/analysis_input.h"
#include "schema/summary.pb.h"
#include "base/status.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

inline constexpr char kSummaryFormatMarker[] = "occtrace-summary";
inline constexpr int kSummaryVersion = 2;
inline constexpr char kSummaryExtension[] = ".summary.json";

// A summary by its name (ends in .summary.json) or its start: '{' and, within the first 512
// bytes, the format marker (a torch.profiler trace is JSON too).
bool LooksLikeSummary(const std::string& path);

// `trace` with its extension replaced by .summary.json: runs/rank3.db -> runs/rank3.summary.json.
std::string DefaultSummaryPath(const std::string& trace);

// Reads `trace` as the report's read stage does (every kernel) and returns its summary.
StatusOr<occtrace::TraceSummary> SummarizeTrace(const std::string& trace);

// The summary as JSON text (field names as in summary.proto, one field per line).
StatusOr<std::string> SummaryToJson(const occtrace::TraceSummary& summary);

// Parses and checks a summary file's text; `path` names it in errors.
StatusOr<occtrace::TraceSummary> ParseSummary(const std::string& path, const std::string& json);

// Opens a summary file as an input of the read stage. Its InputFile.path becomes `path`.
StatusOr<std::unique_ptr<AnalysisInput>> OpenSummary(const std::string& path, int file_index);

}  // namespace occ
