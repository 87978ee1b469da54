// The read stage's one face to the rest of the pipeline: an input file is either a trace, read
// by TraceReader (trace_reader.h), or a summary of one, read by trace_summary.h. Both give the
// same three things -- the file's facts, its devices, its launches summed per configuration --
// so the stages after the read stage never ask which one they got.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schema/report.pb.h"
#include "base/status.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

class AnalysisInput {
 public:
  virtual ~AnalysisInput() = default;
  // The file's facts; warnings of the scan are in it once Scan has run.
  virtual const occtrace::InputFile& info() const = 0;
  virtual const std::vector<TraceDevice>& devices() const = 0;
  // Every configuration with its launches, ConfigStats::matched set by `kernel_regex` (POSIX
  // ERE over the name, empty = all) as TraceReader::Scan sets it. `jobs`: threads for a trace's
  // launch table (TraceReader::Scan); a summary has none to read.
  virtual StatusOr<TraceScan> Scan(const std::string& kernel_regex, int jobs) = 0;
};

// Opens `path` (file_index: its position among the inputs) as a trace summary when it is one
// (LooksLikeSummary, trace_summary.h), else as a trace. BadInput naming the file otherwise.
StatusOr<std::unique_ptr<AnalysisInput>> OpenInput(const std::string& path, int file_index);

}  // namespace occ
