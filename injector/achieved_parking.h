// AchievedParking: keeping the range profiler out of the program's way while there is nothing
// to measure -- the middle layer of the range achieved-occupancy profiler (achieved_profiler.h
// shows the layers).
//
// Two levels, both for sample mode:
//  - Parking a context (ShouldPark, Park): its profiler is dropped, since an enabled-but-stopped
//    profiler costs ~2 us on every launch of its context. A launch into an enabled context that
//    is not to be measured parks it once nothing was measured for idle_park_ns, or as soon as
//    the sample budget is spent; sampling then resumes in bursts, once burst_ns of budget has
//    built up again (AchievedPolicy::BudgetPaused), and the next launch to be measured sets the
//    profiler up again (AchievedContexts::Unpark).
//  - Quiet parking (MaybeQuietPark): once every context is parked and nothing was measured for
//    listen_ns, the profiler stops listening to launches: CUPTI's launch callbacks are switched
//    off (their dispatch cost 0.47 us of every launch, parked or not), or, where light tracing
//    keeps them on for itself, the launch path returns at its first check (listening()) instead
//    of looking the launch's signature up (0.5 us of every launch on an H100). ListenForLaunches
//    listens again when the trace writer sees a kernel configuration it has not seen before, or
//    a context is created.
//
// Takes: from the layer below (achieved_contexts.h), DropProfiler and whether any profiler is
// enabled or any setup thread runs; from the launch path (achieved_launch_path.h), the
// launches it does not measure; through the AchievedProfiler interface (achieved_profiler.cc),
// the subscriber and the trace writer's news of new kernel configurations.
// Gives: ExitClaim, which a launch takes before it holds a context until its EXIT callback,
// and the callback epoch, by which launching threads forget ENTERs whose EXIT callback came
// while the callbacks were off.
//
// callbacks_mutex_ serializes switching the launch callbacks and is taken with no other lock
// held (it takes the setup-thread lock inside, AchievedContexts::SetupThreadsRunning).
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "injector/achieved_contexts.h"

namespace occ::inj {

class AchievedParking : public AchievedContexts {
 protected:
  // A launch that needs its EXIT callback (it holds, or is about to take, a context's mutex
  // until then) counts itself in launches_awaiting_exit_ before it checks that the launch
  // callbacks are on, and stays counted until its EXIT. QuietPark clears that flag first and
  // then switches the callbacks off only if it finds no launch counted; a launch that counted
  // itself and then finds the flag cleared gives up. Both are sequentially consistent, so one of
  // the two always sees the other: no launch loses the EXIT it needs.
  class ExitClaim {
   public:
    explicit ExitClaim(AchievedParking* owner, bool held = false) : owner_(owner), held_(held) {}
    ~ExitClaim() {
      if (held_) owner_->launches_awaiting_exit_.fetch_sub(1, std::memory_order_seq_cst);
    }
    ExitClaim(const ExitClaim&) = delete;
    ExitClaim& operator=(const ExitClaim&) = delete;
    // False (and nothing held) while the launch callbacks are being switched off.
    bool Take() {
      owner_->launches_awaiting_exit_.fetch_add(1, std::memory_order_seq_cst);
      held_ = true;
      if (owner_->launch_callbacks_on_.load(std::memory_order_seq_cst)) return true;
      owner_->launches_awaiting_exit_.fetch_sub(1, std::memory_order_seq_cst);
      held_ = false;
      return false;
    }
    bool held() const { return held_; }
    // Hands the claim over to the pending launch, whose EXIT releases it.
    bool Hand() { return std::exchange(held_, false); }

   private:
    AchievedParking* owner_;
    bool held_;
  };

  AchievedParking(AchievedConfig config, std::unique_ptr<ProfilerDevice> device, NanoClock clock,
                  int64_t start_ns);

  // Once, right after the core subscribed: enables the context and launch callbacks; on
  // failure measurement stops (status_).
  void SubscribeCallbacks(CUpti_SubscriberHandle subscriber);
  // On the writer thread: a kernel configuration not seen before. Quiet parking listens again.
  void ListenForNewConfigurations();

  // Light tracing that detaches CUPTI between its windows (cupti_attachment.h), on the writer
  // thread. RestForDetach: whether CUPTI may be finalized now -- only while quietly parked with
  // nothing of the range profiler alive (no profiler enabled, no setup running, the profiler
  // session ended, no launch waiting for its EXIT). From a true answer until WakeAfterAttach
  // nothing here calls CUPTI: a new configuration or context is listened for after the attach,
  // and a new context's setup waits for its first measured launch.
  bool RestForDetach();
  void WakeAfterAttach(CUpti_SubscriberHandle subscriber);

  // Switches the launch callbacks on again after QuietPark (a new configuration in the kernel
  // records, a new context). Launches already inside a launch call when they come back see a
  // new epoch and forget the ENTERs they missed the EXITs of.
  void ListenForLaunches();

  // Sample mode, for a launch into an enabled context that is not to be measured: whether its
  // context is to be parked (the budget is spent, or nothing was measured for idle_park_ns).
  // Inline, like the checks below: they run on the launch path.
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

  // The callback-level half of parking (AchievedConfig::park_stops_callbacks), checked by a
  // launch into a parked context that was not measured: once every context is parked, nothing
  // was measured or skipped for budget for listen_ns, and the callbacks have been on at least
  // that long, they are switched off.
  void MaybeQuietPark() {
    const AchievedConfig& config = policy_.config();
    if (!config.park_stops_callbacks || config.mode != AchievedMode::kSample) return;
    if (!launch_callbacks_on_.load(std::memory_order_relaxed) || policy_.BudgetPaused()) return;
    if (policy_.IdleNs() < config.listen_ns ||
        clock_() - callbacks_on_since_ns_.load(std::memory_order_relaxed) < config.listen_ns) {
      return;
    }
    QuietPark();
  }

  // Measurement stopped for the run (no counter permission, an unsupported device, a CUPTI
  // error): nothing is measured again, so the launch callbacks go off as in quiet parking, at
  // once; nothing switches them on again (ListenForNewConfigurations and a new context check
  // the status). Without this, each launch kept paying CUPTI's callback dispatch for nothing.
  void StopListeningForGood() {
    if (!policy_.config().park_stops_callbacks || !launch_callbacks_on_.load(std::memory_order_relaxed)) return;
    QuietPark();
  }

  // Changes whenever the launch callbacks come back on (and when switching them off failed).
  uint64_t callbacks_epoch() const { return callbacks_epoch_.load(std::memory_order_acquire); }

  // False while quietly parked. A launch ENTER that reads false has nothing to do: a stale true
  // takes the ExitClaim path as before, and a stale false only leaves one launch unmeasured.
  bool listening() const { return launch_callbacks_on_.load(std::memory_order_relaxed); }

  std::atomic<int64_t> parks_{0};
  std::atomic<int64_t> quiet_parks_{0};
  std::atomic<int64_t> listens_{0};

 private:
  void QuietPark();
  void NewCallbacksEpoch();

  std::mutex callbacks_mutex_;
  CUpti_SubscriberHandle subscriber_ = nullptr;  // guarded by callbacks_mutex_
  bool quiet_park_failed_ = false;               // guarded by callbacks_mutex_
  bool cupti_away_ = false;        // guarded by callbacks_mutex_: RestForDetach said yes
  bool listen_at_attach_ = false;  // guarded by callbacks_mutex_: a listen came while away
  std::atomic<bool> launch_callbacks_on_{true};
  std::atomic<int64_t> launches_awaiting_exit_{0};
  std::atomic<uint64_t> callbacks_epoch_;
  std::atomic<int64_t> callbacks_on_since_ns_{0};
};

}  // namespace occ::inj
