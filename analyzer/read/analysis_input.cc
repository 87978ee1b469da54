#include "analyzer/read/analysis_input.h"

#include <utility>

#include "analyzer/read/trace_reader.h"
#include "analyzer/read/trace_summary.h"

namespace occ {
namespace {

class TraceInput : public AnalysisInput {
 public:
  explicit TraceInput(std::unique_ptr<TraceReader> reader) : reader_(std::move(reader)) {}
  const occtrace::InputFile& info() const override { return reader_->info(); }
  const std::vector<TraceDevice>& devices() const override { return reader_->devices(); }
  StatusOr<TraceScan> Scan(const std::string& kernel_regex, int jobs) override {
    return reader_->Scan(kernel_regex, jobs);
  }

 private:
  std::unique_ptr<TraceReader> reader_;
};

}  // namespace

StatusOr<std::unique_ptr<AnalysisInput>> OpenInput(const std::string& path, int file_index) {
  if (LooksLikeSummary(path)) return OpenSummary(path, file_index);
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path, file_index));
  return std::unique_ptr<AnalysisInput>(new TraceInput(std::move(reader)));
}

}  // namespace occ
