// The attribute stage (traces recorded with OCCTRACE_ACHIEVED=pm): which of the trace's PM
// samples belong to which launch configuration, and the achieved occupancy they give it.
//
// Takes: the trace's PM samples (OCC_PM_SAMPLE: device-wide sm__warps_active / sm__cycles_active
// sums over fixed spans of GPU time) and its timed kernel launches (OCC_LAUNCH with its
// configuration), per device, in time order; the device's max warps per SM.
// Gives: per configuration, the sums over its clean samples (PmSums, added to ConfigStats::pm
// by the reader), and the file's sample counts (PmCounts, into occtrace.InputFile).
//
// The counters are device-wide, so a sample says something about a kernel only when nothing else
// ran beside it. A sample is *clean* for configuration C when every traced launch overlapping
// its span [start, end) is one of C's and no two of them overlap each other; then C's warps are
// the only warps the counters saw. Three kinds of clean sample are counted apart, so that
// accuracy can be judged on each (docs/accuracy.md):
//   inside    the sample lies within one launch of C;
//   edge      one launch of C and idle time beside it (its start or its end): still C's alone,
//             since sm__cycles_active counts only cycles in which an SM had a warp;
//   sequence  several launches of C one after another (kernels shorter than the interval).
// A sample overlapped by launches of two configurations or more, or by two overlapping launches
// of one (other streams, NCCL beside compute), is *mixed* and not used; one overlapped by no
// traced launch (another process, work the trace did not time) is *unattributed*.
// A configuration's achieved occupancy = Σ warpsActive ÷ (Σ smCyclesActive × max warps per SM)
// over its clean samples across all its launches: the same ratio Nsight Compute takes over one
// launch's whole run, so ramp-up and tail are in it through the edge samples.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "sqlite/sqlite_db.h"
#include "base/status.h"

namespace occ {

// Below this many clean samples a configuration's PM figure is "not enough samples": the
// accuracy target against Nsight Compute (docs/accuracy.md) is stated for >= 20 clean samples,
// so no figure is shown where no accuracy is claimed.
inline constexpr int64_t kMinPmCleanSamples = 20;

// Added to every sample's start and end before it is compared with launch times. Both come from
// CUPTI's timestamp source; the collector's alignment measurement (docs/accuracy.md) decides
// whether this ever needs to differ from 0.
inline constexpr int64_t kPmClockOffsetNs = 0;

// One configuration's clean samples (and the mixed ones it was part of), summed.
struct PmSums {
  int64_t clean = 0;            // samples used: inside + edge + sequence
  int64_t inside = 0;
  int64_t sequence = 0;         // (edge = clean - inside - sequence)
  int64_t mixed = 0;            // samples it shared with other launches: not used
  double warps = 0;             // Σ warpsActive over the clean samples
  double capacity = 0;          // Σ smCyclesActive × max warps per SM over the clean samples
  double inside_warps = 0;      // the same over the inside samples only
  double inside_capacity = 0;
  double dram_pct_ns = 0;       // Σ dramThroughputPct × sample length, clean samples reporting it
  double dram_ns = 0;           // Σ their lengths
  int64_t dram_samples = 0;

  bool empty() const { return clean == 0 && mixed == 0; }
  void Merge(const PmSums& other);
  // 100 × warps ÷ capacity; -1 without capacity.
  double AchievedPct() const;
  double InsidePct() const;
  // Time-weighted mean DRAM throughput of the clean samples; -1 when none reported it.
  double DramPct() const;
};

// A file's samples by what attribution made of them.
struct PmCounts {
  int64_t samples = 0;          // rows read
  int64_t clean = 0;
  int64_t mixed = 0;
  int64_t unattributed = 0;
  int64_t bad = 0;              // end <= start, negative or non-finite counters, or above 100 %
  int64_t unknown_device = 0;   // on a device without a known max warps per SM
};

// The sweep over one trace, device after device. Launches and samples come in (device, start)
// order; before a sample, every launch of its device starting before the sample's end must have
// been added.
class PmSweep {
 public:
  explicit PmSweep(size_t config_count) : sums_(config_count) {}

  // Starts a device; `max_warps_per_sm` <= 0: unknown (its samples are counted, not used).
  void BeginDevice(double max_warps_per_sm);
  // A timed launch [start, end) of configuration `config` (an index below config_count);
  // `launch_id` (OCC_LAUNCH's rowid) names it in per_launch().
  void AddLaunch(int64_t start, int64_t end, int32_t config, int64_t launch_id = -1);
  // A sample [start, end); dram_pct < 0: not collected.
  void AddSample(int64_t start, int64_t end, double sm_cycles_active, double warps_active,
                 double dram_pct);

  const std::vector<PmSums>& sums() const { return sums_; }
  std::vector<PmSums>& sums() { return sums_; }
  const PmCounts& counts() const { return counts_; }
  // Also sums each launch's own clean samples (inside or edge: one launch alone), by launch id,
  // for `occ-report launches`.
  void KeepPerLaunch() { keep_per_launch_ = true; }
  std::unordered_map<int64_t, PmSums>& per_launch() { return per_launch_; }

 private:
  struct Launch {
    int64_t start, end;
    int32_t config;
    int64_t id;
  };
  static void AddClean(PmSums* s, bool sequence, bool inside, int64_t start, int64_t end,
                       double capacity, double warps_active, double dram_pct);
  std::vector<PmSums> sums_;
  PmCounts counts_;
  double max_warps_ = 0;
  int64_t last_sample_start_ = INT64_MIN;
  std::vector<Launch> active_;      // launches that may overlap the current or a later sample
  std::vector<Launch> overlapping_;  // scratch
  bool keep_per_launch_ = false;
  std::unordered_map<int64_t, PmSums> per_launch_;
};

// Runs the sweep over `db`'s OCC_PM_SAMPLE and OCC_LAUNCH (a trace without PM samples gives an
// empty result without reading OCC_LAUNCH). `config_index` maps an OCC_KERNEL_CONFIG id to an
// index below `config_count` (< 0: unknown, its launches are skipped); `max_warps_per_sm` gives a
// device's (<= 0: unknown).
// `per_launch`: also sum each launch's own clean samples, by OCC_LAUNCH rowid.
struct PmAttribution {
  std::vector<PmSums> sums;     // by config index; empty when the trace has no PM samples
  PmCounts counts;
  std::unordered_map<int64_t, PmSums> per_launch;
};
StatusOr<PmAttribution> AttributePmSamples(const sql::Db& db, size_t config_count,
                                           const std::function<int32_t(int64_t)>& config_index,
                                           const std::function<double(int64_t)>& max_warps_per_sm,
                                           bool per_launch = false);

}  // namespace occ
