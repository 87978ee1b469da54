// What the readers of a trace held in an SQLite database share: occtrace traces (occtrace/),
// Nsight Systems exports (nsys/), `.sql` dumps of either, and torch.profiler JSON once loaded into
// occtrace's schema (torch_profiler/). Holds the database and the path a scan thread reopens it
// by (parallel_scan.h), the file's facts and warnings, and its devices from the tables both
// layouts share (read_devices.cc); runs the checks every scan ends with. A format's reader adds
// how it validates the file, sums its launches (ScanLaunches) and lists them. Inputs are opened
// read-only and never modified.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schema/report.pb.h"
#include "sqlite/sqlite_db.h"
#include "base/status.h"
#include "schema/meta_keys.h"
#include "analyzer/read/analysis_input.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

class DatabaseReader : public TraceInput {
 public:
  const occtrace::InputFile& info() const override { return info_; }
  const std::vector<TraceDevice>& devices() const override { return devices_; }
  // The format's sums (ScanLaunches), then a warning for a file without launches, the format's
  // notes on the scan (AddScanNotes) and warnings for kernels on devices the file does not
  // describe.
  StatusOr<TraceScan> Scan(const std::string& kernel_regex, int jobs) final;
  std::string DistributedBackend() const override;

  // Warnings about bad rows and defaulted fields, kept in info().warnings.
  void AddWarning(std::string warning);

 protected:
  // OCC_META's value of `key`, "" when absent. Only keys schema/meta_keys.h declares compile: a
  // key nobody writes is never read.
  std::string MetaValue(meta::CheckedMetaKey<> key) const {
    auto it = meta_.find(std::string(key.name));
    return it == meta_.end() ? "" : it->second;
  }
  // `db` read by this reader (REGEXP registered: --kernel filters in SQL); `reopen_path` as
  // InputProbe::reopen_path; `path` names the file; `file_index` is its position among the
  // inputs.
  DatabaseReader(std::unique_ptr<sql::Db> db, std::string reopen_path, const std::string& path,
                 int file_index);

  // Every launch summed per configuration, ConfigStats::matched set by `kernel_regex`, over up to
  // `jobs` threads (0: automatic); sets info().launches.
  virtual StatusOr<TraceScan> ScanLaunches(const std::string& kernel_regex, int jobs) = 0;
  // What the format has to say about a scan, added between Scan's warnings.
  virtual void AddScanNotes(const TraceScan& /*scan*/) {}

  // TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE and OCC_DEVICE into devices_ (read_devices.cc).
  Status ReadDevices();

  std::unique_ptr<sql::Db> db_;
  std::string reopen_path_;
  occtrace::InputFile info_;
  std::vector<TraceDevice> devices_;
  // The file's own name -> value rows (OCC_META, META_DATA_EXPORT).
  std::map<std::string, std::string> meta_;
  int file_index_ = 0;
};

}  // namespace occ
