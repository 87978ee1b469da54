#include "analyzer/read/trace_reader.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

namespace occ {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // 15 chars + NUL = the 16-byte header

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct FileCheck {
  bool sqlite = false;
  bool sql_text = false;
  bool torch_json = false;
};

StatusOr<FileCheck> CheckFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) return BadInput(path + ": no such file");
    return BadInput(path + ": cannot access: " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) return BadInput(path + ": is a directory, not a trace file");
  if (!S_ISREG(st.st_mode)) return BadInput(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(path + ": cannot open for reading: " + std::strerror(errno));
  if (st.st_size == 0) return BadInput(path + ": empty file (0 bytes), not a trace");
  char header[16] = {};
  in.read(header, sizeof header);
  FileCheck check;
  if (in.gcount() == 16 && std::memcmp(header, kSqliteMagic, sizeof kSqliteMagic) == 0) {
    check.sqlite = true;
    // A database shorter than its header's first page cannot be whole.
    if (st.st_size < 512) return BadInput(path + ": truncated SQLite database (" +
                                          std::to_string(st.st_size) + " bytes)");
    return check;
  }
  if (EndsWith(path, ".sql")) {
    check.sql_text = true;
    return check;
  }
  // torch.profiler JSON: by name, or by its first byte ('{', or gzip's magic 1f 8b).
  const auto first = static_cast<unsigned char>(header[0]);
  const bool gzip = in.gcount() >= 2 && first == 0x1f && static_cast<unsigned char>(header[1]) == 0x8b;
  size_t skip = 0;
  while (skip < static_cast<size_t>(in.gcount()) && std::isspace(static_cast<unsigned char>(header[skip]))) ++skip;
  if (LooksLikeTorchProfilerPath(path) || gzip ||
      (skip < static_cast<size_t>(in.gcount()) && header[skip] == '{')) {
    check.torch_json = true;
    return check;
  }
  return BadInput(path + ": not an SQLite database (no SQLite header), not a .sql text dump and "
                         "not torch.profiler JSON");
}

}  // namespace

void TraceReader::AddWarning(std::string warning) {
  info_.add_warnings(std::move(warning));
}

StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path, int file_index) {
  OCC_ASSIGN_OR_RETURN(FileCheck check, CheckFile(path));
  std::unique_ptr<TraceReader> reader(new TraceReader());
  reader->file_index_ = file_index;
  reader->info_.set_path(path);
  int64_t torch_kernels = 0;
  OCC_ASSIGN_OR_RETURN(sql::Db db,
                       check.sqlite       ? sql::Db::OpenReadOnly(path)
                       : check.torch_json ? LoadTorchProfiler(path, &reader->kineto_estimates_, &torch_kernels)
                                          : LoadSqlDump(path));
  reader->db_ = std::make_unique<sql::Db>(std::move(db));
  reader->torch_profiler_ = check.torch_json;
  if (check.sqlite) reader->reopen_path_ = path;
  OCC_RETURN_IF_ERROR(sql::RegisterRegexp(*reader->db_));
  OCC_RETURN_IF_ERROR(reader->Validate());
  if (reader->torch_profiler_) {
    reader->info_.set_format("torch.profiler");
    reader->info_.set_schema_version("");
  }
  OCC_RETURN_IF_ERROR(reader->ReadDevices());
  if (reader->torch_profiler_) reader->AddTorchProfilerNotes();
  if (reader->occtrace_) OCC_RETURN_IF_ERROR(reader->LoadAchieved());
  return reader;
}

// Which format the database holds, by its tables; the format's reader checks the rest.
Status TraceReader::Validate() {
  const std::string& path = info_.path();
  // The first read of the schema is where SQLite notices a file that only looks like a
  // database ("file is not a database", "database disk image is malformed").
  int64_t tables = 0;
  {
    auto stmt = db_->Prepare("SELECT count(*) FROM sqlite_master");
    if (!stmt.ok()) return BadInput(path + ": unreadable or corrupt database: " +
                                    stmt.status().message().substr(path.size() + 2));
    auto row = stmt->Step();
    if (!row.ok()) return BadInput(path + ": unreadable or corrupt database: " +
                                   row.status().message().substr(path.size() + 2));
    tables = stmt->Int64(0);
  }
  if (tables == 0) return BadInput(path + ": empty database (no tables): not a trace");

  OCC_ASSIGN_OR_RETURN(bool has_launch, db_->HasTable("OCC_LAUNCH"));
  OCC_ASSIGN_OR_RETURN(bool has_meta, db_->HasTable("OCC_META"));
  std::string kernel_type;
  OCC_ASSIGN_OR_RETURN(bool has_kernel, db_->HasTable("CUPTI_ACTIVITY_KIND_KERNEL", &kernel_type));
  OCC_ASSIGN_OR_RETURN(bool has_nsys_meta, db_->HasTable("META_DATA_EXPORT"));

  if (has_launch || has_meta) {
    occtrace_ = true;
    info_.set_format("occtrace");
    return ValidateOcctrace();
  }
  if (has_kernel && kernel_type == "table") {
    info_.set_format("nsys");
    return ValidateNsysExport();
  }
  if (has_nsys_meta) {
    return BadInput(path + ": Nsight Systems export without CUDA kernel launches (no "
                           "CUPTI_ACTIVITY_KIND_KERNEL table; trace with `nsys profile -t cuda`)");
  }
  return BadInput(path + ": neither an occtrace trace nor an Nsight Systems SQLite export (no "
                         "OCC_LAUNCH or CUPTI_ACTIVITY_KIND_KERNEL table)");
}

StatusOr<TraceScan> TraceReader::Scan(const std::string& kernel_regex, int jobs) {
  OCC_ASSIGN_OR_RETURN(TraceScan scan, occtrace_ ? ScanOcctrace(kernel_regex, jobs)
                                                 : ScanNsys(kernel_regex, jobs));
  if (scan.launches == 0) {
    AddWarning("no kernel launches in this file");
  }
  if (torch_profiler_) CompareKinetoEstimates(scan);
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

Status TraceReader::ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                                  std::vector<ConfigStats>* configs,
                                  const std::function<Status(const LaunchRow&)>& visit) {
  configs->clear();
  return occtrace_ ? ForEachOcctraceLaunch(kernel_regex, limit, configs, visit)
                   : ForEachNsysLaunch(kernel_regex, limit, configs, visit);
}

}  // namespace occ
