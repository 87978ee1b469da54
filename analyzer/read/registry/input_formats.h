// The read stage's entrance: which format an input file is, and its reader. Every format the
// analyzer reads is one row of the table in input_formats.cc -- occtrace traces, Nsight Systems
// exports, trace summaries, torch.profiler JSON -- each an InputFormat (analyzer/read/
// input_format.h) defined in its own folder. A file's format is the first whose sniff claims
// it; a new format is a folder with its reader and InputFormat, one row of the table, and its
// library in this folder's CMakeLists.txt.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schema/summary.pb.h"
#include "base/status.h"
#include "analyzer/read/analysis_input.h"
#include "analyzer/read/input_format.h"

namespace occ {

// The registered formats, in the order their sniffs are asked.
const std::vector<const InputFormat*>& InputFormats();

// The format of the probed file: the first whose sniff claims it. BadInput naming the file in
// one line when none does, or when the file cannot be read far enough to tell (a corrupt
// database).
StatusOr<const InputFormat*> SniffInputFormat(InputProbe& probe);

// Opens `path` (file_index: its position among the inputs) with the reader of its format.
// BadInput naming the file and the problem in one line otherwise.
StatusOr<std::unique_ptr<AnalysisInput>> OpenInput(const std::string& path, int file_index);

// Reads `trace`, in any format but a summary's, as the report's read stage does (every kernel),
// and returns its summary (summary/trace_summary.h).
StatusOr<occtrace::TraceSummary> SummarizeTrace(const std::string& trace);

}  // namespace occ
