// The reader of Nsight Systems' SQLite export (`nsys export --type sqlite`), or its `.sql`
// dump. Claims a database with a CUPTI_ACTIVITY_KIND_KERNEL table or Nsight Systems' export
// metadata (META_DATA_EXPORT); gives the export's schema version and one configuration per
// distinct set of launch fields of its kernel rows. Its files:
//   nsys_export_reader.cc  the format (sniff, open), validation and metadata
//   read_nsys_export.cc    the kernel-table scan and the per-launch listing
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "analyzer/read/database_reader.h"
#include "analyzer/read/input_format.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

// The registry's entry (registry/input_formats.cc).
const InputFormat& NsysExportFormat();

class NsysExportReader final : public DatabaseReader {
 public:
  // Validates the export in `db` and reads its facts and devices; arguments as
  // DatabaseReader's. BadInput naming the file and the problem in one line.
  static StatusOr<std::unique_ptr<NsysExportReader>> Open(std::unique_ptr<sql::Db> db,
                                                          std::string reopen_path,
                                                          const std::string& path, int file_index);

  // In start order; one ConfigStats per listed launch (one_config_per_launch).
  Status ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                       std::vector<ConfigStats>* configs,
                       const std::function<Status(const LaunchRow&)>& visit) override;
  bool one_config_per_launch() const override { return true; }
  StatusOr<int64_t> FirstLaunchStart() override;

 private:
  NsysExportReader(std::unique_ptr<sql::Db> db, std::string reopen_path, const std::string& path,
                   int file_index);
  StatusOr<TraceScan> ScanLaunches(const std::string& kernel_regex, int jobs) override;

  // read_nsys_export.cc
  Status ValidateNsysExport();
  Status ReadNsysMeta();
  // The kernel table's column as an SQL expression, or `fallback` for an export without it.
  StatusOr<std::string> NsysColumn(const std::string& column, const std::string& fallback);

  std::map<std::string, bool> nsys_columns_;
};

}  // namespace occ
