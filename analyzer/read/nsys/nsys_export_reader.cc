// Nsight Systems' SQLite export as the registry sees it, and the reader's opening steps.
#include "analyzer/read/nsys/nsys_export_reader.h"

#include <utility>

namespace occ {
namespace {

// The kernel table marks an export with launches; the export's metadata table one without them,
// which the reader refuses with the option that records them. (occtrace traces have a view of
// the kernel table's name, never the table.)
StatusOr<bool> SniffNsysExport(InputProbe& probe) {
  OCC_ASSIGN_OR_RETURN(const sql::Db* db, probe.Database());
  if (db == nullptr) return false;
  std::string kernel_type;
  OCC_ASSIGN_OR_RETURN(bool has_kernel, db->HasTable("CUPTI_ACTIVITY_KIND_KERNEL", &kernel_type));
  OCC_ASSIGN_OR_RETURN(bool has_export_meta, db->HasTable("META_DATA_EXPORT"));
  return (has_kernel && kernel_type == "table") || has_export_meta;
}

StatusOr<std::unique_ptr<AnalysisInput>> OpenNsysExport(InputProbe& probe, int file_index) {
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<sql::Db> db, probe.TakeDatabase());
  OCC_ASSIGN_OR_RETURN(std::unique_ptr<NsysExportReader> reader,
                       NsysExportReader::Open(std::move(db), probe.reopen_path(), probe.path(),
                                              file_index));
  return std::unique_ptr<AnalysisInput>(std::move(reader));
}

}  // namespace

const InputFormat& NsysExportFormat() {
  static const InputFormat format{"nsys", "an Nsight Systems SQLite export",
                                  {".sqlite", ".db", ".sql"}, SniffNsysExport, OpenNsysExport};
  return format;
}

NsysExportReader::NsysExportReader(std::unique_ptr<sql::Db> db, std::string reopen_path,
                                   const std::string& path, int file_index)
    : DatabaseReader(std::move(db), std::move(reopen_path), path, file_index) {}

StatusOr<std::unique_ptr<NsysExportReader>> NsysExportReader::Open(std::unique_ptr<sql::Db> db,
                                                                   std::string reopen_path,
                                                                   const std::string& path,
                                                                   int file_index) {
  std::unique_ptr<NsysExportReader> reader(
      new NsysExportReader(std::move(db), std::move(reopen_path), path, file_index));
  OCC_RETURN_IF_ERROR(sql::RegisterRegexp(*reader->db_));
  std::string kernel_type;
  OCC_ASSIGN_OR_RETURN(bool has_kernel,
                       reader->db_->HasTable("CUPTI_ACTIVITY_KIND_KERNEL", &kernel_type));
  if (!has_kernel || kernel_type != "table") {
    return BadInput(path + ": Nsight Systems export without CUDA kernel launches (no "
                           "CUPTI_ACTIVITY_KIND_KERNEL table; trace with `nsys profile -t cuda`)");
  }
  reader->info_.set_format("nsys");
  OCC_RETURN_IF_ERROR(reader->ValidateNsysExport());
  OCC_RETURN_IF_ERROR(reader->ReadDevices());
  return reader;
}

StatusOr<int64_t> NsysExportReader::FirstLaunchStart() {
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt stmt,
      db_->Prepare("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start > 0"));
  OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row && !stmt.IsNull(0) ? stmt.Int64(0) : int64_t{0};
}

}  // namespace occ
