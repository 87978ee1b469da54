// AchievedParking: keeping the range profiler out of the program's way while there is nothing
// to measure -- the middle layer of the range achieved-occupancy profiler (achieved_profiler.h
// shows the layers).
//
// Parking a context (ShouldPark, Park): its profiler is dropped, since an enabled-but-stopped
// profiler costs ~2 us on every launch of its context. A launch into an enabled context that is
// not to be measured parks it once nothing was measured for idle_park_ns, or as soon as the
// sample budget is spent; sampling then resumes in bursts, once burst_ns of budget has built
// up again (AchievedPolicy::BudgetPaused), and the next launch to be measured sets the profiler
// up again (AchievedContexts::Unpark).
//
// The launch callbacks stay on for the whole run: kernel replay is an explicit choice
// (OCCTRACE_ACHIEVED=sample or all) for exact per-launch figures, and CUPTI's dispatch of them
// costs ~0.5 us of every launch on an H100. (Switching them off while parked, "quiet parking",
// and finalizing CUPTI after sampling, "re-attach", took that cost away while kernel replay
// was the default, at the price of the injector's hardest code; both were deleted once PM
// sampling became the default, issue #31.)
//
// Takes: from the layer below (achieved_contexts.h), DropProfiler; from the launch path
// (achieved_launch_path.h), the launches it does not measure.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "injector/achieved/replay/achieved_contexts.h"

namespace occ::inj {

class AchievedParking : public AchievedContexts {
 protected:
  AchievedParking(AchievedConfig config, std::unique_ptr<ProfilerDevice> device, NanoClock clock,
                  int64_t start_ns)
      : AchievedContexts(config, std::move(device), std::move(clock), start_ns) {}

  // Once, right after the core subscribed: enables the context and launch callbacks; on
  // failure measurement stops (status_).
  void SubscribeCallbacks(CUpti_SubscriberHandle subscriber);

  // Sample mode, for a launch into an enabled context that is not to be measured: whether its
  // context is to be parked (the budget is spent, or nothing was measured for idle_park_ns).
  // Inline, like Park: they run on the launch path.
  bool ShouldPark() const {
    return policy_.config().mode == AchievedMode::kSample &&
           (policy_.BudgetPaused() || policy_.IdleNs() >= policy_.config().idle_park_ns);
  }

  // Called with the context's mutex held.
  void Park(ContextState* state) {
    DropProfiler(state);
    state->parked.store(true, std::memory_order_release);
    parks_.fetch_add(1, std::memory_order_relaxed);
  }

  std::atomic<int64_t> parks_{0};
};

}  // namespace occ::inj
