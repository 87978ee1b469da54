// What the read stage gives the rest of the pipeline: the devices of an input file, and the row
// each kernel record becomes, one ConfigStats per launch configuration of a file with its
// launches summed (grouping.h merges these rows into groups). Also TraceScan (a whole file)
// and LaunchRow (`occ-report launches`), and how a launch or another row adds to a row
// (AddLaunch, MergeInto; trace_rows.cc).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/model/occupancy.h"
#include "analyzer/read/launch_overlap.h"
#include "analyzer/read/pm_attribution.h"
#include "schema/report.pb.h"
#include "base/status.h"

namespace occ {

// The throughput the tracer measured beside achieved occupancy (% of sustained peak), summed
// per configuration; judged by throughput_ceiling.h.
enum class ThroughputUnit : int { kDram = 0, kL2, kL1, kIssueSlots, kTensorPipe };
inline constexpr int kThroughputUnits = 5;

// Per-configuration sums over measured launches; a unit a launch did not report is skipped.
struct ThroughputSums {
  double sum[kThroughputUnits] = {};
  int64_t samples[kThroughputUnits] = {};
  int64_t launches = 0;  // measured launches that reported at least one unit

  // `pct[i]` < 0: unit i not reported.
  void AddLaunch(const double (&pct)[kThroughputUnits]);
  void Merge(const ThroughputSums& other);
  bool empty() const { return launches == 0; }
};


// GPU-time sums saturate instead of overflowing: corrupt rows can hold durations near 2^63.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

// A CUDA device of one input file, with what the occupancy model needs.
struct TraceDevice {
  int file_index = 0;
  int device_id = 0;                 // CUDA ordinal (kernel rows' deviceId)
  bool known = false;                // false: no usable properties (see unknown_reason)
  std::string unknown_reason;
  DeviceProps props;
  int max_blocks_per_sm = 0;         // from the architecture table
  occtrace::Source source = occtrace::SOURCE_TRACE;
  std::vector<std::string> defaulted_fields;
};

// The first of `devices` with this CUDA ordinal, or nullptr when the file does not describe it.
inline const TraceDevice* FindDevice(const std::vector<TraceDevice>& devices, int64_t device_id) {
  for (const auto& d : devices) {
    if (d.device_id == device_id) return &d;
  }
  return nullptr;
}

// One launch configuration of one file with its aggregated launches. Integer fields are kept
// as recorded (int64) so that absurd values can be reported rather than wrapped.
struct ConfigStats {
  int file_index = 0;
  int64_t device_id = 0;
  int64_t context_id = 0;
  std::string name;                  // demangled (falls back to the short name)
  std::string short_name;
  std::string mangled_name;
  int64_t grid[3] = {0, 0, 0};
  int64_t block[3] = {0, 0, 0};
  int64_t registers_per_thread = 0;
  bool registers_known = true;       // false when the row has no register count
  int64_t static_smem = 0;
  int64_t dynamic_smem = 0;
  int64_t local_mem_per_thread = 0;
  int64_t smem_executed = 0;         // executed carveout, bytes (0 = not reported)
  int64_t smem_limit_config = 0;     // 0 default, 1 opt-in
  int64_t carveout_pct = -1;         // requested carveout %, -1 = none
  int64_t cache_config = 0;          // requested CUfunc_cache
  int64_t cluster[3] = {1, 1, 1};
  int64_t graph_id = 0;
  // From OCC_FUNCTION (the loaded cubin), when the trace has it; -1 / 0 = unknown.
  int64_t barrier_count = -1;        // named barriers per block
  int64_t func_max_threads = 0;      // __launch_bounds__ max threads per block
  // From OCC_TRITON_KERNEL (Triton's compile metadata), when recorded; -1 = unknown.
  int64_t triton_num_warps = -1;
  int64_t triton_num_stages = -1;
  // From OCC_TRITON_SOURCE, when recorded: the @triton.jit function's file (as recorded; reports
  // show its file name) and line, and for torch.compile kernels the source nodes and ATen ops
  // ("add, hidden, normed"; "aten.add, aten.relu"). Empty / 0: unknown.
  std::string source_file;
  int64_t source_line = 0;
  std::string source_nodes;
  std::string original_aten;
  // From OCC_MODULE, when the function's module is known (one module holds a function of this
  // name, registers and local memory): the object that loaded it and the one its image was
  // mapped from (full paths as recorded; reports show file names only). Empty: unknown.
  std::string loader;
  std::string module_library;
  bool matched = true;               // passes --kernel

  int64_t launches = 0;
  // Of `launches`, those without a duration: the tracer's forced flush handed the record back
  // while the kernel still ran (start set, duration 0). Not in total/min/max; the mean is over
  // the others.
  int64_t untimed_launches = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  // First launch start and last launch end (the trace's clock); 0 = unknown. Autotuning trials
  // are told apart by them (measured_evidence.h).
  int64_t first_start_ns = 0;
  int64_t last_end_ns = 0;
  // Launches that started after every other configuration of this kernel name on this device
  // had stopped; -1 = not counted (occtrace/read_occtrace.cc, AddTailLaunches).
  int64_t tail_launches = -1;
  // Of this configuration's launches, those whose next launch on the same stream was of a kernel
  // name that ran in several configurations, or of this configuration again (a chain of them);
  // `followed_by_name` (mangled) is the name most often next. What tells an autotuner's benchmark helper (the cache flush before each
  // timed trial) from the program's own kernels (analyze/tuning_overhead.h). 0: none counted.
  std::string followed_by_name;
  int64_t followed_by_launches = 0;

  // Achieved occupancy (OCC_ACHIEVED rows joined by correlationId/contextId).
  int64_t achieved_samples = 0;
  double achieved_sum = 0;
  double achieved_min = 0;
  double achieved_max = 0;
  int64_t achieved_not_measured = 0;
  std::map<std::string, int64_t> not_measured_reasons;
  ThroughputSums throughput;         // of the measured launches, when the trace recorded it
  // PM samples attributed to this configuration (pm_attribution.h), when the trace has them.
  PmSums pm;
  // Its launches against the other launches of its device (launch_overlap.h); unknown
  // (!overlap.known()) where the format keeps no launch times.
  OverlapSums overlap;

  // Light traces (occtrace/read_light_calls.cc): `launches` counts every launch, total_ns is the
  // estimate launches x mean timed duration, from `estimate_samples` timed launches, with
  // `estimate_variance` (ns^2) its sampling variance; variances add when configurations merge.
  bool time_estimated = false;
  int64_t estimate_samples = 0;
  double estimate_variance = 0;
};

// One timed launch into its configuration's count, total and extremes. The extremes are of the
// timed launches only: untimed ones (counted before) leave them alone.
inline void AddLaunch(ConfigStats* c, int64_t ns) {
  if (c->launches == c->untimed_launches) {
    c->min_ns = ns;
    c->max_ns = ns;
  } else {
    c->min_ns = std::min(c->min_ns, ns);
    c->max_ns = std::max(c->max_ns, ns);
  }
  ++c->launches;
  c->total_ns = SaturatingAdd(c->total_ns, ns);
}

// Adds `from`'s launches and measurements to `into`, the same configuration (or group), as if
// `from`'s launches had come after `into`'s: `into` keeps its identity (names, context) and takes
// `from`'s graph only while it has none. Counts, extremes and saturating GPU-time sums of
// non-negative durations come out as one pass over both would give them; floating-point sums
// (achieved occupancy, throughput, variances) are added, which can differ from one running sum
// in the last bits (the trace readers replay achieved samples in order instead).
void MergeInto(ConfigStats* into, const ConfigStats& from);

// A configuration's identity as text, from the fields a Kineto kernel event records: device,
// name, grid, block, registers per thread and shared memory. The torch.profiler reader files
// Kineto's own occupancy estimates under it; the timeline export keys per-launch configurations
// with it.
std::string KinetoKey(int64_t device, const std::string& name, const int64_t* grid,
                      const int64_t* block, int64_t registers, int64_t smem);

// What makes two rows of one device the same launch configuration: grouping (grouping.h) puts
// rows with equal keys on one GPU model in one group, and PM attribution (pm_attribution.h)
// makes them one unit. Without the executed carveout when `with_executed_carveout` is false.
std::string LaunchConfigKey(const ConfigStats& c, bool with_executed_carveout = true);

// As recorded: absurd rows (judge.cc rejects them) can make these zero or negative.
inline int64_t GridBlocks(const ConfigStats& c) { return c.grid[0] * c.grid[1] * c.grid[2]; }
inline int64_t BlockThreads(const ConfigStats& c) { return c.block[0] * c.block[1] * c.block[2]; }

struct TraceScan {
  std::vector<ConfigStats> configs;  // every configuration with at least one launch
  int64_t launches = 0;              // good launches, all kernels
  int64_t total_ns = 0;              // GPU time of all good launches
  int64_t first_start = 0;           // 0 when unknown
  int64_t last_end = 0;
  // The union of launch intervals per device, summed over devices (launch_overlap.h); below
  // total_ns where launches ran concurrently. -1 when unknown (no launch times).
  int64_t busy_ns = -1;
};

// One launch for `occ-report launches`.
struct LaunchRow {
  int64_t start = 0;
  int64_t duration = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;
  size_t config = 0;                 // index into the configs of the listing
  double achieved_pct = -1;          // < 0: not measured
  std::string achieved_status;       // "" when the launch has no OCC_ACHIEVED row
  // PM samples in which this launch ran alone (pm_attribution.h), and their achieved occupancy
  // (< 0: its standard error too large to show it, PmFigureShown).
  int64_t pm_clean_samples = 0;
  double pm_pct = -1;
};

// The model inputs for a recorded configuration (occupancy-model.md §9). InvalidArgument
// naming the absurd value (grid 0, 1000 registers...) when the record cannot be a launch.
// `on_traced_gpu` is false for --gpu what-if evaluation: the executed carveout the driver chose
// on the traced GPU says nothing about another GPU (whose carveout sizes may not even include it).
StatusOr<LaunchParams> LaunchParamsFor(const ConfigStats& config, const DeviceProps& device,
                                       bool on_traced_gpu = true);

// Empty when the record can be a launch; else the absurd value named (grid 0, 1000 registers...).
std::string AbsurdValue(const ConfigStats& c);

}  // namespace occ
