// torch.profiler JSON as the registry sees it, and the reader's opening steps.
#include "analyzer/read/torch_profiler/torch_profiler_reader.h"

#include <utility>

namespace occ {
namespace {

// Any JSON, by name or first byte: the summary, the other JSON format, comes before this one in
// the registry. A database never is (an SQLite header, or a `.sql` dump).
StatusOr<bool> SniffTorchProfiler(InputProbe& probe) {
  if (probe.holds_database()) return false;
  const std::string& head = probe.head();
  const bool gzip = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
                    static_cast<unsigned char>(head[1]) == 0x8b;
  return probe.NameEndsWith(".json") || probe.NameEndsWith(".json.gz") || gzip ||
         probe.FirstNonSpace() == '{';
}

StatusOr<std::unique_ptr<AnalysisInput>> OpenTorchProfiler(InputProbe& probe, int file_index) {
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<TorchProfilerReader> reader,
                       TorchProfilerReader::Open(probe.path(), file_index));
  return std::unique_ptr<AnalysisInput>(std::move(reader));
}

}  // namespace

const InputFormat& TorchProfilerFormat() {
  static const InputFormat format{"torch.profiler", "torch.profiler JSON", {".json", ".json.gz"},
                                  SniffTorchProfiler, OpenTorchProfiler};
  return format;
}

TorchProfilerReader::TorchProfilerReader(std::unique_ptr<sql::Db> db, const std::string& path,
                                         int file_index,
                                         std::map<std::string, KinetoEstimate> estimates)
    : OcctraceReader(std::move(db), /*reopen_path=*/"", path, file_index),
      kineto_estimates_(std::move(estimates)) {}

StatusOr<std::unique_ptr<TorchProfilerReader>> TorchProfilerReader::Open(const std::string& path,
                                                                         int file_index) {
  std::map<std::string, KinetoEstimate> estimates;
  OCC_ASSIGN_OR_RETURN(sql::Db db, LoadTorchProfiler(path, &estimates));
  std::unique_ptr<TorchProfilerReader> reader(new TorchProfilerReader(
      std::make_unique<sql::Db>(std::move(db)), path, file_index, std::move(estimates)));
  OCC_RETURN_IF_ERROR(reader->Load());
  // The loaded database's OCC_META is the loader's, not the file's: no schema version to show.
  reader->info_.set_format("torch.profiler");
  reader->info_.set_schema_version("");
  reader->AddTorchProfilerNotes();
  return reader;
}

}  // namespace occ
