#include "trace_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "arch_table.h"
#include "message_text.h"

namespace occ {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // 15 chars + NUL = the 16-byte header

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct FileCheck {
  bool sqlite = false;
  bool sql_text = false;
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
  return BadInput(path + ": not an SQLite database (no SQLite header) and not a .sql text dump");
}

// Integer-valued meta lookups tolerate text with spaces; anything else is "not a number".
std::optional<int64_t> ParseInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return std::nullopt;
  while (*end == ' ') ++end;
  if (*end != '\0') return std::nullopt;
  return static_cast<int64_t>(value);
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
  if (check.sqlite) {
    OCC_ASSIGN_OR_RETURN(sql::Db db, sql::Db::OpenReadOnly(path));
    reader->db_ = std::make_unique<sql::Db>(std::move(db));
  } else {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    std::string text = std::move(buffer).str();
    if (text.find('\0') != std::string::npos) {
      return BadInput(path + ": not an SQLite database and not SQL text (binary data)");
    }
    OCC_ASSIGN_OR_RETURN(sql::Db db, sql::Db::OpenMemory(path));
    reader->db_ = std::make_unique<sql::Db>(std::move(db));
    Status loaded = reader->db_->ExecUntrusted(text);
    if (!loaded.ok()) return BadInput(path + ": cannot load SQL text: " +
                                      loaded.message().substr(path.size() + 2));
  }
  OCC_RETURN_IF_ERROR(sql::RegisterRegexp(*reader->db_));
  OCC_RETURN_IF_ERROR(reader->Validate());
  OCC_RETURN_IF_ERROR(reader->ReadDevices());
  if (reader->occtrace_) OCC_RETURN_IF_ERROR(reader->LoadAchieved());
  return reader;
}

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
    OCC_RETURN_IF_ERROR(ReadOccMeta());
    for (const char* table : {"OCC_LAUNCH", "OCC_KERNEL_CONFIG", "StringIds"}) {
      OCC_ASSIGN_OR_RETURN(bool present, db_->HasTable(table));
      if (!present) return BadInput(path + ": occtrace trace without its " + table + " table");
    }
    return OkStatus();
  }
  if (has_kernel && kernel_type == "table") {
    info_.set_format("nsys");
    OCC_RETURN_IF_ERROR(ReadNsysMeta());
    OCC_ASSIGN_OR_RETURN(bool strings, db_->HasTable("StringIds"));
    if (!strings) return BadInput(path + ": Nsight Systems export without its StringIds table");
    for (const char* column : {"start", "end", "deviceId", "demangledName", "gridX", "gridY",
                               "gridZ", "blockX", "blockY", "blockZ"}) {
      OCC_ASSIGN_OR_RETURN(bool present, db_->HasColumn("CUPTI_ACTIVITY_KIND_KERNEL", column));
      if (!present) {
        return BadInput(path + ": CUPTI_ACTIVITY_KIND_KERNEL lacks column " + column +
                        ": not an Nsight Systems export this occ-report understands");
      }
    }
    return OkStatus();
  }
  if (has_nsys_meta) {
    return BadInput(path + ": Nsight Systems export without CUDA kernel launches (no "
                           "CUPTI_ACTIVITY_KIND_KERNEL table; trace with `nsys profile -t cuda`)");
  }
  return BadInput(path + ": neither an occtrace trace nor an Nsight Systems SQLite export (no "
                         "OCC_LAUNCH or CUPTI_ACTIVITY_KIND_KERNEL table)");
}

Status TraceReader::ReadOccMeta() {
  const std::string& path = info_.path();
  OCC_ASSIGN_OR_RETURN(bool has_meta, db_->HasTable("OCC_META"));
  if (has_meta) {
    OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare("SELECT name, value FROM OCC_META"));
    while (true) {
      OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      meta_[stmt.Text(0)] = stmt.Text(1);
    }
  }
  auto get = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* key : keys) {
      auto it = meta_.find(key);
      if (it != meta_.end()) return it->second;
    }
    return "";
  };
  std::string version = get({"schema_version"});
  if (version.empty()) {
    return BadInput(path + ": occtrace trace without OCC_META.schema_version: unknown schema");
  }
  std::optional<int64_t> number = ParseInt(version);
  if (!number || *number < 1) {
    return BadInput(path + ": unknown trace schema version '" + AbbrevOneLine(version, 40) + "'");
  }
  if (*number > kSupportedTraceSchemaVersion) {
    return BadInput(path + ": trace schema version " + std::to_string(*number) +
                    " is newer than this occ-report reads (" +
                    std::to_string(kSupportedTraceSchemaVersion) + "); upgrade occ-report");
  }
  info_.set_schema_version(version);
  info_.set_command(get({"command", "cmdline", "command_line"}));
  info_.set_host(get({"host", "hostname"}));
  info_.set_pid(ParseInt(get({"pid"})).value_or(0));
  info_.set_occtrace_version(get({"occtrace_version", "version"}));
  info_.set_cuda_driver_version(get({"cuda_driver_version", "driver_version"}));
  info_.set_cuda_runtime_version(get({"cuda_runtime_version", "runtime_version"}));
  info_.set_cupti_version(get({"cupti_version"}));
  info_.set_dropped_records(ParseInt(get({"dropped_records"})).value_or(0));
  info_.set_achieved_mode(get({"achieved_mode"}));
  info_.set_achieved_status(get({"achieved_status"}));
  if (info_.dropped_records() > 0) {
    AddWarning(std::to_string(info_.dropped_records()) +
               " activity records were dropped while tracing: totals are lower bounds");
  }
  return OkStatus();
}

Status TraceReader::ReadNsysMeta() {
  OCC_ASSIGN_OR_RETURN(bool has_meta, db_->HasTable("META_DATA_EXPORT"));
  if (!has_meta) return OkStatus();
  OCC_ASSIGN_OR_RETURN(bool has_name, db_->HasColumn("META_DATA_EXPORT", "name"));
  OCC_ASSIGN_OR_RETURN(bool has_value, db_->HasColumn("META_DATA_EXPORT", "value"));
  if (!has_name || !has_value) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare("SELECT name, value FROM META_DATA_EXPORT"));
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    meta_[stmt.Text(0)] = stmt.Text(1);
  }
  if (auto it = meta_.find("EXPORT_SCHEMA_VERSION"); it != meta_.end()) {
    info_.set_schema_version(it->second);
  }
  return OkStatus();
}

namespace {

// Reads a column by name from a `SELECT *`-style row, so exports lacking newer columns work.
class NamedRow {
 public:
  explicit NamedRow(const sql::Stmt& stmt) : stmt_(stmt) {
    for (int i = 0; i < stmt.ColumnCount(); ++i) names_[stmt.ColumnName(i)] = i;
  }
  std::optional<int64_t> Int(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end() || stmt_.IsNull(it->second)) return std::nullopt;
    return stmt_.Int64(it->second);
  }
  std::string Text(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end()) return "";
    return stmt_.Text(it->second);
  }

 private:
  const sql::Stmt& stmt_;
  std::map<std::string, int> names_;
};

// A recorded device field: positive and not absurd (nsys writes 0 or NULL when unknown).
int Field(const std::optional<int64_t>& v) {
  if (!v || *v <= 0 || *v > INT_MAX) return 0;
  return static_cast<int>(*v);
}

}  // namespace

Status TraceReader::ReadDevices() {
  OCC_ASSIGN_OR_RETURN(bool has_gpu, db_->HasTable("TARGET_INFO_GPU"));
  OCC_ASSIGN_OR_RETURN(bool has_cuda, db_->HasTable("TARGET_INFO_CUDA_DEVICE"));
  OCC_ASSIGN_OR_RETURN(bool has_occ_device, db_->HasTable("OCC_DEVICE"));
  if (!has_gpu) {
    AddWarning("no TARGET_INFO_GPU table: the GPU is unknown (use --gpu NAME to evaluate)");
    return OkStatus();
  }
  std::string query;
  if (has_cuda) {
    query = "SELECT g.*, c.cudaId AS occ_cuda_id, c.numMultiprocessors AS occ_cuda_sms";
  } else {
    query = "SELECT g.*, coalesce(g.cuDevice, g.id) AS occ_cuda_id, NULL AS occ_cuda_sms";
  }
  if (has_occ_device) {
    query += ", o.reservedSharedMemPerBlock AS occ_reserved, o.maxThreadsPerMultiprocessor AS "
             "occ_max_threads_sm";
  }
  query += has_cuda ? " FROM TARGET_INFO_CUDA_DEVICE c JOIN TARGET_INFO_GPU g ON g.id = c.gpuId"
                    : " FROM TARGET_INFO_GPU g";
  if (has_occ_device) query += " LEFT JOIN OCC_DEVICE o ON o.gpuId = g.id";
  query += " ORDER BY occ_cuda_id";
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare(query));
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    NamedRow r(stmt);
    std::optional<int64_t> cuda_id = r.Int("occ_cuda_id");
    if (!cuda_id) continue;
    // nsys repeats a device per process: keep the first row of each ordinal.
    bool seen = std::any_of(devices_.begin(), devices_.end(),
                            [&](const TraceDevice& d) { return d.device_id == *cuda_id; });
    if (seen || *cuda_id < 0 || *cuda_id > INT_MAX) continue;

    TraceDevice device;
    device.file_index = file_index_;
    device.device_id = static_cast<int>(*cuda_id);
    DeviceProps& p = device.props;
    p.name = r.Text("name");
    p.cc_major = Field(r.Int("computeMajor"));
    p.cc_minor = std::max<int>(0, static_cast<int>(r.Int("computeMinor").value_or(0) & 0xff));
    if (p.cc_major == 0) {
      p.cc_major = Field(r.Int("smMajor"));
      p.cc_minor = std::max<int>(0, static_cast<int>(r.Int("smMinor").value_or(0) & 0xff));
    }
    p.num_sms = Field(r.Int("occ_cuda_sms"));
    if (p.num_sms == 0) p.num_sms = Field(r.Int("smCount"));
    p.warp_size = Field(r.Int("threadsPerWarp"));
    p.max_threads_per_block = Field(r.Int("maxThreadsPerBlock"));
    p.max_threads_per_sm = Field(r.Int("occ_max_threads_sm"));
    int warps_per_sm = Field(r.Int("maxWarpsPerSm"));
    if (p.max_threads_per_sm == 0 && warps_per_sm > 0 && p.warp_size > 0) {
      p.max_threads_per_sm = warps_per_sm * p.warp_size;
    }
    p.regs_per_block = Field(r.Int("maxRegistersPerBlock"));
    p.regs_per_sm = Field(r.Int("maxRegistersPerSm"));
    p.smem_per_block = Field(r.Int("maxShmemPerBlock"));
    p.smem_per_block_optin = Field(r.Int("maxShmemPerBlockOptin"));
    p.smem_per_sm = Field(r.Int("maxShmemPerSm"));
    std::optional<int64_t> reserved = r.Int("occ_reserved");
    bool reserved_recorded = reserved.has_value() && *reserved >= 0 && *reserved <= INT_MAX;
    if (reserved_recorded) p.reserved_smem_per_block = static_cast<int>(*reserved);

    // The unknown GPU: neither a compute capability nor a name the table knows.
    if (p.cc_major == 0) {
      if (p.name.empty()) {
        device.unknown_reason = "device " + std::to_string(device.device_id) +
                                " has neither a compute capability nor a name";
        devices_.push_back(std::move(device));
        continue;
      }
      auto looked_up = LookupGpu(p.name);
      if (!looked_up.ok()) {
        device.unknown_reason = "device " + std::to_string(device.device_id) + " ('" +
                                AbbrevOneLine(p.name) + "') has no compute capability and is not in "
                                "the architecture table";
        devices_.push_back(std::move(device));
        continue;
      }
      p.cc_major = looked_up->cc_major;
      p.cc_minor = looked_up->cc_minor;
      if (p.num_sms == 0) {
        p.num_sms = looked_up->num_sms;
        device.defaulted_fields.push_back("num_sms");
      }
      device.defaulted_fields.push_back("compute_capability");
    }
    if (p.num_sms == 0) {
      auto by_cc = DevicePropsForCc(p.cc_major, p.cc_minor, 0);
      if (by_cc.ok()) {
        p.num_sms = by_cc->num_sms;
        device.defaulted_fields.push_back("num_sms");
      }
    }
    // nsys exports lack the per-block reserve: for them it is the SM maximum less the opt-in
    // per-block maximum (233472 - 232448 = 1024 on H100), which the driver reports consistently.
    if (!reserved_recorded && p.smem_per_sm > 0 && p.smem_per_block_optin > 0 &&
        p.smem_per_sm >= p.smem_per_block_optin && p.smem_per_sm - p.smem_per_block_optin <= 4096) {
      p.reserved_smem_per_block = p.smem_per_sm - p.smem_per_block_optin;
      device.defaulted_fields.push_back("reserved_smem_per_block (derived: maxShmemPerSm - "
                                        "maxShmemPerBlockOptin)");
      reserved_recorded = true;
    }
    std::vector<std::string> filled;
    Status fill = FillMissingDeviceFields(&p, &filled);
    if (!fill.ok()) {
      device.unknown_reason = "device " + std::to_string(device.device_id) + ": " + fill.message();
      devices_.push_back(std::move(device));
      continue;
    }
    if (!reserved_recorded && p.cc_major >= 8 &&
        std::find(filled.begin(), filled.end(), "reserved_smem_per_block") == filled.end()) {
      filled.push_back("reserved_smem_per_block");
    }
    for (auto& f : filled) device.defaulted_fields.push_back(std::move(f));
    auto arch = FindArchConstants(p.cc_major, p.cc_minor);
    if (arch.ok()) device.max_blocks_per_sm = (*arch)->max_blocks_per_sm;
    device.known = p.num_sms > 0;
    if (!device.known) device.unknown_reason = "device " + std::to_string(device.device_id) +
                                               ": SM count unknown";
    device.source = device.defaulted_fields.empty() ? occtrace::SOURCE_TRACE
                                                    : occtrace::SOURCE_ARCH_TABLE;
    devices_.push_back(std::move(device));
  }
  return OkStatus();
}

Status TraceReader::LoadAchieved() {
  OCC_ASSIGN_OR_RETURN(bool present, db_->HasTable("OCC_ACHIEVED"));
  if (!present) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT correlationId, contextId, status, "
                                    "achievedOccupancyPct, gpuTimeNs FROM OCC_ACHIEVED"));
  int64_t bad = 0;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    AchievedRow a;
    a.context_id = stmt.Int64(1);
    a.status = stmt.Text(2);
    if (!stmt.IsNull(3)) a.pct = stmt.Double(3);
    if (!stmt.IsNull(4)) a.gpu_time_ns = stmt.Double(4);
    if (a.status == "measured" && !(a.pct >= 0 && a.pct <= 100.5)) {
      ++bad;
      continue;
    }
    if (!(a.gpu_time_ns >= 0 && a.gpu_time_ns < 1e15)) a.gpu_time_ns = -1;
    achieved_.emplace(stmt.Int64(0), std::move(a));
  }
  constexpr size_t kFilterBits = size_t{1} << 20;
  achieved_filter_.assign(kFilterBits / 64, 0);
  for (const auto& [corr, row] : achieved_) {
    uint64_t bit = static_cast<uint64_t>(corr) & (kFilterBits - 1);
    achieved_filter_[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  if (bad > 0) {
    AddWarning(std::to_string(bad) + " OCC_ACHIEVED rows with an achieved occupancy outside "
               "0..100% skipped");
  }
  return OkStatus();
}

const TraceReader::AchievedRow* TraceReader::FindAchieved(int64_t correlation_id,
                                                          int64_t context_id) const {
  if (achieved_filter_.empty()) return nullptr;
  uint64_t bit = static_cast<uint64_t>(correlation_id) & (achieved_filter_.size() * 64 - 1);
  if ((achieved_filter_[bit / 64] & (uint64_t{1} << (bit % 64))) == 0) return nullptr;
  auto [begin, end] = achieved_.equal_range(correlation_id);
  for (auto it = begin; it != end; ++it) {
    if (it->second.context_id == context_id) return &it->second;
  }
  return nullptr;
}

StatusOr<std::vector<ConfigStats>> TraceReader::ReadOccConfigs(const std::string& kernel_regex,
                                                               std::vector<int64_t>* ids) {
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt stmt,
      db_->Prepare(
          "SELECT c.id, c.deviceId, c.contextId, sd.value, ss.value, sm.value, c.gridX, c.gridY, "
          "c.gridZ, c.blockX, c.blockY, c.blockZ, c.registersPerThread, c.staticSharedMemory, "
          "c.dynamicSharedMemory, c.localMemoryPerThread, c.sharedMemoryExecuted, "
          "c.sharedMemoryLimitConfig, c.sharedMemoryRequestedPercentage, c.cacheConfig, "
          "c.clusterX, c.clusterY, c.clusterZ, c.graphId, "
          "CASE WHEN ?1 IS NULL THEN 1 ELSE coalesce(sd.value, ss.value, '') REGEXP ?1 END "
          "FROM OCC_KERNEL_CONFIG c LEFT JOIN StringIds sd ON sd.id = c.demangledName "
          "LEFT JOIN StringIds ss ON ss.id = c.shortName "
          "LEFT JOIN StringIds sm ON sm.id = c.mangledName ORDER BY c.id"));
  if (kernel_regex.empty()) {
    OCC_RETURN_IF_ERROR(stmt.BindNull(1));
  } else {
    OCC_RETURN_IF_ERROR(stmt.BindText(1, kernel_regex));
  }
  std::vector<ConfigStats> configs;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ConfigStats c;
    c.file_index = file_index_;
    ids->push_back(stmt.Int64(0));
    c.device_id = stmt.Int64(1);
    c.context_id = stmt.Int64(2);
    c.name = stmt.Text(3);
    c.short_name = stmt.Text(4);
    c.mangled_name = stmt.Text(5);
    if (c.name.empty()) c.name = !c.short_name.empty() ? c.short_name : c.mangled_name;
    if (c.name.empty()) c.name = "(unnamed kernel)";
    for (int i = 0; i < 3; ++i) {
      c.grid[i] = stmt.Int64(6 + i);
      c.block[i] = stmt.Int64(9 + i);
    }
    c.registers_known = !stmt.IsNull(12);
    c.registers_per_thread = stmt.Int64(12);
    c.static_smem = stmt.Int64(13);
    c.dynamic_smem = stmt.Int64(14);
    c.local_mem_per_thread = stmt.Int64(15);
    c.smem_executed = stmt.Int64(16);
    c.smem_limit_config = stmt.Int64(17);
    c.carveout_pct = stmt.IsNull(18) ? -1 : stmt.Int64(18);
    c.cache_config = stmt.Int64(19);
    for (int i = 0; i < 3; ++i) c.cluster[i] = stmt.IsNull(20 + i) ? 1 : stmt.Int64(20 + i);
    c.graph_id = stmt.Int64(23);
    c.matched = stmt.Int64(24) != 0;
    configs.push_back(std::move(c));
  }
  OCC_RETURN_IF_ERROR(AddFunctionFacts(&configs));
  OCC_RETURN_IF_ERROR(AddTritonMetadata(&configs));
  return configs;
}

// OCC_TRITON_KERNEL (traces from occtrace versions that read Triton's cache): the num_warps and
// num_stages a Triton kernel was compiled with, so advice can name the triton.Config to change.
Status TraceReader::AddTritonMetadata(std::vector<ConfigStats>* configs) {
  OCC_ASSIGN_OR_RETURN(bool has_triton, db_->HasTable("OCC_TRITON_KERNEL"));
  if (!has_triton) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT s.value, t.numWarps, t.numStages FROM OCC_TRITON_KERNEL t "
                                    "JOIN StringIds s ON s.id = t.mangledName"));
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> metadata;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    int64_t warps = stmt.IsNull(1) ? -1 : stmt.Int64(1);
    int64_t stages = stmt.IsNull(2) ? -1 : stmt.Int64(2);
    // A damaged file's absurd values are dropped rather than quoted back to the user.
    if (warps < 1 || warps > 32) warps = -1;
    if (stages < 0 || stages > 16) stages = -1;
    metadata[stmt.Text(0)] = {warps, stages};
  }
  for (ConfigStats& c : *configs) {
    auto it = metadata.find(c.mangled_name);
    if (it == metadata.end()) continue;
    c.triton_num_warps = it->second.first;
    c.triton_num_stages = it->second.second;
  }
  return OkStatus();
}

// OCC_FUNCTION (traces from occtrace versions that read the loaded cubins) has what CUPTI's
// kernel records lack: named-barrier counts and __launch_bounds__. A function name can appear
// in several modules; the most constraining values are kept.
Status TraceReader::AddFunctionFacts(std::vector<ConfigStats>* configs) {
  OCC_ASSIGN_OR_RETURN(bool has_functions, db_->HasTable("OCC_FUNCTION"));
  if (!has_functions) return OkStatus();
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt stmt,
      db_->Prepare("SELECT s.value, max(f.barrierCount), min(nullif(f.maxThreadsPerBlock, 0)) "
                   "FROM OCC_FUNCTION f JOIN StringIds s ON s.id = f.mangledName "
                   "GROUP BY f.mangledName"));
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> facts;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    int64_t barriers = stmt.IsNull(1) ? -1 : stmt.Int64(1);
    int64_t max_threads = stmt.IsNull(2) ? 0 : stmt.Int64(2);
    // Absurd values from a damaged file are ignored rather than fed to the model.
    if (barriers < -1 || barriers > 16) barriers = -1;
    if (max_threads < 0 || max_threads > 1024) max_threads = 0;
    facts[stmt.Text(0)] = {barriers, max_threads};
  }
  for (ConfigStats& c : *configs) {
    auto it = facts.find(c.mangled_name);
    if (it == facts.end()) continue;
    c.barrier_count = it->second.first;
    c.func_max_threads = it->second.second;
  }
  return OkStatus();
}

namespace {

// configId -> index into the config vector: dense ids (the injector's) use a table, sparse
// ones a hash map.
class ConfigIndex {
 public:
  explicit ConfigIndex(const std::vector<int64_t>& ids) {
    int64_t max_id = ids.empty() ? 0 : *std::max_element(ids.begin(), ids.end());
    int64_t min_id = ids.empty() ? 0 : *std::min_element(ids.begin(), ids.end());
    dense_ = min_id >= 0 && max_id < 4 * static_cast<int64_t>(ids.size()) + 4096;
    if (dense_) {
      table_.assign(static_cast<size_t>(max_id) + 1, -1);
      for (size_t i = 0; i < ids.size(); ++i) {
        table_[static_cast<size_t>(ids[i])] = static_cast<int32_t>(i);
      }
    } else {
      for (size_t i = 0; i < ids.size(); ++i) map_[ids[i]] = static_cast<int32_t>(i);
    }
  }
  int32_t Find(int64_t id) const {
    if (dense_) {
      return (id >= 0 && static_cast<uint64_t>(id) < table_.size()) ? table_[static_cast<size_t>(id)]
                                                                     : -1;
    }
    auto it = map_.find(id);
    return it == map_.end() ? -1 : it->second;
  }

 private:
  bool dense_ = true;
  std::vector<int32_t> table_;
  std::unordered_map<int64_t, int32_t> map_;
};

// Nsight Systems' exporter writes 0, its default, where a launch requested no carveout
// (NVIDIA's export schema reference: no column is NULL). Only a positive percentage is a
// request; the executed carveout, when reported, decides occupancy anyway (analysis.cc).
int64_t NsysCarveoutRequest(int64_t exported_pct) { return exported_pct > 0 ? exported_pct : -1; }

void AddLaunch(ConfigStats* c, int64_t ns) {
  if (c->launches == 0) {
    c->min_ns = ns;
    c->max_ns = ns;
  } else {
    c->min_ns = std::min(c->min_ns, ns);
    c->max_ns = std::max(c->max_ns, ns);
  }
  ++c->launches;
  c->total_ns = SaturatingAdd(c->total_ns, ns);
}

}  // namespace

StatusOr<TraceScan> TraceReader::Scan(const std::string& kernel_regex) {
  return occtrace_ ? ScanOcctrace(kernel_regex) : ScanNsys(kernel_regex);
}

StatusOr<TraceScan> TraceReader::ScanOcctrace(const std::string& kernel_regex) {
  std::vector<int64_t> ids;
  OCC_ASSIGN_OR_RETURN(std::vector<ConfigStats> configs, ReadOccConfigs(kernel_regex, &ids));
  ConfigIndex index(ids);
  const bool with_achieved = !achieved_.empty();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare(with_achieved
                                        ? "SELECT configId, start, duration, correlationId "
                                          "FROM OCC_LAUNCH"
                                        : "SELECT configId, start, duration FROM OCC_LAUNCH"));
  TraceScan scan;
  int64_t unknown_config = 0, negative = 0, absurd = 0, replayed_without_time = 0, untimed = 0;
  int64_t first_start = std::numeric_limits<int64_t>::max(), last_end = 0;
  // Launch times beyond this are corrupt rows, not kernels (about 11.5 days).
  constexpr int64_t kMaxDurationNs = 1'000'000'000'000'000;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    int32_t i = index.Find(stmt.Int64(0));
    if (i < 0) {
      ++unknown_config;
      continue;
    }
    ConfigStats& c = configs[static_cast<size_t>(i)];
    int64_t start = stmt.Int64(1);
    int64_t duration = stmt.Int64(2);
    if (duration < 0 || start < 0) {
      ++negative;
      continue;
    }
    if (duration > kMaxDurationNs) {
      ++absurd;
      continue;
    }
    if (with_achieved) {
      const AchievedRow* a = FindAchieved(stmt.Int64(3), c.context_id);
      if (a != nullptr) {
        // A replayed (profiled) launch has no CUPTI timestamp: its time is the profiler's.
        if (duration == 0) {
          if (a->gpu_time_ns >= 0) {
            duration = static_cast<int64_t>(a->gpu_time_ns + 0.5);
          } else {
            ++replayed_without_time;
          }
        }
        if (a->status == "measured") {
          if (c.achieved_samples == 0) {
            c.achieved_min = c.achieved_max = a->pct;
          } else {
            c.achieved_min = std::min(c.achieved_min, a->pct);
            c.achieved_max = std::max(c.achieved_max, a->pct);
          }
          ++c.achieved_samples;
          c.achieved_sum += a->pct;
        } else {
          ++c.achieved_not_measured;
          ++c.not_measured_reasons[a->status.empty() ? "unknown" : a->status];
        }
      }
    }
    if (duration == 0 && start > 0) {
      // Handed over by a forced flush while running (trace_writer.cc): a launch, no time.
      ++c.launches;
      ++c.untimed_launches;
      ++scan.launches;
      ++untimed;
      continue;
    }
    AddLaunch(&c, duration);
    if (start > 0) {
      first_start = std::min(first_start, start);
      last_end = std::max(last_end, SaturatingAdd(start, duration));
    }
    ++scan.launches;
    scan.total_ns = SaturatingAdd(scan.total_ns, duration);
  }
  if (unknown_config > 0) {
    AddWarning(std::to_string(unknown_config) +
               " OCC_LAUNCH rows reference a configId missing from OCC_KERNEL_CONFIG: skipped");
  }
  if (negative > 0) {
    AddWarning(std::to_string(negative) + " OCC_LAUNCH rows with a negative start or duration: "
               "skipped");
  }
  if (absurd > 0) {
    AddWarning(std::to_string(absurd) + " OCC_LAUNCH rows with a duration above 10^15 ns: skipped");
  }
  if (untimed > 0) {
    AddWarning(std::to_string(untimed) + " launches have no duration (their record was flushed while the "
               "kernel ran): counted as launches, left out of GPU time");
  }
  if (replayed_without_time > 0) {
    AddWarning(std::to_string(replayed_without_time) +
               " profiled launches have no GPU time (OCC_ACHIEVED.gpuTimeNs empty): counted as 0 ns");
  }
  if (first_start != std::numeric_limits<int64_t>::max()) {
    scan.first_start = first_start;
    scan.last_end = last_end;
  }
  for (auto& c : configs) {
    if (c.launches > 0) scan.configs.push_back(std::move(c));
  }
  info_.set_launches(scan.launches);
  return scan;
}

StatusOr<std::string> TraceReader::NsysColumn(const std::string& column,
                                              const std::string& fallback) {
  auto it = nsys_columns_.find(column);
  if (it == nsys_columns_.end()) {
    OCC_ASSIGN_OR_RETURN(bool present, db_->HasColumn("CUPTI_ACTIVITY_KIND_KERNEL", column));
    it = nsys_columns_.emplace(column, present).first;
  }
  return it->second ? "k.\"" + column + "\"" : fallback;
}

namespace {

// The grouping key of an nsys kernel row: the configuration columns in kNsysKeyColumns order,
// NULL as kNullValue.
constexpr int kNsysKeys = 21;
constexpr int64_t kNullValue = std::numeric_limits<int64_t>::min();
using NsysKey = std::array<int64_t, kNsysKeys>;

struct NsysKeyHash {
  size_t operator()(const NsysKey& key) const {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int64_t v : key) {
      h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return static_cast<size_t>(h);
  }
};

struct NsysColumnSpec {
  const char* name;
  const char* fallback;  // what an older export without the column means
};
// Order matters: ConfigStats is filled from these positions.
constexpr NsysColumnSpec kNsysKeyColumns[kNsysKeys] = {
    {"deviceId", "0"},          {"demangledName", "NULL"},       {"shortName", "NULL"},
    {"mangledName", "NULL"},    {"gridX", "0"},                  {"gridY", "0"},
    {"gridZ", "0"},             {"blockX", "0"},                 {"blockY", "0"},
    {"blockZ", "0"},            {"registersPerThread", "NULL"},  {"staticSharedMemory", "0"},
    {"dynamicSharedMemory", "0"}, {"localMemoryPerThread", "0"}, {"sharedMemoryExecuted", "0"},
    {"sharedMemoryLimitConfig", "0"}, {"sharedMemoryRequestedPercentage", "NULL"},
    {"cacheConfig", "0"},       {"clusterX", "1"},               {"clusterY", "1"},
    {"clusterZ", "1"},
};

}  // namespace

// Streams the kernel table once and aggregates per configuration in a hash map. SQLite's own
// GROUP BY sorts every row on the 21 key columns: 9 s for 2 M rows on the 2-core reference
// machine, against under 2 s streamed; memory stays proportional to the configurations.
StatusOr<TraceScan> TraceReader::ScanNsys(const std::string& kernel_regex) {
  std::string columns;
  std::vector<std::string> missing;
  for (const auto& col : kNsysKeyColumns) {
    OCC_ASSIGN_OR_RETURN(std::string expr, NsysColumn(col.name, col.fallback));
    if (expr == col.fallback) missing.push_back(col.name);
    columns += expr + ", ";
  }
  OCC_ASSIGN_OR_RETURN(std::string graph, NsysColumn("graphId", "0"));
  OCC_ASSIGN_OR_RETURN(std::string context, NsysColumn("contextId", "0"));
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt stmt,
      db_->Prepare("SELECT " + columns + graph + ", " + context +
                   ", k.start, k.\"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL k"));
  std::unordered_map<NsysKey, size_t, NsysKeyHash> index;
  std::vector<NsysKey> keys;
  TraceScan scan;
  int64_t bad = 0;
  int64_t first_start = std::numeric_limits<int64_t>::max(), last_end = 0;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    constexpr int kStart = kNsysKeys + 2, kEnd = kNsysKeys + 3;
    if (stmt.IsNull(kStart) || stmt.IsNull(kEnd)) {
      ++bad;
      continue;
    }
    int64_t start = stmt.Int64(kStart), end = stmt.Int64(kEnd);
    if (start < 0 || end < start) {
      ++bad;
      continue;
    }
    NsysKey key;
    for (int i = 0; i < kNsysKeys; ++i) key[static_cast<size_t>(i)] = stmt.IsNull(i) ? kNullValue : stmt.Int64(i);
    auto [it, inserted] = index.try_emplace(key, scan.configs.size());
    if (inserted) {
      ConfigStats c;
      c.file_index = file_index_;
      c.graph_id = stmt.Int64(kNsysKeys);
      c.context_id = stmt.Int64(kNsysKeys + 1);
      scan.configs.push_back(std::move(c));
      keys.push_back(key);
    }
    ConfigStats& c = scan.configs[it->second];
    AddLaunch(&c, end - start);
    if (c.graph_id == 0) c.graph_id = stmt.Int64(kNsysKeys);
    if (start > 0) first_start = std::min(first_start, start);
    last_end = std::max(last_end, end);
    ++scan.launches;
    scan.total_ns = SaturatingAdd(scan.total_ns, end - start);
  }

  // Names and --kernel for the few distinct configurations, not per row.
  OCC_ASSIGN_OR_RETURN(sql::Stmt name_stmt, db_->Prepare("SELECT value FROM StringIds WHERE id = ?1"));
  OCC_ASSIGN_OR_RETURN(sql::Stmt match_stmt, db_->Prepare("SELECT ?1 REGEXP ?2"));
  std::unordered_map<int64_t, std::string> names;
  auto name_of = [&](int64_t id) -> StatusOr<std::string> {
    if (id == kNullValue) return std::string();
    auto found = names.find(id);
    if (found != names.end()) return found->second;
    OCC_RETURN_IF_ERROR(name_stmt.Reset());
    OCC_RETURN_IF_ERROR(name_stmt.BindInt64(1, id));
    OCC_ASSIGN_OR_RETURN(bool row, name_stmt.Step());
    std::string value = row ? name_stmt.Text(0) : "";
    names.emplace(id, value);
    return value;
  };
  for (size_t n = 0; n < scan.configs.size(); ++n) {
    ConfigStats& c = scan.configs[n];
    const NsysKey& k = keys[n];
    auto value = [&](size_t i, int64_t if_null) { return k[i] == kNullValue ? if_null : k[i]; };
    c.device_id = value(0, 0);
    OCC_ASSIGN_OR_RETURN(std::string demangled, name_of(k[1]));
    OCC_ASSIGN_OR_RETURN(c.short_name, name_of(k[2]));
    OCC_ASSIGN_OR_RETURN(c.mangled_name, name_of(k[3]));
    c.name = !demangled.empty() ? demangled : !c.short_name.empty() ? c.short_name : c.mangled_name;
    if (c.name.empty()) c.name = "(unnamed kernel)";
    for (size_t i = 0; i < 3; ++i) {
      c.grid[i] = value(4 + i, 0);
      c.block[i] = value(7 + i, 0);
      c.cluster[i] = value(18 + i, 1);
    }
    c.registers_known = k[10] != kNullValue;
    c.registers_per_thread = value(10, 0);
    c.static_smem = value(11, 0);
    c.dynamic_smem = value(12, 0);
    c.local_mem_per_thread = value(13, 0);
    c.smem_executed = value(14, 0);
    c.smem_limit_config = value(15, 0);
    // Nsight Systems exports write a column's default where the value is missing (every column
    // is NOT NULL): a 0 % request there is no evidence of a request, so it reads as none.
    c.carveout_pct = NsysCarveoutRequest(value(16, -1));
    c.cache_config = value(17, 0);
    if (!kernel_regex.empty()) {
      OCC_RETURN_IF_ERROR(match_stmt.Reset());
      OCC_RETURN_IF_ERROR(match_stmt.BindText(1, c.name));
      OCC_RETURN_IF_ERROR(match_stmt.BindText(2, kernel_regex));
      OCC_ASSIGN_OR_RETURN(bool row, match_stmt.Step());
      c.matched = row && match_stmt.Int64(0) != 0;
    }
  }
  if (bad > 0) {
    AddWarning(std::to_string(bad) + " kernel rows with a missing or negative start/duration: "
               "skipped");
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    AddWarning("CUPTI_ACTIVITY_KIND_KERNEL lacks columns " + list +
               " (older export): treated as not recorded");
  }
  if (first_start != std::numeric_limits<int64_t>::max()) {
    scan.first_start = first_start;
    scan.last_end = last_end;
  }
  info_.set_launches(scan.launches);
  return scan;
}

Status TraceReader::ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                                  std::vector<ConfigStats>* configs,
                                  const std::function<Status(const LaunchRow&)>& visit) {
  configs->clear();
  if (occtrace_) {
    std::vector<int64_t> ids;
    OCC_ASSIGN_OR_RETURN(*configs, ReadOccConfigs(kernel_regex, &ids));
    ConfigIndex index(ids);
    OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                         db_->Prepare("SELECT configId, start, duration, streamId, correlationId "
                                      "FROM OCC_LAUNCH"));
    int64_t shown = 0;
    while (limit <= 0 || shown < limit) {
      OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      int32_t i = index.Find(stmt.Int64(0));
      if (i < 0 || !(*configs)[static_cast<size_t>(i)].matched) continue;
      const ConfigStats& c = (*configs)[static_cast<size_t>(i)];
      LaunchRow launch;
      launch.start = stmt.Int64(1);
      launch.duration = stmt.Int64(2);
      launch.stream_id = stmt.Int64(3);
      launch.correlation_id = stmt.Int64(4);
      launch.config = static_cast<size_t>(i);
      if (const AchievedRow* a = FindAchieved(launch.correlation_id, c.context_id)) {
        launch.achieved_status = a->status;
        if (a->status == "measured") launch.achieved_pct = a->pct;
        if (launch.duration == 0 && a->gpu_time_ns >= 0) {
          launch.duration = static_cast<int64_t>(a->gpu_time_ns + 0.5);
        }
      }
      OCC_RETURN_IF_ERROR(visit(launch));
      ++shown;
    }
    return OkStatus();
  }
  // nsys: the configuration is the row itself; one ConfigStats per listed launch.
  std::string cols;
  static const char* kCols[] = {"deviceId", "gridX", "gridY", "gridZ", "blockX", "blockY",
                                "blockZ", "registersPerThread", "staticSharedMemory",
                                "dynamicSharedMemory", "localMemoryPerThread",
                                "sharedMemoryExecuted", "sharedMemoryLimitConfig",
                                "sharedMemoryRequestedPercentage", "cacheConfig", "clusterX",
                                "clusterY", "clusterZ", "streamId", "correlationId", "contextId"};
  for (const char* col : kCols) {
    std::string fallback = std::string(col).rfind("cluster", 0) == 0 ? "1" : "NULL";
    OCC_ASSIGN_OR_RETURN(std::string expr, NsysColumn(col, fallback));
    cols += ", " + expr + " AS " + col;
  }
  // The filter is evaluated once per distinct name (the IN list), and names are joined only to
  // the rows that survive ORDER BY ... LIMIT, not to every row of the export.
  std::string query =
      "SELECT k.*, sd.value AS demangled, ss.value AS short FROM ("
      "SELECT k.start AS start, k.\"end\" - k.start AS duration" + cols +
      ", k.demangledName AS demangled_id, k.shortName AS short_id "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE ?1 IS NULL OR k.demangledName IN "
      "(SELECT id FROM StringIds WHERE value REGEXP ?1) ORDER BY k.start LIMIT ?2) k "
      "LEFT JOIN StringIds sd ON sd.id = k.demangled_id "
      "LEFT JOIN StringIds ss ON ss.id = k.short_id ORDER BY k.start";
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare(query));
  if (kernel_regex.empty()) {
    OCC_RETURN_IF_ERROR(stmt.BindNull(1));
  } else {
    OCC_RETURN_IF_ERROR(stmt.BindText(1, kernel_regex));
  }
  OCC_RETURN_IF_ERROR(stmt.BindInt64(2, limit > 0 ? limit : -1));
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    NamedRow r(stmt);
    ConfigStats c;
    c.file_index = file_index_;
    c.device_id = r.Int("deviceId").value_or(0);
    c.context_id = r.Int("contextId").value_or(0);
    c.name = r.Text("demangled");
    c.short_name = r.Text("short");
    if (c.name.empty()) c.name = c.short_name.empty() ? "(unnamed kernel)" : c.short_name;
    static const char* kGrid[] = {"gridX", "gridY", "gridZ"};
    static const char* kBlock[] = {"blockX", "blockY", "blockZ"};
    static const char* kCluster[] = {"clusterX", "clusterY", "clusterZ"};
    for (int i = 0; i < 3; ++i) {
      c.grid[i] = r.Int(kGrid[i]).value_or(0);
      c.block[i] = r.Int(kBlock[i]).value_or(0);
      c.cluster[i] = r.Int(kCluster[i]).value_or(1);
    }
    auto regs = r.Int("registersPerThread");
    c.registers_known = regs.has_value();
    c.registers_per_thread = regs.value_or(0);
    c.static_smem = r.Int("staticSharedMemory").value_or(0);
    c.dynamic_smem = r.Int("dynamicSharedMemory").value_or(0);
    c.local_mem_per_thread = r.Int("localMemoryPerThread").value_or(0);
    c.smem_executed = r.Int("sharedMemoryExecuted").value_or(0);
    c.smem_limit_config = r.Int("sharedMemoryLimitConfig").value_or(0);
    c.carveout_pct = NsysCarveoutRequest(r.Int("sharedMemoryRequestedPercentage").value_or(-1));
    c.cache_config = r.Int("cacheConfig").value_or(0);
    configs->push_back(std::move(c));
    LaunchRow launch;
    launch.start = r.Int("start").value_or(0);
    launch.duration = r.Int("duration").value_or(0);
    launch.stream_id = r.Int("streamId").value_or(0);
    launch.correlation_id = r.Int("correlationId").value_or(0);
    launch.config = configs->size() - 1;
    OCC_RETURN_IF_ERROR(visit(launch));
  }
  return OkStatus();
}

}  // namespace occ
