// The reader of torch.profiler's Chrome-trace JSON (`prof.export_chrome_trace()`,
// `tensorboard_trace_handler`), plain or gzip-compressed. Claims JSON that no format before it
// in the registry claimed: by name (*.json, *.json.gz) or by its first byte ('{', or gzip's
// magic), so that a damaged trace gets the JSON reader's account of what is wrong with it. The
// file is loaded into an in-memory database in occtrace's schema and read by the occtrace
// reader, with what a torch.profiler trace cannot tell the model said once, and Kineto's own
// occupancy estimate set beside the model's after a scan. Its files:
//   torch_profiler_reader.cc  the format (sniff, open)
//   read_torch_profiler.cc    the JSON into occtrace's schema, Kineto's estimates kept
//   torch_profiler_notes.cc   the notes and the comparison with Kineto's estimates
#pragma once

#include <map>
#include <memory>
#include <string>

#include "sqlite/sqlite_db.h"
#include "base/status.h"
#include "analyzer/read/input_format.h"
#include "analyzer/read/occtrace/occtrace_reader.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

// The registry's entry (registry/input_formats.cc).
const InputFormat& TorchProfilerFormat();

// Kineto's own occupancy estimate for one configuration, kept to set beside the model's.
struct KinetoEstimate {
  double est_pct = -1;           // args."est. achieved occupancy %"; < 0: absent
  int active_blocks = -1;        // args.occupancy.activeBlocksPerMultiprocessor; < 0: absent
  std::string limiting_factors;  // args.occupancy.limitingFactors ("REGS|SMEM"); "" absent
};

// The trace at `path` as an occtrace-schema database, with Kineto's estimates per configuration
// (filed under KinetoKey, trace_rows.h). BadInput naming the file, and the event and field where
// one is at fault, in one line (read_torch_profiler.cc).
StatusOr<sql::Db> LoadTorchProfiler(const std::string& path,
                                    std::map<std::string, KinetoEstimate>* estimates);

class TorchProfilerReader final : public OcctraceReader {
 public:
  // Loads and reads the trace at `path` (file_index: its position among the inputs).
  static StatusOr<std::unique_ptr<TorchProfilerReader>> Open(const std::string& path,
                                                             int file_index);

 private:
  TorchProfilerReader(std::unique_ptr<sql::Db> db, const std::string& path, int file_index,
                      std::map<std::string, KinetoEstimate> estimates);
  // torch_profiler_notes.cc: what a torch.profiler trace lacks, said once per file; and where
  // Kineto's estimate and the model's occupancy differ, both with the reason.
  void AddTorchProfilerNotes();
  void AddScanNotes(const TraceScan& scan) override;

  std::map<std::string, KinetoEstimate> kineto_estimates_;
};

}  // namespace occ
