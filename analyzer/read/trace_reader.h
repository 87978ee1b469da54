// The read stage's trace reader (analysis_input.h opens a trace summary instead when given
// one): opens one trace file, recognizes its format and reads it with that format's reader. Takes a path; gives the file's facts (occtrace.InputFile), its devices and its
// launches summed per configuration (trace_rows.h). One file per format:
//   read_occtrace.cc     occtrace's own trace (schema/trace_schema.sql)
//   read_nsys_export.cc  an Nsight Systems SQLite export
//   read_sql_dump.cc     a `.sql` text dump of either, loaded into an in-memory database
//   read_torch_profiler.cc  torch.profiler's Chrome-trace JSON (.json, .json.gz), loaded into an
//                        in-memory database in occtrace's schema
//   read_devices.cc      the device tables both formats share (TARGET_INFO_GPU ...)
//   parallel_scan.h      the launch-table passes of both, over rowid ranges on several threads
// Inputs are opened read-only and never modified.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "schema/report.pb.h"
#include "sqlite/sqlite_db.h"
#include "base/status.h"
#include "schema/meta_keys.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

class ConfigIndex;  // read_occtrace.cc
struct RangePass;   // parallel_scan.h

// Kineto's own occupancy estimate for one configuration (torch.profiler traces), kept to set
// beside the model's.
struct KinetoEstimate {
  double est_pct = -1;           // args."est. achieved occupancy %"; < 0: absent
  int active_blocks = -1;        // args.occupancy.activeBlocksPerMultiprocessor; < 0: absent
  std::string limiting_factors;  // args.occupancy.limitingFactors ("REGS|SMEM"); "" absent
};
// The key a configuration's Kineto estimate is filed under (read_torch_profiler.cc).
std::string KinetoKey(int64_t device, const std::string& name, const int64_t* grid,
                      const int64_t* block, int64_t registers, int64_t smem);
// A torch.profiler trace by its name: *.json or *.json.gz.
bool LooksLikeTorchProfilerPath(const std::string& path);

// The newest occtrace trace schema this reader understands (OCC_META.schema_version).
inline constexpr int kSupportedTraceSchemaVersion = 1;

class TraceReader {
 public:
  // Opens and validates `path` (file_index is its position on the command line). Errors name
  // the file and the problem in one line (BadInput).
  static StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path, int file_index);

  const occtrace::InputFile& info() const { return info_; }
  const std::vector<TraceDevice>& devices() const { return devices_; }
  bool is_occtrace() const { return occtrace_; }
  // Warnings about bad rows and defaulted fields; also copied into info().warnings.
  void AddWarning(std::string warning);

  // Aggregates every launch per configuration. `kernel_regex` (POSIX ERE, empty = all) only
  // sets ConfigStats::matched; totals cover all kernels so shares stay shares of the run. Warns
  // about a file without launches and about kernels on devices the file does not describe.
  // The launch table is read on up to `jobs` threads (0: automatic, ScanJobs); the result is
  // the same for every `jobs`.
  StatusOr<TraceScan> Scan(const std::string& kernel_regex, int jobs = 0);

  // Streams launches whose kernel matches `kernel_regex`, in start order for nsys exports and
  // in recorded order for occtrace traces, at most `limit` (<= 0: all). `configs` receives the
  // configurations the rows refer to (LaunchRow::config indexes it).
  Status ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                       std::vector<ConfigStats>* configs,
                       const std::function<Status(const LaunchRow&)>& visit);

  // For the timeline export (read_timeline.cc). The earliest launch start in ns (the export's
  // time origin), 0 when no launch has a start.
  StatusOr<int64_t> FirstLaunchStart();
  // OCC_PM_SAMPLE rows in (device, start) order; none when the trace has no such table.
  struct PmSampleRow {
    int64_t device_id = 0, start = 0, end = 0;
    double sm_cycles_active = 0, warps_active = 0;
  };
  Status ForEachPmSample(const std::function<Status(const PmSampleRow&)>& visit);
  // The process group's backend as the input states it (torch.profiler's distributedInfo,
  // OCC_META distributed_backend); "" when it does not.
  std::string DistributedBackend() const { return MetaValue("distributed_backend"); }

 private:
  struct AchievedRow {
    int64_t context_id = 0;
    std::string status;
    double pct = -1;
    double gpu_time_ns = -1;
    double throughput[kThroughputUnits] = {-1, -1, -1, -1, -1};  // % of peak; < 0: not recorded
  };
  struct OccLaunchPartial;  // read_occtrace.cc
  TraceReader() = default;
  Status Validate();

  // read_sql_dump.cc
  static StatusOr<sql::Db> LoadSqlDump(const std::string& path);

  // read_torch_profiler.cc: the trace as an occtrace-schema database, Kineto's estimates per
  // configuration, and the number of kernel events read.
  static StatusOr<sql::Db> LoadTorchProfiler(const std::string& path,
                                             std::map<std::string, KinetoEstimate>* estimates,
                                             int64_t* kernels);
  // What a torch.profiler trace lacks, said once per file; and where Kineto's estimate and the
  // model's occupancy differ, both with the reason (torch_profiler_notes.cc).
  void AddTorchProfilerNotes();
  void CompareKinetoEstimates(const TraceScan& scan);

  // read_occtrace.cc
  Status ValidateOcctrace();
  Status ReadOccMeta();
  // OCC_META's value of `key`, "" when absent. Only keys schema/meta_keys.h declares compile: a
  // key nobody writes is never read.
  std::string MetaValue(meta::CheckedMetaKey<> key) const {
    auto it = meta_.find(std::string(key.name));
    return it == meta_.end() ? "" : it->second;
  }
  Status LoadAchieved();
  const AchievedRow* FindAchieved(int64_t correlation_id, int64_t context_id) const;
  StatusOr<std::vector<ConfigStats>> ReadOccConfigs(const std::string& kernel_regex,
                                                     std::vector<int64_t>* ids);
  Status AddFunctionFacts(std::vector<ConfigStats>* configs);
  Status AttributePm(const ConfigIndex& index, std::vector<ConfigStats>* configs);
  Status AddModuleOwners(std::vector<ConfigStats>* configs);
  Status AddTailLaunches(const std::vector<int64_t>& ids, std::vector<ConfigStats>* configs);
  double MaxWarpsPerSm(int64_t device_id) const;  // 0: unknown
  Status AddTritonMetadata(std::vector<ConfigStats>* configs);
  Status AddTritonSources(std::vector<ConfigStats>* configs);
  StatusOr<TraceScan> ScanOcctrace(const std::string& kernel_regex, int jobs);
  Status ScanOcctraceRange(const RangePass& pass, const std::string& select,
                           const ConfigIndex& index, const std::vector<ConfigStats>& configs,
                           OccLaunchPartial* result) const;
  // read_light_calls.cc: a light trace's launch counts and estimated times.
  // read_light_calls.cc: a full trace's launches made while CUPTI re-attached after sampling
  // (OCC_LAUNCH_CALL rows; OCC_META reattach_*; written only before 2026-11-28, when that
  // re-attach was deleted): counted, each with its configuration's mean timed duration as an
  // estimate.
  Status AddReattachGapLaunches(const std::vector<int64_t>& config_ids, std::vector<ConfigStats>* configs,
                                TraceScan* scan);
  Status AddLaunchCalls(const std::vector<int64_t>& config_ids, std::vector<ConfigStats>* configs,
                        TraceScan* scan);
  Status ForEachOcctraceLaunch(const std::string& kernel_regex, int64_t limit,
                               std::vector<ConfigStats>* configs,
                               const std::function<Status(const LaunchRow&)>& visit);

  // read_nsys_export.cc
  Status ValidateNsysExport();
  Status ReadNsysMeta();
  StatusOr<std::string> NsysColumn(const std::string& column, const std::string& fallback);
  StatusOr<TraceScan> ScanNsys(const std::string& kernel_regex, int jobs);
  Status ForEachNsysLaunch(const std::string& kernel_regex, int64_t limit,
                           std::vector<ConfigStats>* configs,
                           const std::function<Status(const LaunchRow&)>& visit);

  // read_devices.cc
  Status ReadDevices();
  // Drops recorded devices no kernel configuration ran on (read_devices.cc says why).
  Status KeepDevicesThatRanKernels();

  std::unique_ptr<sql::Db> db_;
  // What a reader thread opens for its own connection: the file's path, or "" for a `.sql`
  // dump's in-memory database, which no second connection can open (one thread reads it).
  std::string reopen_path_;
  occtrace::InputFile info_;
  std::vector<TraceDevice> devices_;
  bool occtrace_ = false;
  bool torch_profiler_ = false;
  std::map<std::string, KinetoEstimate> kineto_estimates_;
  std::map<std::string, std::string> meta_;
  std::unordered_multimap<int64_t, AchievedRow> achieved_;  // by correlationId
  // One bit per correlationId modulo its size: nearly every launch has no OCC_ACHIEVED row, and
  // this L2-resident filter answers that without a hash-table probe (a cache miss) per launch.
  std::vector<uint64_t> achieved_filter_;
  std::map<std::string, bool> nsys_columns_;
  int file_index_ = 0;
};

}  // namespace occ
