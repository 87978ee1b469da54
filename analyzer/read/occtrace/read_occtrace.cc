// occtrace's own trace format (schema/trace_schema.sql). Takes the open database; gives the run's
// facts from OCC_META, one ConfigStats per OCC_KERNEL_CONFIG row with what the cubin
// (OCC_FUNCTION) and Triton's cache (OCC_TRITON_KERNEL) add, and OCC_LAUNCH summed into them in
// one streamed pass per rowid range of OCC_LAUNCH (parallel_scan.h; of a launch row only its
// interval, stream and configuration are kept, for the overlap sweep of launch_overlap.h),
// achieved occupancy joined from OCC_ACHIEVED by correlationId and context.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "analyzer/model/message_text.h"
#include "analyzer/read/parallel_scan.h"
#include "analyzer/read/rank_identity.h"
#include "analyzer/read/occtrace/occtrace_reader.h"
#include "analyzer/read/read_helpers.h"

namespace occ {
namespace {

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

// PM attribution's units (pm_attribution.h): one per launch configuration per device. Each row's
// unit, and per unit the row that takes its sums: the first with launches, since rows without
// are dropped from the scan.
struct PmUnits {
  std::vector<int32_t> of_row;
  std::vector<size_t> row_of_unit;
};

PmUnits MakePmUnits(const std::vector<ConfigStats>& configs) {
  PmUnits units;
  std::map<std::pair<int64_t, std::string>, int32_t> by_key;
  for (size_t i = 0; i < configs.size(); ++i) {
    const ConfigStats& c = configs[i];
    auto [it, added] = by_key.emplace(std::pair{c.device_id, LaunchConfigKey(c)},
                                      static_cast<int32_t>(units.row_of_unit.size()));
    if (added) units.row_of_unit.push_back(i);
    const size_t unit = static_cast<size_t>(it->second);
    if (configs[units.row_of_unit[unit]].launches == 0 && c.launches > 0) units.row_of_unit[unit] = i;
    units.of_row.push_back(it->second);
  }
  return units;
}

// How a report names a unit a figure could not be told apart from.
std::string PartnerName(const ConfigStats& c) {
  return (c.short_name.empty() ? c.name : c.short_name) + " (grid " + DimsText(c.grid) + ", block " +
         DimsText(c.block) + ")";
}

}  // namespace

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

// The metadata, then the tables every occtrace trace has.
Status OcctraceReader::ValidateOcctrace() {
  const std::string& path = info_.path();
  OCC_RETURN_IF_ERROR(ReadOccMeta());
  for (const char* table : {"OCC_LAUNCH", "OCC_KERNEL_CONFIG", "StringIds"}) {
    OCC_ASSIGN_OR_RETURN(bool present, db_->HasTable(table));
    if (!present) return BadInput(path + ": occtrace trace without its " + table + " table");
  }
  return OkStatus();
}

Status OcctraceReader::ReadOccMeta() {
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
  auto get = [this](meta::CheckedMetaKey<> key) { return MetaValue(key); };
  std::string version = get("schema_version");
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
  info_.set_command(get("command_line"));
  info_.set_host(get("host"));
  info_.set_pid(ParseInt(get("pid")).value_or(0));
  info_.set_occtrace_version(get("occtrace_version"));
  info_.set_cuda_driver_version(get("cuda_driver_version"));
  info_.set_cuda_runtime_version(get("cuda_runtime_version"));
  info_.set_cupti_version(get("cupti_version"));
  info_.set_dropped_records(ParseInt(get("dropped_records")).value_or(0));
  info_.set_achieved_mode(get("achieved_mode"));
  info_.set_trace_mode(get("trace_mode"));
  info_.set_achieved_status(get("achieved_status"));
  SetRankFromMeta(meta_, &info_);
  info_.set_pm_status(get("pm_status"));
  info_.set_pm_interval_ns(std::max<int64_t>(0, ParseInt(get("pm_interval_ns")).value_or(0)));
  info_.set_pm_samples(std::max<int64_t>(0, ParseInt(get("pm_samples")).value_or(0)));
  info_.set_pm_overflows(std::max<int64_t>(0, ParseInt(get("pm_overflows")).value_or(0)));
  info_.set_pm_decode_errors(std::max<int64_t>(0, ParseInt(get("pm_decode_errors")).value_or(0)));
  info_.set_pm_sampling_ns(std::max<int64_t>(0, ParseInt(get("pm_sampling_ms")).value_or(0)) * 1'000'000);
  info_.set_pm_run_ns(std::max<int64_t>(0, ParseInt(get("pm_run_ms")).value_or(0)) * 1'000'000);
  // What the tracer says of the samples it did not store (OCC_META keys of traces since 2026-11):
  // -1 where a key is absent, so that "not recorded" never reads as "none lost".
  auto count = [&](meta::CheckedMetaKey<> key) -> int64_t {
    const std::string value = get(key);
    return value.empty() ? -1 : std::max<int64_t>(0, ParseInt(value).value_or(0));
  };
  info_.set_pm_samples_lost(count("pm_samples_lost"));
  info_.set_pm_samples_lost_busy(count("pm_samples_lost_busy"));
  info_.set_pm_samples_lost_idle(count("pm_samples_lost_idle"));
  info_.set_pm_samples_undecoded(count("pm_samples_undecoded"));
  info_.set_pm_samples_rejected_long(count("pm_samples_rejected_long"));
  if (info_.dropped_records() > 0) {
    AddWarning(std::to_string(info_.dropped_records()) +
               " activity records were dropped while tracing: totals are lower bounds");
  }
  return OkStatus();
}

Status OcctraceReader::LoadAchieved() {
  OCC_ASSIGN_OR_RETURN(bool present, db_->HasTable("OCC_ACHIEVED"));
  if (!present) return OkStatus();
  // Throughput columns joined the table later: older traces lack them (read as NULL).
  OCC_ASSIGN_OR_RETURN(bool has_throughput, db_->HasColumn("OCC_ACHIEVED", "dramThroughputPct"));
  const std::string throughput_columns =
      has_throughput ? "dramThroughputPct, l2ThroughputPct, l1ThroughputPct, issueSlotsPct, tensorPipePct"
                     : "NULL, NULL, NULL, NULL, NULL";
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT correlationId, contextId, status, achievedOccupancyPct, gpuTimeNs, " +
                                    throughput_columns + " FROM OCC_ACHIEVED"));
  constexpr int kFirstThroughputColumn = 5;
  int64_t bad = 0, bad_throughput = 0;
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
    for (int unit = 0; unit < kThroughputUnits; ++unit) {
      if (stmt.IsNull(kFirstThroughputColumn + unit)) continue;
      const double pct = stmt.Double(kFirstThroughputColumn + unit);
      // Counters can overshoot a sustained peak by a little; beyond that the value is not a %.
      if (pct >= 0 && pct <= 110) {
        a.throughput[unit] = pct;
      } else {
        ++bad_throughput;
      }
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
  if (bad_throughput > 0) {
    AddWarning(std::to_string(bad_throughput) + " OCC_ACHIEVED throughput values outside 0..110% ignored");
  }
  return OkStatus();
}

const OcctraceReader::AchievedRow* OcctraceReader::FindAchieved(int64_t correlation_id,
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

StatusOr<std::vector<ConfigStats>> OcctraceReader::ReadOccConfigs(const std::string& kernel_regex,
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
  OCC_RETURN_IF_ERROR(AddModuleOwners(&configs));
  OCC_RETURN_IF_ERROR(AddTritonMetadata(&configs));
  OCC_RETURN_IF_ERROR(AddTritonSources(&configs));
  return configs;
}

// OCC_TRITON_KERNEL (traces from occtrace versions that read Triton's cache): the num_warps and
// num_stages a Triton kernel was compiled with, so advice can name the triton.Config to change.
Status OcctraceReader::AddTritonMetadata(std::vector<ConfigStats>* configs) {
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

// OCC_TRITON_SOURCE (traces from occtrace versions that follow Triton's IR to the source): where
// the kernel is defined and, for torch.compile, the source nodes Inductor generated it from.
Status OcctraceReader::AddTritonSources(std::vector<ConfigStats>* configs) {
  OCC_ASSIGN_OR_RETURN(bool has_sources, db_->HasTable("OCC_TRITON_SOURCE"));
  if (!has_sources) return OkStatus();
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT s.value, t.sourceFile, t.sourceLine, t.sourceNodes, t.originalAten "
                                    "FROM OCC_TRITON_SOURCE t JOIN StringIds s ON s.id = t.mangledName"));
  struct Source {
    std::string file, nodes, aten;
    int64_t line = 0;
  };
  std::unordered_map<std::string, Source> sources;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    Source source;
    if (!stmt.IsNull(1)) source.file = stmt.Text(1);
    if (!stmt.IsNull(2)) source.line = std::max<int64_t>(0, stmt.Int64(2));
    if (!stmt.IsNull(3)) source.nodes = stmt.Text(3);
    if (!stmt.IsNull(4)) source.aten = stmt.Text(4);
    sources[stmt.Text(0)] = std::move(source);
  }
  for (ConfigStats& c : *configs) {
    auto it = sources.find(c.mangled_name);
    if (it == sources.end()) continue;
    c.source_file = it->second.file;
    c.source_line = it->second.line;
    c.source_nodes = it->second.nodes;
    c.original_aten = it->second.aten;
  }
  return OkStatus();
}

// OCC_FUNCTION (traces from occtrace versions that read the loaded cubins) has what CUPTI's
// kernel records lack: named-barrier counts and __launch_bounds__. A function name can appear
// in several modules; the most constraining values are kept.
Status OcctraceReader::AddFunctionFacts(std::vector<ConfigStats>* configs) {
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

// OCC_MODULE (traces from occtrace versions that record it): which object loaded the module that
// holds each configuration's function, and which file its image was mapped from. Kernel records
// do not name their module, so the function is found by name in OCC_FUNCTION; where several
// modules hold that name (XLA's autotuning variants, one module each), the one compiled with the
// configuration's registers and local memory. Several candidates that disagree leave it unknown.
Status OcctraceReader::AddModuleOwners(std::vector<ConfigStats>* configs) {
  OCC_ASSIGN_OR_RETURN(bool has_functions, db_->HasTable("OCC_FUNCTION"));
  OCC_ASSIGN_OR_RETURN(bool has_modules, db_->HasTable("OCC_MODULE"));
  if (!has_functions || !has_modules) return OkStatus();
  OCC_ASSIGN_OR_RETURN(bool has_loader, db_->HasColumn("OCC_MODULE", "loader"));
  OCC_ASSIGN_OR_RETURN(bool has_library, db_->HasColumn("OCC_MODULE", "library"));
  if (!has_loader && !has_library) return OkStatus();
  const std::string sql = std::string("SELECT s.value, f.registersPerThread, f.localMemoryPerThread, ") +
                          (has_loader ? "m.loader" : "NULL") + ", " + (has_library ? "m.library" : "NULL") +
                          " FROM OCC_FUNCTION f JOIN StringIds s ON s.id = f.mangledName "
                          "JOIN OCC_MODULE m ON m.moduleId = f.moduleId";
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare(sql));
  struct Holder {
    int64_t registers, local_memory;  // -1: not recorded
    std::string loader, library;
  };
  std::unordered_map<std::string, std::vector<Holder>> holders;
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    Holder h{stmt.IsNull(1) ? -1 : stmt.Int64(1), stmt.IsNull(2) ? -1 : stmt.Int64(2),
             stmt.IsNull(3) ? "" : stmt.Text(3), stmt.IsNull(4) ? "" : stmt.Text(4)};
    holders[stmt.Text(0)].push_back(std::move(h));
  }
  for (ConfigStats& c : *configs) {
    auto it = holders.find(c.mangled_name);
    if (it == holders.end()) continue;
    // The cubin's register count can differ from the one the driver reports for the launch
    // (CuPy's first RawKernel on an H200: 10 in the cubin, 16 launched), so it only chooses
    // between modules; with none matching, every module holding the name is a candidate.
    std::vector<const Holder*> match;
    for (const Holder& h : it->second) {
      if (h.registers >= 0 && c.registers_known && h.registers != c.registers_per_thread) continue;
      if (h.local_memory >= 0 && c.local_mem_per_thread > 0 && h.local_memory != c.local_mem_per_thread) continue;
      match.push_back(&h);
    }
    if (match.empty()) {
      for (const Holder& h : it->second) match.push_back(&h);
    }
    bool same_loader = true, same_library = true;
    for (const Holder* h : match) {
      same_loader = same_loader && h->loader == match.front()->loader;
      same_library = same_library && h->library == match.front()->library;
    }
    if (same_loader) c.loader = match.front()->loader;
    if (same_library) c.module_library = match.front()->library;
  }
  return OkStatus();
}

// One rowid range of OCC_LAUNCH summed per configuration (launch counts and times, indexed
// like the configurations), with the achieved-occupancy rows its launches matched in row order:
// those are added after the merge, in the order one pass would add them, so that floating-point
// sums come out the same for any split.
struct OcctraceReader::OccLaunchPartial {
  std::vector<ConfigStats> tallies;
  std::vector<std::pair<int32_t, const AchievedRow*>> achieved;
  std::vector<TimedLaunch> timed;  // for the overlap sweep
  int64_t unplaced_ns = 0;         // time of launches without a start (profiler replays)
  int64_t unknown_config = 0, negative = 0, absurd = 0, replayed_without_time = 0, untimed = 0;
  int64_t launches = 0, total_ns = 0;
  int64_t first_start = std::numeric_limits<int64_t>::max(), last_end = 0;
};

namespace {

// The aggregate that hands the launch scan its rows (sql::Db::AggregateIntRows).
constexpr char kLaunchScanFunction[] = "occ_launch_scan_rows";

// One achieved-occupancy row into its configuration.
void AddAchievedSample(ConfigStats* c, double pct, const std::string& status,
                       const double (&throughput)[kThroughputUnits]) {
  if (status == "measured") {
    if (c->achieved_samples == 0) {
      c->achieved_min = c->achieved_max = pct;
    } else {
      c->achieved_min = std::min(c->achieved_min, pct);
      c->achieved_max = std::max(c->achieved_max, pct);
    }
    ++c->achieved_samples;
    c->achieved_sum += pct;
    c->throughput.AddLaunch(throughput);
  } else {
    ++c->achieved_not_measured;
    ++c->not_measured_reasons[status.empty() ? "unknown" : status];
  }
}

// Each configuration's overlap with the rest of its device, and the file's busy span
// (launch_overlap.h); unknown when no launch has a start and a duration. A replayed launch has
// no start (`unplaced_ns` is their time): the profiler ran it alone, so its time is busy time of
// its own, and its overlap stays unknown.
void SweepLaunchOverlap(std::vector<TimedLaunch>* timed, int64_t unplaced_ns, std::vector<ConfigStats>* configs,
                        TraceScan* scan) {
  if (timed->empty()) return;
  std::vector<int64_t> device_of_config;
  device_of_config.reserve(configs->size());
  for (const ConfigStats& c : *configs) device_of_config.push_back(c.device_id);
  OverlapResult overlap = SweepOverlap(timed, device_of_config);
  std::vector<TimedLaunch>().swap(*timed);
  for (size_t i = 0; i < configs->size(); ++i) (*configs)[i].overlap = std::move(overlap.per_config[i]);
  scan->busy_ns = SaturatingAdd(overlap.busy_ns, unplaced_ns);
}

}  // namespace

Status OcctraceReader::ScanOcctraceRange(const RangePass& pass, const std::string& select,
                                         const ConfigIndex& index,
                                         const std::vector<ConfigStats>& configs,
                                         OccLaunchPartial* result) const {
  // Built here and moved out at the end: partials side by side in one vector would share cache
  // lines between threads that update their counters on every row.
  OccLaunchPartial partial;
  OccLaunchPartial* out = &partial;
  const bool with_achieved = !achieved_.empty();
  out->tallies.resize(configs.size());
  // Launch times beyond this are corrupt rows, not kernels (about 11.5 days).
  constexpr int64_t kMaxDurationNs = 1'000'000'000'000'000;
  int64_t rows = 0;
  // v: configId, start, duration, streamId[, correlationId], NULL as 0.
  auto add_row = [&](const int64_t* v, int count) {
    if (count != (with_achieved ? 5 : 4)) return false;
    if ((++rows & 0xffff) == 0 && pass.Cancelled()) return false;
    int32_t i = index.Find(v[0]);
    if (i < 0) {
      ++out->unknown_config;
      return true;
    }
    ConfigStats& c = out->tallies[static_cast<size_t>(i)];
    int64_t start = v[1];
    int64_t duration = v[2];
    if (duration < 0 || start < 0) {
      ++out->negative;
      return true;
    }
    if (duration > kMaxDurationNs) {
      ++out->absurd;
      return true;
    }
    if (with_achieved) {
      const AchievedRow* a = FindAchieved(v[4], configs[static_cast<size_t>(i)].context_id);
      if (a != nullptr) {
        // A replayed (profiled) launch has no CUPTI timestamp: its time is the profiler's.
        if (duration == 0) {
          if (a->gpu_time_ns >= 0) {
            duration = static_cast<int64_t>(a->gpu_time_ns + 0.5);
          } else {
            ++out->replayed_without_time;
          }
        }
        out->achieved.emplace_back(i, a);
      }
    }
    if (duration == 0 && start > 0) {
      // Handed over by a forced flush while running (trace_writer.cc): a launch, no time.
      ++c.launches;
      ++c.untimed_launches;
      ++out->launches;
      ++out->untimed;
      return true;
    }
    AddLaunch(&c, duration);
    if (start > 0) {
      if (c.first_start_ns == 0 || start < c.first_start_ns) c.first_start_ns = start;
      c.last_end_ns = std::max(c.last_end_ns, SaturatingAdd(start, duration));
      out->first_start = std::min(out->first_start, start);
      out->last_end = std::max(out->last_end, SaturatingAdd(start, duration));
      out->timed.push_back({start, SaturatingAdd(start, duration), v[3], i});
    } else {
      out->unplaced_ns = SaturatingAdd(out->unplaced_ns, duration);
    }
    ++out->launches;
    out->total_ns = SaturatingAdd(out->total_ns, duration);
    return true;
  };
  Status status = pass.db->AggregateIntRows(
      kLaunchScanFunction, 0, select + RowidRangeClause(pass.range, 1),
      [&](sql::Stmt* stmt) { return BindRowidRange(stmt, pass.range, 1); }, add_row);
  if (pass.Cancelled()) return OkStatus();  // another range failed; this result is discarded
  *result = std::move(partial);
  return status;
}

// Sums OCC_LAUNCH per configuration over rowid ranges on up to `jobs` threads
// (parallel_scan.h), merged in range order.
StatusOr<TraceScan> OcctraceReader::ScanLaunches(const std::string& kernel_regex, int jobs) {
  std::vector<int64_t> ids;
  OCC_ASSIGN_OR_RETURN(std::vector<ConfigStats> configs, ReadOccConfigs(kernel_regex, &ids));
  const ConfigIndex index(ids);
  const std::string select =
      std::string("SELECT ") + kLaunchScanFunction +
      (!achieved_.empty() ? "(configId, start, duration, streamId, correlationId) FROM OCC_LAUNCH"
                          : "(configId, start, duration, streamId) FROM OCC_LAUNCH");
  const std::vector<RowidRange> ranges =
      SplitRowids(*db_, "OCC_LAUNCH", reopen_path_.empty() ? 1 : jobs);
  std::vector<OccLaunchPartial> partials(ranges.size());
  OCC_RETURN_IF_ERROR(RunRangePasses(*db_, reopen_path_, ranges, [&](const RangePass& pass) {
    return ScanOcctraceRange(pass, select, index, configs, &partials[pass.index]);
  }));
  TraceScan scan;
  int64_t unknown_config = 0, negative = 0, absurd = 0, replayed_without_time = 0, untimed = 0;
  int64_t first_start = std::numeric_limits<int64_t>::max(), last_end = 0;
  std::vector<TimedLaunch> timed = std::move(partials.front().timed);
  int64_t unplaced_ns = 0;
  for (OccLaunchPartial& part : partials) {
    if (&part != &partials.front()) {
      timed.insert(timed.end(), part.timed.begin(), part.timed.end());
      std::vector<TimedLaunch>().swap(part.timed);
    }
    for (size_t i = 0; i < configs.size(); ++i) MergeInto(&configs[i], part.tallies[i]);
    for (const auto& [i, a] : part.achieved) {
      AddAchievedSample(&configs[static_cast<size_t>(i)], a->pct, a->status, a->throughput);
    }
    unknown_config += part.unknown_config;
    unplaced_ns = SaturatingAdd(unplaced_ns, part.unplaced_ns);
    negative += part.negative;
    absurd += part.absurd;
    replayed_without_time += part.replayed_without_time;
    untimed += part.untimed;
    scan.launches += part.launches;
    // Durations are never negative here, so the saturating sum does not depend on the split.
    scan.total_ns = SaturatingAdd(scan.total_ns, part.total_ns);
    first_start = std::min(first_start, part.first_start);
    last_end = std::max(last_end, part.last_end);
  }
  partials.clear();
  SweepLaunchOverlap(&timed, unplaced_ns, &configs, &scan);
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
  if (info_.trace_mode() == "light") {
    OCC_RETURN_IF_ERROR(AddLaunchCalls(ids, &configs, &scan));
    // GPU times are estimates over every launch, the busy span only the timed launches': their
    // difference would read as concurrency. Unknown.
    scan.busy_ns = -1;
  } else {
    OCC_RETURN_IF_ERROR(AddReattachGapLaunches(ids, &configs, &scan));
    OCC_RETURN_IF_ERROR(AddTailLaunches(ids, &configs));
    OCC_RETURN_IF_ERROR(AddFollowedBy(ids, &configs));
  }
  OCC_RETURN_IF_ERROR(AttributePm(index, &configs));
  for (auto& c : configs) {
    if (c.launches > 0) scan.configs.push_back(std::move(c));
  }
  info_.set_launches(scan.launches);
  return scan;
}

// PM samples (OCC_PM_SAMPLE) to the configurations that ran in them (pm_attribution.h), one
// unit per launch configuration per device, and the file's sample counts into its facts.
double OcctraceReader::MaxWarpsPerSm(int64_t device_id) const {
  const TraceDevice* d = FindDevice(devices_, device_id);
  if (d == nullptr || !d->known || d->props.warp_size <= 0) return 0;
  return static_cast<double>(d->props.max_threads_per_sm) / d->props.warp_size;
}

Status OcctraceReader::AttributePm(const ConfigIndex& index, std::vector<ConfigStats>* configs) {
  const PmUnits units = MakePmUnits(*configs);
  OCC_ASSIGN_OR_RETURN(
      PmAttribution pm,
      AttributePmSamples(
          *db_, units.row_of_unit.size(),
          [&](int64_t id) {
            const int32_t row = index.Find(id);
            return row < 0 ? -1 : units.of_row[static_cast<size_t>(row)];
          },
          [&](int64_t device_id) { return MaxWarpsPerSm(device_id); }, info_.pm_interval_ns()));
  for (size_t u = 0; u < pm.sums.size(); ++u) {
    if (pm.partners[u] >= 0) {
      pm.sums[u].partner = PartnerName((*configs)[units.row_of_unit[static_cast<size_t>(pm.partners[u])]]);
    }
    (*configs)[units.row_of_unit[u]].pm = std::move(pm.sums[u]);
  }
  const PmCounts& n = pm.counts;
  if (n.samples > 0) info_.set_pm_samples(n.samples);
  info_.set_pm_clean_samples(n.clean);
  info_.set_pm_mixed_samples(n.mixed);
  info_.set_pm_concurrent_samples(n.concurrent);
  info_.set_pm_unattributed_samples(n.unattributed);
  info_.set_pm_bad_samples(n.bad);
  info_.set_pm_long_samples(n.long_samples);
  if (n.bad > 0) {
    AddWarning(std::to_string(n.bad) + " OCC_PM_SAMPLE rows unusable (end not after start, counters "
               "negative or above the device's warp slots): skipped");
  }
  if (n.long_samples > 0) {
    AddWarning(std::to_string(n.long_samples) + " OCC_PM_SAMPLE rows span more than " +
               std::to_string(kMaxPmSampleIntervals) + " sampling intervals (a stopped or interrupted "
               "sampler): not used");
  }
  if (n.unknown_device > 0) {
    AddWarning(std::to_string(n.unknown_device) + " PM samples on devices without a known "
               "max warps per SM: not used");
  }
  return OkStatus();
}

// Autotuners (XLA's, Triton's @autotune, Inductor's max-autotune) launch a kernel name's
// candidates in a burst, then only the one they chose. What tells the burst from a program that
// simply runs a kernel two ways is what came after: how many launches of the name's last
// configuration started once every other one had stopped. Counted for names with several
// configurations only, in one pass over OCC_LAUNCH restricted to those configurations.
Status OcctraceReader::AddTailLaunches(const std::vector<int64_t>& ids, std::vector<ConfigStats>* configs) {
  std::map<std::pair<int64_t, std::string>, std::vector<size_t>> by_name;
  for (size_t i = 0; i < configs->size(); ++i) {
    const ConfigStats& c = (*configs)[i];
    if (c.launches > 0 && c.last_end_ns > 0) by_name[{c.device_id, c.mangled_name}].push_back(i);
  }
  std::vector<std::pair<size_t, int64_t>> last;  // (config, when the others stopped)
  for (const auto& [key, members] : by_name) {
    if (members.size() < 2) continue;
    size_t latest = members.front();
    for (size_t i : members) {
      if ((*configs)[i].last_end_ns > (*configs)[latest].last_end_ns) latest = i;
    }
    int64_t others_stopped = 0;
    for (size_t i : members) {
      if (i != latest) others_stopped = std::max(others_stopped, (*configs)[i].last_end_ns);
      (*configs)[i].tail_launches = 0;
    }
    last.emplace_back(latest, others_stopped);
  }
  // SQLite's bound-parameter limit (32,766) is far above what a report needs.
  constexpr size_t kMaxNames = 2000;
  if (last.empty()) return OkStatus();
  if (last.size() > kMaxNames) last.resize(kMaxNames);
  std::string sql = "WITH t(configId, after) AS (VALUES ";
  for (size_t k = 0; k < last.size(); ++k) sql += k == 0 ? "(?, ?)" : ", (?, ?)";
  sql += ") SELECT l.configId, count(*) FROM OCC_LAUNCH l JOIN t ON t.configId = l.configId "
         "WHERE l.start > t.after GROUP BY l.configId";
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt, db_->Prepare(sql));
  std::unordered_map<int64_t, size_t> config_of_id;
  for (size_t k = 0; k < last.size(); ++k) {
    const int64_t id = ids[last[k].first];
    config_of_id[id] = last[k].first;
    OCC_RETURN_IF_ERROR(stmt.BindInt64(static_cast<int>(2 * k + 1), id));
    OCC_RETURN_IF_ERROR(stmt.BindInt64(static_cast<int>(2 * k + 2), last[k].second));
  }
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    auto it = config_of_id.find(stmt.Int64(0));
    if (it != config_of_id.end()) (*configs)[it->second].tail_launches = stmt.Int64(1);
  }
  return OkStatus();
}

// Which launches came right before a launch of a name with several configurations, on the same
// stream: Triton's benchmark flushes the L2 cache (an ATen fill) before each timed trial, 1:1,
// and Inductor's benchmarker runs several flushes in a row before its trials of several kernels
// (a cold torch.compile, H200: 1,616 of 3,296 fills before another fill, the rest before trials
// of 9 kernels). So a configuration's followed_by_launches counts its launches followed by any
// such name or by itself; followed_by_name is the name it preceded most. One window pass over the
// timed launches between the first start and last end of those names.
Status OcctraceReader::AddFollowedBy(const std::vector<int64_t>& ids, std::vector<ConfigStats>* configs) {
  std::map<std::pair<int64_t, std::string>, std::vector<size_t>> by_name;
  for (size_t i = 0; i < configs->size(); ++i) {
    const ConfigStats& c = (*configs)[i];
    if (c.launches > 0 && c.last_end_ns > 0) by_name[{c.device_id, c.mangled_name}].push_back(i);
  }
  std::unordered_map<int64_t, size_t> config_of_id;
  for (size_t i = 0; i < ids.size() && i < configs->size(); ++i) config_of_id[ids[i]] = i;
  std::string several;  // ids of the configurations of names with several
  int64_t from = std::numeric_limits<int64_t>::max(), to = 0;
  for (const auto& [key, members] : by_name) {
    if (members.size() < 2) continue;
    for (size_t i : members) {
      several += (several.empty() ? "" : ",") + std::to_string(ids[i]);
      from = std::min(from, (*configs)[i].first_start_ns);
      to = std::max(to, (*configs)[i].last_end_ns);
    }
  }
  if (several.empty()) return OkStatus();
  // The ids are integers from OCC_KERNEL_CONFIG, written into the statement as a list.
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt stmt,
      db_->Prepare("WITH seq AS (SELECT configId, lead(configId) OVER (PARTITION BY streamId ORDER BY start) AS next "
                   "FROM OCC_LAUNCH WHERE start >= ? AND start <= ?) "
                   "SELECT configId, next, count(*) FROM seq WHERE (next IN (" + several + ") OR next = configId) "
                   "AND configId NOT IN (" + several + ") GROUP BY configId, next"));
  OCC_RETURN_IF_ERROR(stmt.BindInt64(1, from));
  OCC_RETURN_IF_ERROR(stmt.BindInt64(2, to));
  std::map<std::pair<size_t, std::string>, int64_t> counts;  // (config, next name) -> launches
  std::map<size_t, int64_t> into_several, into_itself;         // config -> launches
  while (true) {
    OCC_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    auto config = config_of_id.find(stmt.Int64(0));
    auto next = config_of_id.find(stmt.Int64(1));
    if (config == config_of_id.end() || next == config_of_id.end()) continue;
    if (next->second == config->second) {
      into_itself[config->second] += stmt.Int64(2);
      continue;
    }
    counts[{config->second, (*configs)[next->second].mangled_name}] += stmt.Int64(2);
    into_several[config->second] += stmt.Int64(2);
  }
  std::map<size_t, int64_t> most;  // config -> launches before its most frequent next name
  for (const auto& [key, launches] : counts) {
    ConfigStats& c = (*configs)[key.first];
    if (launches > most[key.first]) {
      most[key.first] = launches;
      c.followed_by_name = key.second;
    }
  }
  for (const auto& [config, launches] : into_several) {
    (*configs)[config].followed_by_launches = launches + into_itself[config];
  }
  return OkStatus();
}

Status OcctraceReader::ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                                     std::vector<ConfigStats>* configs,
                                     const std::function<Status(const LaunchRow&)>& visit) {
  std::vector<int64_t> ids;
  OCC_ASSIGN_OR_RETURN(*configs, ReadOccConfigs(kernel_regex, &ids));
  ConfigIndex index(ids);
  // Each launch's own clean PM samples (a PM trace): attributed over the whole trace first, since
  // a launch's neighbours decide whether a sample is clean.
  const PmUnits units = MakePmUnits(*configs);
  OCC_ASSIGN_OR_RETURN(
      PmAttribution pm,
      AttributePmSamples(
          *db_, units.row_of_unit.size(),
          [&](int64_t id) {
            const int32_t row = index.Find(id);
            return row < 0 ? -1 : units.of_row[static_cast<size_t>(row)];
          },
          [&](int64_t device_id) { return MaxWarpsPerSm(device_id); }, info_.pm_interval_ns(),
          /*per_launch=*/true));
  OCC_ASSIGN_OR_RETURN(sql::Stmt stmt,
                       db_->Prepare("SELECT configId, start, duration, streamId, correlationId, rowid "
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
    if (auto it = pm.per_launch.find(stmt.Int64(5)); it != pm.per_launch.end()) {
      launch.pm_clean_samples = it->second.samples;
      launch.pm_pct = it->second.ShownPct();
    }
    OCC_RETURN_IF_ERROR(visit(launch));
    ++shown;
  }
  return OkStatus();
}

}  // namespace occ
