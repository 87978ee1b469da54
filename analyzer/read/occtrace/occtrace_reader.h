// The reader of occtrace's own trace (schema/trace_schema.sql): an SQLite file, or its `.sql`
// dump. Claims a database with an OCC_LAUNCH or OCC_META table; gives the run's facts from
// OCC_META and its launches summed per configuration of OCC_KERNEL_CONFIG. Its files:
//   occtrace_reader.cc   the format (sniff, open) and the devices kernels ran on
//   read_occtrace.cc     validation and OCC_META; configurations with what the cubins and Triton
//                        add, the launch scan, achieved occupancy, PM samples, the listing
//   read_light_calls.cc  light traces' launch calls (OCC_LAUNCH_CALL) and estimated times
//   read_timeline.cc     what the timeline export reads beyond the launches
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "analyzer/read/database_reader.h"
#include "analyzer/read/input_format.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

class ConfigIndex;  // read_occtrace.cc
struct RangePass;   // parallel_scan.h

// The newest occtrace trace schema this reader understands (OCC_META.schema_version).
inline constexpr int kSupportedTraceSchemaVersion = 1;

// The registry's entry (registry/input_formats.cc).
const InputFormat& OcctraceFormat();

class OcctraceReader : public DatabaseReader {
 public:
  // Validates the trace in `db` and reads its facts and devices; arguments as DatabaseReader's.
  // BadInput naming the file and the problem in one line.
  static StatusOr<std::unique_ptr<OcctraceReader>> Open(std::unique_ptr<sql::Db> db,
                                                        std::string reopen_path,
                                                        const std::string& path, int file_index);

  Status ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                       std::vector<ConfigStats>* configs,
                       const std::function<Status(const LaunchRow&)>& visit) override;
  bool one_config_per_launch() const override { return false; }
  StatusOr<int64_t> FirstLaunchStart() override;
  Status ForEachPmSample(const std::function<Status(const PmSampleRow&)>& visit) override;

 protected:
  OcctraceReader(std::unique_ptr<sql::Db> db, std::string reopen_path, const std::string& path,
                 int file_index);
  // The metadata and tables, then the devices and achieved occupancy (Open's steps).
  Status Load();
  StatusOr<TraceScan> ScanLaunches(const std::string& kernel_regex, int jobs) override;

 private:
  struct AchievedRow {
    int64_t context_id = 0;
    std::string status;
    double pct = -1;
    double gpu_time_ns = -1;
    double throughput[kThroughputUnits] = {-1, -1, -1, -1, -1};  // % of peak; < 0: not recorded
  };
  struct OccLaunchPartial;  // read_occtrace.cc

  // occtrace_reader.cc: drops recorded devices no kernel configuration ran on (it says why).
  Status KeepDevicesThatRanKernels();

  // read_occtrace.cc
  Status ValidateOcctrace();
  Status ReadOccMeta();
  Status LoadAchieved();
  const AchievedRow* FindAchieved(int64_t correlation_id, int64_t context_id) const;
  StatusOr<std::vector<ConfigStats>> ReadOccConfigs(const std::string& kernel_regex,
                                                     std::vector<int64_t>* ids);
  Status AddFunctionFacts(std::vector<ConfigStats>* configs);
  Status AttributePm(const ConfigIndex& index, std::vector<ConfigStats>* configs);
  Status AddModuleOwners(std::vector<ConfigStats>* configs);
  Status AddTailLaunches(const std::vector<int64_t>& ids, std::vector<ConfigStats>* configs);
  Status AddFollowedBy(const std::vector<int64_t>& ids, std::vector<ConfigStats>* configs);
  double MaxWarpsPerSm(int64_t device_id) const;  // 0: unknown
  Status AddTritonMetadata(std::vector<ConfigStats>* configs);
  Status AddTritonSources(std::vector<ConfigStats>* configs);
  Status ScanOcctraceRange(const RangePass& pass, const std::string& select,
                           const ConfigIndex& index, const std::vector<ConfigStats>& configs,
                           OccLaunchPartial* result) const;

  // read_light_calls.cc: a light trace's launch counts and estimated times.
  Status AddLaunchCalls(const std::vector<int64_t>& config_ids, std::vector<ConfigStats>* configs,
                        TraceScan* scan);
  // read_light_calls.cc: a full trace's launches made while CUPTI re-attached after sampling
  // (OCC_LAUNCH_CALL rows; OCC_META reattach_*; written only before 2026-11-28, when that
  // re-attach was deleted): counted, each with its configuration's mean timed duration as an
  // estimate.
  Status AddReattachGapLaunches(const std::vector<int64_t>& config_ids, std::vector<ConfigStats>* configs,
                                TraceScan* scan);

  std::unordered_multimap<int64_t, AchievedRow> achieved_;  // by correlationId
  // One bit per correlationId modulo its size: nearly every launch has no OCC_ACHIEVED row, and
  // this L2-resident filter answers that without a hash-table probe (a cache miss) per launch.
  std::vector<uint64_t> achieved_filter_;
};

}  // namespace occ
