#include "analyzer/read/database_reader.h"

#include <set>
#include <utility>

namespace occ {

DatabaseReader::DatabaseReader(std::unique_ptr<sql::Db> db, std::string reopen_path,
                               const std::string& path, int file_index)
    : db_(std::move(db)), reopen_path_(std::move(reopen_path)), file_index_(file_index) {
  info_.set_path(path);
}

void DatabaseReader::AddWarning(std::string warning) {
  info_.add_warnings(std::move(warning));
}

std::string DatabaseReader::DistributedBackend() const {
  return MetaValue("distributed_backend");
}

StatusOr<TraceScan> DatabaseReader::Scan(const std::string& kernel_regex, int jobs) {
  OCC_ASSIGN_OR_RETURN(TraceScan scan, ScanLaunches(kernel_regex, jobs));
  if (scan.launches == 0) {
    AddWarning("no kernel launches in this file");
  }
  AddScanNotes(scan);
  // Kernels on devices the trace does not describe.
  std::set<int64_t> missing;
  for (const auto& c : scan.configs) {
    if (!FindDevice(devices_, c.device_id)) missing.insert(c.device_id);
  }
  for (int64_t id : missing) {
    AddWarning("kernels ran on device " + std::to_string(id) +
               ", which has no row in TARGET_INFO_GPU / TARGET_INFO_CUDA_DEVICE");
  }
  return scan;
}

}  // namespace occ
