#include "analyzer/read/pm_attribution.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace occ {

void PmSums::Merge(const PmSums& other) {
  clean += other.clean;
  inside += other.inside;
  sequence += other.sequence;
  mixed += other.mixed;
  warps += other.warps;
  capacity += other.capacity;
  inside_warps += other.inside_warps;
  inside_capacity += other.inside_capacity;
  dram_pct_ns += other.dram_pct_ns;
  dram_ns += other.dram_ns;
  dram_samples += other.dram_samples;
}

double PmSums::AchievedPct() const { return capacity > 0 ? 100.0 * warps / capacity : -1.0; }
double PmSums::InsidePct() const {
  return inside_capacity > 0 ? 100.0 * inside_warps / inside_capacity : -1.0;
}
double PmSums::DramPct() const { return dram_ns > 0 ? dram_pct_ns / dram_ns : -1.0; }

void PmSweep::BeginDevice(double max_warps_per_sm) {
  max_warps_ = max_warps_per_sm;
  active_.clear();
  last_sample_start_ = INT64_MIN;
}

void PmSweep::AddLaunch(int64_t start, int64_t end, int32_t config, int64_t launch_id) {
  if (config < 0 || static_cast<size_t>(config) >= sums_.size() || end <= start) return;
  // Samples come in start order: a launch that ended before the current sample began overlaps
  // no later one either.
  if (end <= last_sample_start_) return;
  active_.push_back({start, end, config, launch_id});
}

void PmSweep::AddSample(int64_t start, int64_t end, double sm_cycles_active, double warps_active,
                        double dram_pct) {
  ++counts_.samples;
  if (end <= start || !std::isfinite(sm_cycles_active) || !std::isfinite(warps_active) ||
      sm_cycles_active < 0 || warps_active < 0) {
    ++counts_.bad;
    return;
  }
  last_sample_start_ = std::max(last_sample_start_, start);
  // Launches over before this sample began are done with: no later sample starts earlier.
  std::erase_if(active_, [&](const Launch& l) { return l.end <= last_sample_start_; });
  overlapping_.clear();
  for (const Launch& l : active_) {
    if (l.start < end && l.end > start) overlapping_.push_back(l);
  }
  if (overlapping_.empty()) {
    ++counts_.unattributed;
    return;
  }
  std::sort(overlapping_.begin(), overlapping_.end(),
            [](const Launch& a, const Launch& b) { return a.start < b.start; });
  // Clean: one configuration, its launches one after another (none overlapping the next).
  bool clean = true;
  int64_t previous_end = overlapping_.front().end;
  for (size_t i = 1; i < overlapping_.size() && clean; ++i) {
    const Launch& l = overlapping_[i];
    clean = l.config == overlapping_.front().config && l.start >= previous_end;
    previous_end = std::max(previous_end, l.end);
  }
  if (!clean) {
    ++counts_.mixed;
    std::sort(overlapping_.begin(), overlapping_.end(),
              [](const Launch& a, const Launch& b) { return a.config < b.config; });
    for (size_t i = 0; i < overlapping_.size(); ++i) {
      if (i == 0 || overlapping_[i].config != overlapping_[i - 1].config) {
        ++sums_[static_cast<size_t>(overlapping_[i].config)].mixed;
      }
    }
    return;
  }
  if (!(max_warps_ > 0)) {
    ++counts_.unknown_device;
    return;
  }
  const double capacity = sm_cycles_active * max_warps_;
  // A sample above 100 % of the device's warp slots is not a measurement of it (0.5 % slack for
  // the counters' rounding).
  if (warps_active > capacity * 1.005) {
    ++counts_.bad;
    return;
  }
  ++counts_.clean;
  PmSums& s = sums_[static_cast<size_t>(overlapping_.front().config)];
  const bool inside = overlapping_.size() == 1 && overlapping_.front().start <= start &&
                      overlapping_.front().end >= end;
  AddClean(&s, overlapping_.size() > 1, inside, start, end, capacity, warps_active, dram_pct);
  if (keep_per_launch_ && overlapping_.size() == 1) {
    AddClean(&per_launch_[overlapping_.front().id], false, inside, start, end, capacity, warps_active,
             dram_pct);
  }
}

void PmSweep::AddClean(PmSums* s, bool sequence, bool inside, int64_t start, int64_t end,
                       double capacity, double warps_active, double dram_pct) {
  ++s->clean;
  s->warps += warps_active;
  s->capacity += capacity;
  if (sequence) {
    ++s->sequence;
  } else if (inside) {
    ++s->inside;
    s->inside_warps += warps_active;
    s->inside_capacity += capacity;
  }
  // Counters can overshoot a sustained peak a little; beyond 110 % the value is not a %.
  if (dram_pct >= 0 && dram_pct <= 110) {
    const double ns = static_cast<double>(end - start);
    s->dram_pct_ns += dram_pct * ns;
    s->dram_ns += ns;
    ++s->dram_samples;
  }
}

StatusOr<PmAttribution> AttributePmSamples(const sql::Db& db, size_t config_count,
                                           const std::function<int32_t(int64_t)>& config_index,
                                           const std::function<double(int64_t)>& max_warps_per_sm,
                                           bool per_launch) {
  PmAttribution result;
  OCC_ASSIGN_OR_RETURN(bool present, db.HasTable("OCC_PM_SAMPLE"));
  if (!present) return result;
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt samples,
      db.Prepare("SELECT deviceId, start, \"end\", smCyclesActive, warpsActive, dramThroughputPct "
                 "FROM OCC_PM_SAMPLE ORDER BY deviceId, start"));
  OCC_ASSIGN_OR_RETURN(bool any_sample, samples.Step());
  if (!any_sample) return result;
  // Untimed launches (duration 0: flushed while running; start 0: replayed) have no span to
  // compare; light traces' OCC_LAUNCH_CALL rows have none either.
  OCC_ASSIGN_OR_RETURN(
      sql::Stmt launches,
      db.Prepare("SELECT c.deviceId, l.start, l.start + l.duration, l.configId, l.rowid FROM OCC_LAUNCH l "
                 "JOIN OCC_KERNEL_CONFIG c ON c.id = l.configId "
                 "WHERE l.start > 0 AND l.duration > 0 ORDER BY c.deviceId, l.start"));
  OCC_ASSIGN_OR_RETURN(bool launch_row, launches.Step());
  PmSweep sweep(config_count);
  if (per_launch) sweep.KeepPerLaunch();
  std::optional<int64_t> device;
  for (bool row = any_sample; row;) {
    const int64_t sample_device = samples.Int64(0);
    if (!device || *device != sample_device) {
      device = sample_device;
      sweep.BeginDevice(max_warps_per_sm(sample_device));
      // Launches of devices before this one (or without samples) are never compared.
      while (launch_row && launches.Int64(0) < sample_device) {
        OCC_ASSIGN_OR_RETURN(launch_row, launches.Step());
      }
    }
    const int64_t start = samples.Int64(1) + kPmClockOffsetNs;
    const int64_t end = samples.Int64(2) + kPmClockOffsetNs;
    while (launch_row && launches.Int64(0) == sample_device && launches.Int64(1) < end) {
      sweep.AddLaunch(launches.Int64(1), launches.Int64(2), config_index(launches.Int64(3)),
                      launches.Int64(4));
      OCC_ASSIGN_OR_RETURN(launch_row, launches.Step());
    }
    const double nan = std::nan("");
    sweep.AddSample(start, end, samples.IsNull(3) ? nan : samples.Double(3),
                    samples.IsNull(4) ? nan : samples.Double(4),
                    samples.IsNull(5) ? -1.0 : samples.Double(5));
    OCC_ASSIGN_OR_RETURN(row, samples.Step());
  }
  result.sums = std::move(sweep.sums());
  result.counts = sweep.counts();
  result.per_launch = std::move(sweep.per_launch());
  return result;
}

}  // namespace occ
