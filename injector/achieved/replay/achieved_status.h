// AchievedStatus: whether achieved-occupancy measurement goes on, and if not, why: the one
// status line of a run (OCC_META achieved_status, logged once), with the chip and metrics of
// the context profilers that were set up (achieved_chip, achieved_metrics).
//
// Takes: the reasons measurement stops, from the layers of the range profiler (a context's
// profiler failed to set up or to measure: achieved_contexts.h; the callbacks could not be
// enabled: achieved_parking.h; shutdown), and the names of each profiler set up.
// Gives: disabled(), one acquire load, read on every launch by the launch path
// (achieved_launch_path.h), and Read() for the OCC_META rows (achieved_profiler.cc).
//
// Thread-safe. Its mutex is a leaf of the profiler's lock order (achieved_profiler.h).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "injector/achieved/replay/range_profiler.h"

namespace occ::inj {

class AchievedStatus {
 public:
  bool disabled() const { return disabled_.load(std::memory_order_acquire); }

  // A CUPTI profiler error: measurement stops everywhere, tracing goes on. The first reason of
  // the run is kept and logged, with what to do about missing permissions.
  void Fail(const ProfilerError& error);
  // Measurement stops with `status` as the reason (kept and logged if it is the first).
  void FailWith(const std::string& status);
  // Measurement stops without a reason: the run is ending (the profiler's Shutdown).
  void Stop() { disabled_.store(true, std::memory_order_release); }

  // A context's profiler was set up: its chip and metric names (the last one set up wins).
  void SetProfiler(const std::string& chip, const std::vector<const char*>& metrics);

  struct Snapshot {
    std::string status;  // empty while fine
    std::string metrics;
    std::string chip;
  };
  Snapshot Read() const;

 private:
  std::atomic<bool> disabled_{false};
  mutable std::mutex mutex_;  // guards the three below
  std::string status_;
  std::string metrics_;
  std::string chip_;
};

}  // namespace occ::inj
