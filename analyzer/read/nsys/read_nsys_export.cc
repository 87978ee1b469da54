// The Nsight Systems SQLite export (`nsys export --type sqlite`). Takes the open database;
// gives the export's schema version from META_DATA_EXPORT and one ConfigStats per distinct
// configuration of CUPTI_ACTIVITY_KIND_KERNEL rows, aggregated in one streamed pass over each
// rowid range of the table (parallel_scan.h), the ranges merged in order. Older exports lack
// newer columns: those read as not recorded.
#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>
#include <utility>

#include "analyzer/read/nsys/nsys_export_reader.h"
#include "analyzer/read/parallel_scan.h"
#include "analyzer/read/read_helpers.h"

namespace occ {
namespace {

// Nsight Systems' exporter writes 0, its default, where a launch requested no carveout
// (NVIDIA's export schema reference: no column is NULL). Only a positive percentage is a
// request; the executed carveout, when reported, decides occupancy anyway (LaunchParamsFor).
int64_t NsysCarveoutRequest(int64_t exported_pct) { return exported_pct > 0 ? exported_pct : -1; }

// The grouping key of an nsys kernel row: the configuration columns in kNsysKeyColumns order,
// NULL as kNullValue.
constexpr int kNsysKeys = 21;
constexpr int64_t kNullValue = std::numeric_limits<int64_t>::min();
// The aggregate that hands the scan its rows (sql::Db::AggregateIntRows).
constexpr char kScanFunction[] = "occ_nsys_scan_rows";
using NsysKey = std::array<int64_t, kNsysKeys>;

uint64_t HashKey(const NsysKey& key) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int64_t v : key) h = (h ^ static_cast<uint64_t>(v)) * 0xff51afd7ed558ccdULL;
  return h ^ (h >> 32);
}

// Configuration keys -> their position in a key list, by open addressing on the key's 64-bit
// hash: a probe compares stored hashes and reads a 168-byte key only on a match, where a
// node-based hash map chases a pointer and compares keys per probe.
class NsysKeyIndex {
 public:
  // The position of `key` in `keys`, appending it first if it is new (`inserted`).
  size_t FindOrAppend(const NsysKey& key, std::vector<NsysKey>* keys, bool* inserted) {
    if ((keys->size() + 1) * 2 > slots_.size()) Grow();
    const uint64_t hash = HashKey(key);
    const size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(hash) & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.position == 0) {
        keys->push_back(key);
        slot = {hash, keys->size()};
        *inserted = true;
        return keys->size() - 1;
      }
      if (slot.hash == hash && (*keys)[slot.position - 1] == key) {
        *inserted = false;
        return slot.position - 1;
      }
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    size_t position = 0;  // 1 + index into the keys; 0 = empty
  };
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, old.size() * 2), Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.position == 0) continue;
      size_t i = static_cast<size_t>(slot.hash) & mask;
      while (slots_[i].position != 0) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }
  std::vector<Slot> slots_;
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

// The metadata, then the tables and columns every export this reader understands has.
Status NsysExportReader::ValidateNsysExport() {
  const std::string& path = info_.path();
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

Status NsysExportReader::ReadNsysMeta() {
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

StatusOr<std::string> NsysExportReader::NsysColumn(const std::string& column,
                                                   const std::string& fallback) {
  auto it = nsys_columns_.find(column);
  if (it == nsys_columns_.end()) {
    OCC_ASSIGN_OR_RETURN(bool present, db_->HasColumn("CUPTI_ACTIVITY_KIND_KERNEL", column));
    it = nsys_columns_.emplace(column, present).first;
  }
  return it->second ? "k.\"" + column + "\"" : fallback;
}

namespace {

// One rowid range's configurations in order of first appearance, with its row counts.
struct NsysPartial {
  NsysKeyIndex index;
  std::vector<NsysKey> keys;
  std::vector<ConfigStats> configs;
  int64_t launches = 0;
  int64_t total_ns = 0;
  int64_t bad = 0;
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t last_end = 0;
  std::vector<TimedLaunch> timed;  // for the overlap sweep; config indexes `configs`
};

// Streams one range of the kernel table and aggregates it per configuration. `select` is the
// aggregate call over the key columns, graphId, contextId, start, end and streamId (SQL maps what
// must not read as kNullValue).
Status ScanNsysRange(const RangePass& pass, const std::string& select, NsysPartial* result) {
  // Built here and moved out at the end: partials side by side in one vector would share cache
  // lines between threads that update their counters on every row.
  NsysPartial partial;
  NsysPartial* out = &partial;
  NsysKey key;
  int64_t rows = 0;
  auto add_row = [&](const int64_t* v, int count) {
    if (count != kNsysKeys + 5) return false;
    if ((++rows & 0xffff) == 0 && pass.Cancelled()) return false;
    const int64_t start = v[kNsysKeys + 2], end = v[kNsysKeys + 3];
    if (start < 0 || end < start) {
      ++out->bad;
      return true;
    }
    std::copy(v, v + kNsysKeys, key.begin());
    bool inserted = false;
    const size_t position = out->index.FindOrAppend(key, &out->keys, &inserted);
    if (inserted) {
      ConfigStats c;
      c.context_id = v[kNsysKeys + 1];
      out->configs.push_back(std::move(c));
    }
    ConfigStats& c = out->configs[position];
    AddLaunch(&c, end - start);
    // The first graph a configuration's launches name (most launch outside graphs: 0).
    if (c.graph_id == 0) c.graph_id = v[kNsysKeys];
    if (start > 0) {
      out->first_start = std::min(out->first_start, start);
      out->timed.push_back({start, end, v[kNsysKeys + 4], static_cast<int32_t>(position)});
    }
    out->last_end = std::max(out->last_end, end);
    ++out->launches;
    out->total_ns = SaturatingAdd(out->total_ns, end - start);
    return true;
  };
  Status status = pass.db->AggregateIntRows(
      kScanFunction, kNullValue, select + RowidRangeClause(pass.range, 1),
      [&](sql::Stmt* stmt) { return BindRowidRange(stmt, pass.range, 1); }, add_row);
  if (pass.Cancelled()) return OkStatus();  // another range failed; this result is discarded
  *result = std::move(partial);
  return status;
}

// Adds the range after `into`'s to it: configurations new to `into` are appended in their order
// of first appearance, the others merged (MergeInto), so that merging every range in rowid
// order gives what one pass over the table gives.
void MergeNsysPartial(NsysPartial* into, NsysPartial&& from) {
  std::vector<int32_t> position_of(from.configs.size());
  for (size_t n = 0; n < from.configs.size(); ++n) {
    bool inserted = false;
    const size_t position = into->index.FindOrAppend(from.keys[n], &into->keys, &inserted);
    position_of[n] = static_cast<int32_t>(position);
    if (inserted) {
      into->configs.push_back(std::move(from.configs[n]));
    } else {
      MergeInto(&into->configs[position], from.configs[n]);
    }
  }
  for (TimedLaunch& l : from.timed) l.config = position_of[static_cast<size_t>(l.config)];
  into->timed.insert(into->timed.end(), from.timed.begin(), from.timed.end());
  std::vector<TimedLaunch>().swap(from.timed);
  into->launches += from.launches;
  // Durations are never negative here, so the saturating sum does not depend on the split.
  into->total_ns = SaturatingAdd(into->total_ns, from.total_ns);
  into->bad += from.bad;
  into->first_start = std::min(into->first_start, from.first_start);
  into->last_end = std::max(into->last_end, from.last_end);
}

// Each configuration's fields from its key, its names from StringIds and whether --kernel
// matches it: once per distinct configuration, not per row.
Status FillConfigs(const sql::Db& db, int file_index, const std::vector<NsysKey>& keys,
                   const std::string& kernel_regex, std::vector<ConfigStats>* configs) {
  OCC_ASSIGN_OR_RETURN(sql::Stmt name_stmt, db.Prepare("SELECT value FROM StringIds WHERE id = ?1"));
  OCC_ASSIGN_OR_RETURN(sql::Stmt match_stmt, db.Prepare("SELECT ?1 REGEXP ?2"));
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
  for (size_t n = 0; n < configs->size(); ++n) {
    ConfigStats& c = (*configs)[n];
    c.file_index = file_index;
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
  return OkStatus();
}

}  // namespace

// Streams the kernel table and aggregates per configuration in a hash map, over rowid ranges
// on up to `jobs` threads (parallel_scan.h). SQLite's own GROUP BY sorts every row on the 21
// key columns: 9 s for 2 M rows on the 2-core reference machine, against under 2 s streamed;
// memory stays proportional to the configurations (per thread).
StatusOr<TraceScan> NsysExportReader::ScanLaunches(const std::string& kernel_regex, int jobs) {
  std::string columns;
  std::vector<std::string> missing;
  for (const auto& col : kNsysKeyColumns) {
    OCC_ASSIGN_OR_RETURN(std::string expr, NsysColumn(col.name, col.fallback));
    if (expr == col.fallback) missing.push_back(col.name);
    columns += expr + ", ";
  }
  OCC_ASSIGN_OR_RETURN(std::string graph, NsysColumn("graphId", "0"));
  OCC_ASSIGN_OR_RETURN(std::string context, NsysColumn("contextId", "0"));
  OCC_ASSIGN_OR_RETURN(std::string stream, NsysColumn("streamId", "0"));
  // graphId, contextId and streamId read NULL as 0, start and end as -1 (a bad row).
  const std::string select = std::string("SELECT ") + kScanFunction + "(" + columns +
                             "coalesce(" + graph + ", 0), coalesce(" + context +
                             ", 0), coalesce(k.start, -1), coalesce(k.\"end\", -1), coalesce(" +
                             stream + ", 0)) FROM CUPTI_ACTIVITY_KIND_KERNEL k";
  const std::vector<RowidRange> ranges =
      SplitRowids(*db_, "CUPTI_ACTIVITY_KIND_KERNEL", reopen_path_.empty() ? 1 : jobs);
  std::vector<NsysPartial> partials(ranges.size());
  OCC_RETURN_IF_ERROR(RunRangePasses(*db_, reopen_path_, ranges, [&](const RangePass& pass) {
    return ScanNsysRange(pass, select, &partials[pass.index]);
  }));
  NsysPartial all = std::move(partials[0]);
  for (size_t i = 1; i < partials.size(); ++i) MergeNsysPartial(&all, std::move(partials[i]));
  partials.clear();
  TraceScan scan;
  scan.configs = std::move(all.configs);
  scan.launches = all.launches;
  scan.total_ns = all.total_ns;
  const int64_t bad = all.bad;
  const int64_t first_start = all.first_start, last_end = all.last_end;
  const std::vector<NsysKey>& keys = all.keys;

  OCC_RETURN_IF_ERROR(FillConfigs(*db_, file_index_, keys, kernel_regex, &scan.configs));
  if (!all.timed.empty()) {
    std::vector<int64_t> device_of_config;
    for (const ConfigStats& c : scan.configs) device_of_config.push_back(c.device_id);
    OverlapResult overlap = SweepOverlap(&all.timed, device_of_config);
    for (size_t i = 0; i < scan.configs.size(); ++i) scan.configs[i].overlap = std::move(overlap.per_config[i]);
    scan.busy_ns = overlap.busy_ns;
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

Status NsysExportReader::ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                                       std::vector<ConfigStats>* configs,
                                       const std::function<Status(const LaunchRow&)>& visit) {
  configs->clear();
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
