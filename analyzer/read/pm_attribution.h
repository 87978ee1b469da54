// The attribute stage (traces recorded with OCCTRACE_ACHIEVED=pm): what the trace's PM samples
// say about each launch configuration's achieved occupancy.
//
// Takes: the trace's PM samples (OCC_PM_SAMPLE: device-wide sm__warps_active / sm__cycles_active
// sums over spans of GPU time) and its timed kernel launches (OCC_LAUNCH with its configuration),
// per device, in time order; the device's max warps per SM; the sampling interval.
// Gives: per *unit* (below), PmSums (added to ConfigStats::pm by the reader), and the file's
// sample counts (PmCounts, into occtrace.InputFile).
//
// Units. Configurations that grouping (analyze/grouping.h) puts in one group on one device (the
// same kernel and launch configuration recorded as several OCC_KERNEL_CONFIG rows, e.g. one per
// CUDA-graph node or context) have one set of rates: the reader maps them to one unit, whose
// sums go to the first of them. A sample is then counted once per unit, never once per row.
//
// Every sample in which the model holds is used (pm_rates.h has the model and the solve): a
// sample's counters add over the units inside it, one after another, each weighted by its time
// there (plus a fixed ramp-up and tail per launch), so per-unit rates follow by non-negative
// least squares over those samples of a device; achieved occupancy = a unit's estimated warps ÷
// (its estimated active cycles × max warps per SM). Samples are told apart, for which are used,
// for the counts and for the figures kept beside the solved one:
//   clean     one unit's launches alone in the sample: inside one launch, at its edge (idle time
//             beside its start or end: sm__cycles_active counts only cycles in which an SM had
//             a warp), several of its launches in sequence, or overlapping each other;
//   mixed     launches of two units or more, one after another;
//   concurrent  launches of two units or more running at the same time (concurrent streams):
//             not used. Device-wide counters do not add over kernels that share SMs at once
//             (sm__cycles_active counts an SM's cycle once, whoever holds it), so the model does
//             not hold there; such a unit's figure comes from its other samples, or it has none;
//   unattributed  no traced launch (another process, work the trace did not time): not used.
// A unit that only ever ran alone gets exactly the clean-sample figure Σ warpsActive ÷
// (Σ smCyclesActive × max warps per SM), the ratio Nsight Compute takes over a launch's run.
//
// A figure is shown when its standard error is at most kMaxPmStandardErrorPoints (PmFigureShown);
// where it is not, PmSums::fit and the counts say why.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/read/pm_rates.h"
#include "base/status.h"
#include "sqlite/sqlite_db.h"

namespace occ {

// A figure is shown when its standard error is at most this many points of occupancy:
// about ±4 points at 95 %, beside the 3-point target against Nsight Compute (docs/accuracy.md).
// On the H200 (2026-11-29) the figures it lets through were within 3 points of ncu for 83 % of
// configurations, the misses from a bias the error does not cover (docs/accuracy.md).
inline constexpr double kMaxPmStandardErrorPoints = 2;

// A sample longer than this many intervals is rejected and counted (PmCounts::long_samples).
// Sampling is triggered by GPU time, so a sample is one interval long; after a gap it can span
// up to three. One 10.7 s long at a 20 us interval came out of a stopped sampler and
// spanned 15 configurations. The tracer rejects the same (pm_samples_rejected_long).
inline constexpr int64_t kMaxPmSampleIntervals = 4;

// Below this many clean samples reporting DRAM throughput, PM gives no throughput verdict
// (throughput_ceiling.h): a mean over fewer says little about a kernel's ceiling.
inline constexpr int64_t kMinPmDramSamples = 20;

// Added to every sample's start and end before it is compared with launch times. Both come from
// CUPTI's timestamp source; the collector's alignment measurement (docs/accuracy.md) decides
// whether this ever needs to differ from 0.
inline constexpr int64_t kPmClockOffsetNs = 0;

// Whether a figure with this standard error, estimated from `samples` samples, is shown: its 95 %
// interval by Student's t is within ±1.96 × kMaxPmStandardErrorPoints. With many samples that is
// a standard error <= 2 points; with few, the error is itself uncertain and must be smaller (a
// 2-sample figure needs 0.31).
bool PmFigureShown(double standard_error_points, int64_t samples);

// Σ warpsActive and Σ capacity (smCyclesActive × max warps per SM) over samples in which one unit
// ran alone, with the sums of squares for the ratio's error. Adds up over samples and merges.
struct PmCleanSums {
  int64_t samples = 0;
  double warps = 0;
  double capacity = 0;
  double warps2 = 0;
  double capacity2 = 0;
  double warps_capacity = 0;

  void Add(double sample_warps, double sample_capacity);
  void Merge(const PmCleanSums& other);
  double Pct() const;                  // 100 Σ warps ÷ Σ capacity; -1 without capacity
  // The ratio estimator's: 100 √(n/(n−1) Σ (warps − R capacity)²) ÷ Σ capacity; +inf below 2.
  double StandardErrorPoints() const;
  double ShownPct() const { return PmFigureShown(StandardErrorPoints(), samples) ? Pct() : -1; }
};

// The least-squares figure (pm_rates.h) over a unit's sampled kernel time T: warps = a T and
// capacity = b T × max warps per SM, with their variances. For a unit that only ran alone these
// are the clean sums. Figures of independent fits (other devices, other files) merge by adding.
struct PmSolved {
  int64_t samples = 0;    // samples behind it
  int64_t mixed = 0;      // of them, shared with other units
  double warps = 0;
  double capacity = 0;
  double var_warps = 0;
  double var_capacity = 0;
  double cov = 0;

  void Merge(const PmSolved& other);
  double Pct() const;                  // 100 warps ÷ capacity; -1 without capacity
  double StandardErrorPoints() const;  // delta method through the ratio; +inf when unknown
  bool Shown() const { return PmFigureShown(StandardErrorPoints(), samples); }
};

// What the solve made of a unit. Merged figures keep the first in this order.
enum class PmFit {
  kSolved,         // PmSums::solved holds its figure (shown or not by its error)
  kNotSeparable,   // only in mixed samples that do not tell it from others (partner)
  kNoCounts,       // the solve leaves it no warps or no cycles: its samples do not add up
  kNotSolved,      // the solve did not settle
  kUnknownDevice,  // its device has no known max warps per SM
  kConcurrent,     // only in samples where other kernels ran at the same time: not used
  kNoSamples,      // no accepted sample while it ran
  kNone,           // the trace has no PM samples
};

// "solved", "not_separable", "no_counts", "not_solved", "unknown_device", "concurrent", "no_samples", "" (kNone): the names
// summaries store; PmFitFromName gives kNone for a name it does not know.
const char* PmFitName(PmFit fit);
PmFit PmFitFromName(std::string_view name);

// One unit's samples, and what they gave.
struct PmSums {
  int64_t clean = 0;            // samples it ran alone in: inside + sequence + edge or overlapping
  int64_t inside = 0;
  int64_t sequence = 0;
  int64_t mixed = 0;            // samples it shared with other units, one after another
  int64_t concurrent = 0;       // samples where other units ran at the same time: not used
  PmFit fit = PmFit::kNone;
  // The kernel (name and shape) whose time over the samples is most like its own: what it is
  // not separable from; empty when it shared no sample.
  std::string partner;
  // How much sharing samples widens its error against running alone (pm_rates.h).
  double inflation = 1;
  PmSolved solved;
  PmCleanSums clean_sums;       // its clean samples alone: the figure the solve generalises
  PmCleanSums inside_sums;      // its inside samples alone (no ramp-up, no tail)
  double dram_pct_ns = 0;       // Σ dramThroughputPct × sample length, clean samples reporting it
  double dram_ns = 0;           // Σ their lengths
  int64_t dram_samples = 0;

  bool empty() const { return fit == PmFit::kNone; }
  void Merge(const PmSums& other);
  // Time-weighted mean DRAM throughput of the clean samples; -1 when none reported it.
  double DramPct() const;
};

// A file's samples by what attribution made of them. Each sample is counted once.
struct PmCounts {
  int64_t samples = 0;          // rows read
  int64_t clean = 0;
  int64_t mixed = 0;
  int64_t concurrent = 0;       // units running at the same time: not used
  int64_t unattributed = 0;
  int64_t bad = 0;              // end <= start, negative or non-finite counters, or above 100 %
  int64_t long_samples = 0;     // longer than kMaxPmSampleIntervals intervals: rejected
  int64_t unknown_device = 0;   // on a device without a known max warps per SM
};

// The sweep over one trace, device after device. Launches and samples come in (device, start)
// order; before a sample, every launch of its device starting before the sample's end must have
// been added. Finish() solves.
class PmSweep {
 public:
  // `interval_ns` <= 0: unknown (no sample is rejected for its length).
  PmSweep(size_t unit_count, int64_t interval_ns);

  // Starts a device; `max_warps_per_sm` <= 0: unknown (its samples are counted, not used).
  void BeginDevice(double max_warps_per_sm);
  // A timed launch [start, end) of unit `unit` (an index below unit_count); `launch_id`
  // (OCC_LAUNCH's rowid) names it in per_launch().
  void AddLaunch(int64_t start, int64_t end, int32_t unit, int64_t launch_id = -1);
  // A sample [start, end); dram_pct < 0: not collected.
  void AddSample(int64_t start, int64_t end, double sm_cycles_active, double warps_active,
                 double dram_pct);
  // Solves every unit's rates; sums() is complete after it. partners()[u]: the unit whose time
  // over the samples is most like u's (-1: none), which the reader names in PmSums::partner.
  void Finish();

  std::vector<PmSums>& sums() { return sums_; }
  const std::vector<int32_t>& partners() const { return partners_; }
  const PmCounts& counts() const { return counts_; }
  // Also sums each launch's own clean samples (one launch alone), by launch id, for
  // `occ-report launches`.
  void KeepPerLaunch() { keep_per_launch_ = true; }
  std::unordered_map<int64_t, PmCleanSums>& per_launch() { return per_launch_; }

 private:
  struct Launch {
    int64_t start, end;
    int32_t unit;
    int64_t id;
  };
  void AddClean(int64_t start, int64_t end, double capacity, double warps_active, double dram_pct);
  bool UnitsRanAtOnce(int64_t start, int64_t end) const;

  std::vector<PmSums> sums_;
  std::vector<int32_t> partners_;
  std::vector<double> max_warps_of_unit_;  // the device's, once the unit was in a sample; 0 unknown
  PmCounts counts_;
  int64_t interval_ns_ = 0;
  double max_warps_ = 0;
  int64_t last_sample_start_ = INT64_MIN;
  std::vector<Launch> active_;      // launches that may overlap the current or a later sample
  std::vector<Launch> overlapping_;  // scratch
  PmRateSolver solver_;             // fed every accepted sample
  std::vector<PmTerm> terms_;       // scratch
  bool keep_per_launch_ = false;
  std::unordered_map<int64_t, PmCleanSums> per_launch_;
};

// Runs the sweep over `db`'s OCC_PM_SAMPLE and OCC_LAUNCH (a trace without PM samples gives an
// empty result without reading OCC_LAUNCH). `unit_of_config` maps an OCC_KERNEL_CONFIG id to a
// unit below `unit_count` (< 0: unknown, its launches are skipped); `max_warps_per_sm` gives a
// device's (<= 0: unknown); `interval_ns` is the sampling interval (<= 0: unknown).
// `per_launch`: also sum each launch's own clean samples, by OCC_LAUNCH rowid.
struct PmAttribution {
  std::vector<PmSums> sums;       // by unit; empty when the trace has no PM samples
  std::vector<int32_t> partners;  // by unit: PmSweep::partners()
  PmCounts counts;
  std::unordered_map<int64_t, PmCleanSums> per_launch;
};
StatusOr<PmAttribution> AttributePmSamples(const sql::Db& db, size_t unit_count,
                                           const std::function<int32_t(int64_t)>& unit_of_config,
                                           const std::function<double(int64_t)>& max_warps_per_sm,
                                           int64_t interval_ns, bool per_launch = false);

}  // namespace occ
