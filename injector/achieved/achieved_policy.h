// Which launches get their achieved occupancy measured. Pure C++ with an injectable clock and
// environment so that it is unit-tested on CPU; the range-profiler side is described in
// achieved_profiler.h.
//
// Why sampling: each profiled kernel costs ~3 ms on H100 (docs/achieved.md) because the
// range profiler serializes and replays it, so "every launch" slows a training step ~100x.
// Sample mode measures the first N launches of each signature and keeps the profiling time
// under a fraction of the run's wall time: when the budget is spent, sampling pauses, and it
// resumes as wall time grows.
//
// Cost: Decide() runs in every kernel launch's ENTER callback on the application's threads.
// A launch whose signature already has all its samples (the steady state of a training loop)
// is answered from a per-thread cache (ThreadCache) without the policy's mutex; only launches
// that may be measured, or that the cache does not hold, take it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "injector/common/env_settings.h"
#include "injector/achieved/time_budget.h"

namespace occ::inj {

// kPm: CUPTI's PM sampling (pm_collector.h) instead of the range profiler; the policy is not
// used then (nothing is chosen per launch).
enum class AchievedMode { kOff, kSample, kAll, kPm };

std::string_view AchievedModeName(AchievedMode mode);

struct AchievedConfig {
  // PM sampling by default (docs/achieved.md, "Why PM sampling is the default"); kernel replay
  // (`sample`, `all`) for exact per-launch figures.
  AchievedMode mode = AchievedMode::kPm;
  int32_t samples_per_signature = 1;  // OCCTRACE_SAMPLES
  double budget_fraction = 0.05;      // OCCTRACE_SAMPLE_BUDGET, of elapsed wall time
  // Sample mode: after this long with nothing to measure (no measurement running or ended, no
  // launch skipped for budget), the range profiler is parked (disabled) until a launch needs it
  // again; an enabled-but-stopped profiler costs ~2 us on every launch.
  // OCCTRACE_ACHIEVED_IDLE (seconds).
  int64_t idle_park_ns = 200'000'000;
  // Sample mode measures in bursts: when the budget is spent the profiler is parked at once
  // (an enabled profiler slows every launch of its context: ResNet-50 training on an H100 ran
  // 1.28x slower than off while signatures waited for budget with the profiler enabled), and
  // sampling resumes only once this much budget has built up again, so each re-enable is paid
  // for a burst of measurements rather than one. A re-enable costs ~180 ms of profiling time on
  // an H100 (enable, configuration, first start): with 100 ms bursts ResNet-50 training measured
  // only 86-114 of its 186 signatures in 30 s; a 1 s burst amortizes it over ~180 measurements.
  // OCCTRACE_SAMPLE_BURST_MS; 0 = resume as soon as any budget is free.
  int64_t burst_ns = 1'000'000'000;
  // Parking also ends CUPTI's profiler session (cuptiProfilerDeInitialize) once no context has
  // an enabled profiler; the next measurement initializes it again (charged to the budget).
  // On by default since an initialized-but-idle session was found to cost step time: in turns
  // on train_small.py (H100, 2026-11-25, 90 cycles) `sample`, parked, ran 1.024x `off`, and
  // 0.995x with the session ended (docs/performance.md). OCCTRACE_ACHIEVED_PARK_DEINIT=0|1.
  bool park_deinitializes = true;
  // Set a context's profiler up on a thread of occtrace's own, started when the context is
  // created, instead of on the application's thread (at CONTEXT_CREATED, or at the first launch
  // to measure). The setup took 0.2-0.65 s on an H200 (counter availability ~0.12 s, cold up to
  // 0.5 s; cuptiProfilerInitialize ~0.07 s; the first cuptiRangeProfilerStart ~0.14 s, done
  // there as a warm-up) while PyTorch's first kernel came 3.5 s after its context: the program
  // no longer waits for any of it. A launch to be measured before the setup ends waits for it
  // (context lock), so "the first N launches of each signature" still holds.
  // OCCTRACE_ACHIEVED_BACKGROUND_SETUP=0|1.
  bool background_setup = true;
  // OCCTRACE_ACHIEVED_REPLAY=user: the range profiler configured for user replay instead of
  // kernel replay (range_profiler.h ProfilerReplay); one pass either way.
  bool user_replay = false;
  // At most this many signatures are remembered (~80 B of heap each, so ~80 MiB at the cap;
  // bench/injector/achieved_launch_bench --memory): a program with millions of distinct grids
  // must not grow the tracer without bound. Launches of signatures first seen after the table
  // is full are not sampled; OCC_META counts them (achieved_launches_over_signature_cap).
  // OCCTRACE_ACHIEVED_MAX_SIGNATURES lowers it (0: the profiler is set up but measures nothing,
  // which tells what its setup alone costs).
  int64_t max_signatures = int64_t{1} << 20;
  // Longest wait for a context's lock in a launch callback (and at context destruction and
  // shutdown). A measured launch holds it for ~3 ms; a holder whose EXIT callback never comes
  // (CUPTI finalized by another client) would otherwise hang every later launch of the
  // context. See AchievedContexts::LockContext (achieved_contexts.h).
  int64_t context_wait_ns = 5'000'000'000;
  // Light tracing owns the launch callbacks (light_tracer.h): the profiler leaves them alone,
  // needs no runtime callbacks, and names launches by the driver launch API's correlation id, as OCC_LAUNCH_CALL
  // does.
  bool light_tracing = false;
};

// The OCCTRACE_* settings of AchievedConfig are parsed with every other one (settings.h).


// What makes two launches "the same" for sampling: function, grid, block, dynamic shared
// memory (and the context, since the function handle is per context).
struct LaunchSignature {
  uint64_t context = 0;
  uint64_t function = 0;
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block_x = 1, block_y = 1, block_z = 1;
  uint32_t dynamic_smem = 0;

  bool operator==(const LaunchSignature&) const = default;
};

struct LaunchSignatureHash {
  size_t operator()(const LaunchSignature& s) const noexcept;
};

// Monotonic nanoseconds.
using NanoClock = std::function<int64_t()>;

// Thread-safe.
class AchievedPolicy {
 public:
  struct Decision {
    bool measure = false;
    int32_t sample_index = 0;  // n-th sample of this signature (0-based) when measure
  };

  // One application thread's memory of signatures whose samples are all taken (sample mode).
  // A signature only ever enters it once its N samples are finished, which is final (Finish
  // never gives a sample back), so entries never go stale and need no invalidation. Only the
  // owning thread touches it. Fixed size -- kSets x kWays entries, ~100 KiB, allocated at the
  // first insertion -- whatever the program launches; a signature that does not fit costs only
  // the locked path. It remembers which policy filled it: a different policy (tests create
  // many, possibly at one address) starts it afresh.
  class ThreadCache {
   public:
    ThreadCache() = default;
    ThreadCache(const ThreadCache&) = delete;
    ThreadCache& operator=(const ThreadCache&) = delete;

   private:
    friend class AchievedPolicy;
    static constexpr size_t kSets = 512;
    static constexpr size_t kWays = 4;
    struct Set {
      LaunchSignature signatures[kWays];
      bool valid[kWays] = {};
      uint8_t next_victim = 0;
    };
    bool Contains(const LaunchSignature& signature, size_t hash) const;
    void Insert(const LaunchSignature& signature, size_t hash);

    uint64_t owner_ = 0;  // AchievedPolicy::id_ of the policy that filled it
    std::unique_ptr<Set[]> sets_;
  };

  // `clock` gives now; `start_ns` is the moment wall time counts from (process start).
  AchievedPolicy(AchievedConfig config, NanoClock clock, int64_t start_ns);

  // Decides whether to measure this launch. A positive decision reserves the sample: the
  // caller must then call Finish() (measured or not) so the budget is charged. `cache` (the
  // calling thread's, may be null) lets an exhausted signature be answered without the mutex.
  Decision Decide(const LaunchSignature& signature, ThreadCache* cache = nullptr);

  // Sample mode: how long since the last measurement ended or began (the idle time after which
  // the profiler is parked). Launches skipped for budget do not count as activity: the profiler
  // is parked while the budget builds up (BudgetPaused). Lock-free.
  int64_t IdleNs() const;
  // Sample mode: the budget is spent and sampling waits for a burst's worth of it (the profiler
  // should be parked meanwhile). Lock-free.
  bool BudgetPaused() const { return budget_paused_.load(std::memory_order_relaxed); }

  // Charges `profiling_ns` to the budget; `measured` counts the sample as measured (a launch
  // that yielded no range is charged and uses up its sample, but is not counted).
  void Finish(const LaunchSignature& signature, int64_t profiling_ns, bool measured);

  // Returns a sample that Decide() handed out but that was not attempted (the launch's stream
  // was capturing): nothing is charged and a later launch of the signature may take it.
  void Release(const LaunchSignature& signature);

  const AchievedConfig& config() const { return config_; }
  int64_t launches_measured() const;
  int64_t signatures_measured() const;
  int64_t signatures_seen() const;
  int64_t profiling_ns() const;
  // How many times sampling paused because the budget was spent.
  int64_t budget_pauses() const;
  // Launches that would have been sampled but were skipped while the budget was spent.
  int64_t skipped_for_budget() const;
  // Launches not considered because their signature came after max_signatures others.
  int64_t launches_over_signature_cap() const;

 private:
  struct SignatureState {
    int32_t reserved = 0;  // samples handed out (finished + in flight)
    int32_t finished = 0;  // Finish() called: measured or not, the sample is used up
    int32_t measured = 0;
  };

  bool BudgetAllowsLocked(int64_t now_ns);

  const AchievedConfig config_;
  const NanoClock clock_;
  const int64_t start_ns_;
  const uint64_t id_;  // unique per policy in the process, for ThreadCache::owner_

  mutable std::mutex mutex_;
  std::unordered_map<LaunchSignature, SignatureState, LaunchSignatureHash> signatures_;
  int64_t launches_measured_ = 0;
  int64_t signatures_measured_ = 0;
  int64_t profiling_ns_ = 0;
  // Last sample handed out or skipped for budget. Written under mutex_; atomic so that
  // IdleNs() reads it without the mutex.
  std::atomic<int64_t> last_busy_ns_{0};
  WallTimeBudget budget_;  // config_.budget_fraction, resuming after config_.burst_ns
  int64_t skipped_for_budget_ = 0;
  int64_t launches_over_signature_cap_ = 0;
  std::atomic<bool> budget_paused_{false};  // mirrors budget_.paused() for lock-free readers
};

}  // namespace occ::inj
