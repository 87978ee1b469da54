// occtrace's trace format, as the registry sees it, and the reader's opening steps.
#include "analyzer/read/occtrace/occtrace_reader.h"

#include <algorithm>
#include <set>
#include <utility>

namespace occ {
namespace {

// Every occtrace trace has both tables (the writer creates the schema first); either one is
// enough to claim a file, so that one missing the other is refused by the reader with the name
// of what it lacks.
StatusOr<bool> SniffOcctrace(InputProbe& probe) {
  OCC_ASSIGN_OR_RETURN(const sql::Db* db, probe.Database());
  if (db == nullptr) return false;
  OCC_ASSIGN_OR_RETURN(bool has_launch, db->HasTable("OCC_LAUNCH"));
  OCC_ASSIGN_OR_RETURN(bool has_meta, db->HasTable("OCC_META"));
  return has_launch || has_meta;
}

StatusOr<std::unique_ptr<AnalysisInput>> OpenOcctrace(InputProbe& probe, int file_index) {
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<sql::Db> db, probe.TakeDatabase());
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<OcctraceReader> reader,
                       OcctraceReader::Open(std::move(db), probe.reopen_path(), probe.path(),
                                            file_index));
  return std::unique_ptr<AnalysisInput>(std::move(reader));
}

}  // namespace

const InputFormat& OcctraceFormat() {
  static const InputFormat format{"occtrace", "an occtrace trace", {".db", ".sqlite", ".sql"},
                                  SniffOcctrace, OpenOcctrace};
  return format;
}

OcctraceReader::OcctraceReader(std::unique_ptr<sql::Db> db, std::string reopen_path,
                               const std::string& path, int file_index)
    : DatabaseReader(std::move(db), std::move(reopen_path), path, file_index) {}

StatusOr<std::unique_ptr<OcctraceReader>> OcctraceReader::Open(std::unique_ptr<sql::Db> db,
                                                               std::string reopen_path,
                                                               const std::string& path,
                                                               int file_index) {
  std::unique_ptr<OcctraceReader> reader(
      new OcctraceReader(std::move(db), std::move(reopen_path), path, file_index));
  OCC_RETURN_IF_ERROR(reader->Load());
  return reader;
}

Status OcctraceReader::Load() {
  OCC_RETURN_IF_ERROR(sql::RegisterRegexp(*db_));
  info_.set_format("occtrace");
  OCC_RETURN_IF_ERROR(ValidateOcctrace());
  OCC_RETURN_IF_ERROR(ReadDevices());
  OCC_RETURN_IF_ERROR(KeepDevicesThatRanKernels());
  return LoadAchieved();
}

// A rank of a multi-GPU job records every GPU it can see, with full facts only for the one it
// ran on: the report describes the GPUs its kernels ran on (with 8 ranks of 8 GPUs, 8 entries
// instead of 64, and no "taken from the architecture table" notes for GPUs nobody used there).
// A trace whose configurations name no recorded device keeps them all.
Status OcctraceReader::KeepDevicesThatRanKernels() {
  if (devices_.size() < 2) return OkStatus();
  OCC_ASSIGN_OR_RETURN(bool has_configs, db_->HasTable("OCC_KERNEL_CONFIG"));
  if (!has_configs) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT DISTINCT deviceId FROM OCC_KERNEL_CONFIG"));
  std::set<int64_t> used;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    used.insert(stmt.Int64(0));
  }
  const bool any_recorded = std::any_of(devices_.begin(), devices_.end(), [&](const TraceDevice& d) {
    return used.count(d.device_id) > 0;
  });
  if (!any_recorded) return OkStatus();
  std::erase_if(devices_, [&](const TraceDevice& d) { return used.count(d.device_id) == 0; });
  return OkStatus();
}

}  // namespace occ
