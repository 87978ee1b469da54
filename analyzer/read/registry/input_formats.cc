#include "analyzer/read/registry/input_formats.h"

#include <utility>

#include "analyzer/read/nsys/nsys_export_reader.h"
#include "analyzer/read/occtrace/occtrace_reader.h"
#include "analyzer/read/summary/trace_summary.h"
#include "analyzer/read/torch_profiler/torch_profiler_reader.h"

namespace occ {

// One row per format, in the order their sniffs are asked. The databases' sniffs go by their
// tables, the summary's by its name or marker; torch.profiler's claims any JSON so that its
// reader can say what is wrong with a damaged trace, and so comes after the summary, the other
// JSON format.
const std::vector<const InputFormat*>& InputFormats() {
  static const std::vector<const InputFormat*> formats = {
      &OcctraceFormat(),       // occtrace/
      &NsysExportFormat(),     // nsys/
      &TraceSummaryFormat(),   // summary/
      &TorchProfilerFormat(),  // torch_profiler/
  };
  return formats;
}

StatusOr<const InputFormat*> SniffInputFormat(InputProbe& probe) {
  std::string labels;
  for (const InputFormat* format : InputFormats()) {
    OCC_ASSIGN_OR_RETURN(bool claimed, format->sniff(probe));
    if (claimed) return format;
    labels += std::string(labels.empty() ? "neither " : " nor ") + format->label;
  }
  return BadInput(probe.path() + ": " + labels + ": " + probe.Describe());
}

StatusOr<std::unique_ptr<AnalysisInput>> OpenInput(const std::string& path, int file_index) {
  OCC_ASSIGN_OR_RETURN(InputProbe probe, InputProbe::Open(path));
  OCC_ASSIGN_OR_RETURN(const InputFormat* format, SniffInputFormat(probe));
  return format->open(probe, file_index);
}

StatusOr<occtrace::TraceSummary> SummarizeTrace(const std::string& trace) {
  OCC_ASSIGN_OR_RETURN(InputProbe probe, InputProbe::Open(trace));
  OCC_ASSIGN_OR_RETURN(const InputFormat* format, SniffInputFormat(probe));
  if (format == &TraceSummaryFormat()) return BadInput(trace + ": already a summary, not a trace");
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<AnalysisInput> input, format->open(probe, 0));
  OCC_ASSIGN_OR_RETURN(TraceScan scan, input->Scan(/*kernel_regex=*/"", /*jobs=*/0));
  return SummaryOf(*input, scan);
}

}  // namespace occ
