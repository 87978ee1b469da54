// The share of elapsed time that achieved-occupancy measurement may take (OCCTRACE_SAMPLE_BUDGET),
// one rule for both ways of measuring, each with its own clock for "elapsed":
//  - kernel replay (`sample`, achieved_policy.h) charges the time launches spent being profiled,
//    against wall time;
//  - PM sampling (`pm`, pm_sampling_policy.h) charges the time sampling was on, against GPU-busy
//    time (the union of kernel times), so that a start spent compiling or loading data, with
//    the GPU idle, earns no sampling and spends none. Each sample costs CPU on occtrace's
//    threads (CUPTI decodes it for 19-24 us, H200 2026-11-29), so at 20 us a collector that never
//    rests keeps a core busy.
//
// Measurement may go on while   spent <= free + fraction x elapsed.
// `free` lets a short program be measured whole before the share applies. Once measurement has
// stopped it starts again only when `resume` more fits, so that each restart (a profiler
// re-enable, a PM sampler start) is paid for by a burst of measurement, not a sliver.
//
// Not thread-safe: its owner calls it under its own lock, or from one thread.
#pragma once

#include <cmath>
#include <cstdint>

namespace occ::inj {

class WallTimeBudget {
 public:
  WallTimeBudget(double fraction, int64_t resume_ns, int64_t free_ns = 0)
      : fraction_(fraction), resume_ns_(resume_ns), free_ns_(free_ns) {}

  // Whether measuring may go on (or start again) having spent `spent_ns` of the `elapsed_ns`
  // since its clock began counting. Counts a pause each time the answer turns to no.
  bool Allows(int64_t spent_ns, int64_t elapsed_ns) {
    const double reserve = paused_ ? static_cast<double>(resume_ns_) : 0.0;
    const double allowed = static_cast<double>(free_ns_) + fraction_ * static_cast<double>(elapsed_ns);
    const bool allows = fraction_ >= 1.0 || static_cast<double>(spent_ns) + reserve <= allowed;
    if (!allows && !paused_) ++pauses_;
    paused_ = !allows;
    return allows;
  }

  // While paused, the elapsed time at which Allows turns to yes again: nothing is spent while
  // paused, so it is fixed by `spent_ns`. Lets a paused owner sleep until then instead of
  // asking every few milliseconds. 0 when not paused.
  int64_t ResumesAtNs(int64_t spent_ns) const {
    if (!paused_ || fraction_ >= 1.0) return 0;
    if (fraction_ <= 0.0) return INT64_MAX;
    const double at = (static_cast<double>(spent_ns) + static_cast<double>(resume_ns_) - static_cast<double>(free_ns_)) /
                      fraction_;
    return at <= 0.0 ? 0 : at >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(std::ceil(at));
  }

  bool paused() const { return paused_; }
  int64_t pauses() const { return pauses_; }

 private:
  double fraction_;
  int64_t resume_ns_;
  int64_t free_ns_;
  bool paused_ = false;
  int64_t pauses_ = 0;
};

}  // namespace occ::inj
