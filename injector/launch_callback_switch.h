// Who switches CUPTI's driver launch callbacks when two parts of occtrace want them at
// different times (light tracing with its launch hook, launch_hook.h).
//
// Light tracing with the hook wants the callbacks only now and then (to catch launches the hook
// does not see); the achieved-occupancy profiler wants them while it samples and switches them
// off when it parks quietly (achieved_parking.h). Each says what it wants; the callbacks are on
// while either wants them. Switching off for one owner never takes them from the other, so the
// profiler's own protocol (no launch waits for an EXIT when it lets go) stays sufficient.
// Thread-safe; the mutex is taken last (callers may hold their own locks).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace occ::inj {

class LaunchCallbackSwitch {
 public:
  enum class Owner { kAchieved = 0, kLight = 1 };
  // `apply(on, error)` switches the callbacks (cuptiEnableCallback for each launch id); false
  // with *error set when CUPTI refused. They are taken to be on at the start (as both owners
  // enable them when they subscribe) when `initially_on`.
  using Apply = std::function<bool(bool on, std::string* error)>;
  // `now_ns`: a monotonic clock in ns (steady_clock unless a test gives its own), for on_ms().
  using Clock = std::function<int64_t()>;
  LaunchCallbackSwitch(Apply apply, bool initially_on, Clock now_ns = nullptr);

  // Records what `owner` wants and switches when the union changes. False (and *error) when
  // CUPTI refused; the recorded wish stays, and the next call tries again.
  bool Want(Owner owner, bool on, std::string* error);
  bool on() const;
  uint64_t switches() const;
  // How long the callbacks have been on since construction, the current period included: the
  // share of the run in which every launch paid for CUPTI's launch callbacks.
  double on_ms() const;

 private:
  Apply apply_;
  Clock now_ns_;
  mutable std::mutex mutex_;
  bool wants_[2];
  bool on_;
  uint64_t switches_ = 0;
  int64_t on_since_ns_ = 0;  // while on_
  int64_t on_ns_before_ = 0;  // closed periods
};

}  // namespace occ::inj
