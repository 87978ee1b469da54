// The read stage's one face to the rest of the pipeline: whatever the format of an input file
// (registry/input_formats.h opens it with its format's reader), it gives the same three things --
// the file's facts, its devices, its launches summed per configuration -- so the stages after
// the read stage never ask which format they got. A trace (every format but a trace summary)
// can also list its launches one by one (TraceInput), for `occ-report launches` and the
// timeline export.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schema/report.pb.h"
#include "base/status.h"
#include "analyzer/read/trace_rows.h"

namespace occ {

class TraceInput;

class AnalysisInput {
 public:
  virtual ~AnalysisInput() = default;
  // The file's facts; warnings of the scan are in it once Scan has run.
  virtual const occtrace::InputFile& info() const = 0;
  virtual const std::vector<TraceDevice>& devices() const = 0;
  // Every configuration with its launches, ConfigStats::matched set by `kernel_regex` (POSIX
  // ERE over the name, empty = all); totals cover all kernels so shares stay shares of the run.
  // `jobs`: threads for a trace's launch table (0: automatic, ScanJobs in parallel_scan.h); the
  // result is the same for every `jobs`, and a summary has no table to read.
  virtual StatusOr<TraceScan> Scan(const std::string& kernel_regex, int jobs) = 0;
  // The input as a trace whose launches can be listed one by one; nullptr for a format that
  // keeps only the sums (a trace summary).
  virtual TraceInput* AsTrace() { return nullptr; }
};

class TraceInput : public AnalysisInput {
 public:
  TraceInput* AsTrace() override { return this; }

  // Streams launches whose kernel matches `kernel_regex`, at most `limit` (<= 0: all), in the
  // order the format keeps them (start order for Nsight Systems exports, recorded order
  // otherwise). `configs` is cleared, then receives the configurations the rows refer to
  // (LaunchRow::config indexes it).
  virtual Status ForEachLaunch(const std::string& kernel_regex, int64_t limit,
                               std::vector<ConfigStats>* configs,
                               const std::function<Status(const LaunchRow&)>& visit) = 0;
  // True when ForEachLaunch gives each launch a configuration of its own (an Nsight Systems
  // export has no configuration table: the row is the configuration), so that a caller that
  // keeps per-configuration state keys it by what the configuration holds, not by its index.
  virtual bool one_config_per_launch() const = 0;

  // For the timeline export: the earliest launch start in ns (the export's time origin), 0 when
  // no launch has a start.
  virtual StatusOr<int64_t> FirstLaunchStart() = 0;
  // PM samples (OCC_PM_SAMPLE) in (device, start) order; none for a format without them.
  struct PmSampleRow {
    int64_t device_id = 0, start = 0, end = 0;
    double sm_cycles_active = 0, warps_active = 0;
  };
  virtual Status ForEachPmSample(const std::function<Status(const PmSampleRow&)>& /*visit*/) {
    return OkStatus();
  }
  // The process group's backend as the input states it (torch.profiler's distributedInfo,
  // OCC_META distributed_backend); "" when it does not.
  virtual std::string DistributedBackend() const { return ""; }
};

}  // namespace occ
