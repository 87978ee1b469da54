// Achieved occupancy (issue 5): the CUPTI range profiler around chosen kernel launches.
//
// Per context, the range profiler is enabled once with a one-pass config — on a setup thread
// started at CONTEXT_CREATED (it takes 0.2-0.65 s, which the program should not wait for), or
// by the first launch to be measured — and Start/Stop bracket a chosen driver-level launch: Start
// in the launch's ENTER callback, Stop + decode + evaluate in its EXIT callback. Auto range
// captures every kernel launched in the context between Start and Stop, so every launch in a
// context with an enabled profiler holds that context's mutex from ENTER to EXIT: a launch
// from another thread (PyTorch's autograd threads) cannot fall into someone else's range.
//
// The per-launch path is built for the steady state of sample mode (every signature sampled,
// the context parked), where it must cost next to nothing on the application's threads:
//  - the context's state comes from a per-thread cache validated by one atomic load of a table
//    version (contexts_mutex_ only on a miss, i.e. once per thread after a context appears or
//    goes away);
//  - the policy answers an exhausted signature from a per-thread cache (AchievedPolicy::
//    ThreadCache) without its mutex;
//  - a parked context is not locked unless the launch is to be measured.
// So an exhausted launch into a parked context takes no lock at all; into an enabled context it
// takes only that context's mutex, which is what keeps other threads' launches out of a
// measured range (a stopped-but-enabled profiler is cheap to keep, not to bypass).
//
// Known window (as before this design): a launch that read "parked" just before another
// thread re-enables the profiler for a measurement may still run inside that measurement; the
// range then reads multi-range (two kernels), never a wrong value.
//
// Lock order: contexts_mutex_ (map only; never held while waiting for a context's mutex)
// before ContextState::mutex, before session_mutex_, the policy's mutex, setup_threads_mutex_
// and status_mutex_ (leaves). The sink is
// called with the context mutex held (it only queues). Waits for a context's mutex are bounded
// (AchievedConfig::context_wait_ns, see LockContext).
#include <cuda.h>
#include <cupti.h>  // also brings generated_cuda_meta.h (launch parameter structs)
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "injector/achieved.h"
#include "injector/achieved_launch.h"
#include "injector/achieved_policy.h"
#include "injector/achieved_profiler.h"
#include "injector/errors.h"
#include "injector/range_profiler.h"

namespace occ::inj {
namespace {

int64_t BootTimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Process start on the CLOCK_BOOTTIME scale (/proc/self/stat field 22, in clock ticks), so the
// budget is a fraction of the program's whole wall time, interpreter start-up included.
int64_t ProcessStartBootTimeNs() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return BootTimeNs();
  // Field 2 (comm) may contain spaces and parentheses: fields after it start at the last ')'.
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return BootTimeNs();
  std::istringstream fields(line.substr(paren + 2));
  std::string field;
  // Fields 3..21 precede starttime (field 22).
  for (int i = 3; i <= 21 && fields >> field; ++i) {
  }
  unsigned long long start_ticks = 0;
  if (!(fields >> start_ticks)) return BootTimeNs();
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return BootTimeNs();
  const int64_t start = static_cast<int64_t>(start_ticks) *
                        (1'000'000'000 / static_cast<int64_t>(ticks_per_second));
  const int64_t now = BootTimeNs();
  return start <= now ? start : now;
}

struct ContextState {
  // Held from launch ENTER to EXIT while the context is not parked, around every change to
  // `profiler`, and by the setup thread for the whole background setup. Timed, so that every
  // wait for it is bounded (LockContext).
  std::timed_mutex mutex;
  std::unique_ptr<ContextProfiler> profiler;  // guarded by mutex; null when parked or failed
  // A new context starts parked (nothing set up yet); Retire leaves it unparked with no
  // profiler, which nothing re-enables. Written under mutex, read without it.
  std::atomic<bool> parked{true};
  bool ever_enabled = false;  // guarded by mutex: a later enable is an unpark
  // A wait for `mutex` timed out and its holder has not let go since: launches do not wait.
  std::atomic<bool> stalled{false};
};

// What a launch's ENTER left for its EXIT on the same thread.
struct PendingLaunch {
  std::shared_ptr<ContextState> context;
  std::unique_lock<std::timed_mutex> lock;  // after `context`: released before it is dropped
  bool measuring = false;
  LaunchSignature signature;
  AchievedSample sample;
  int64_t start_ns = 0;
  int64_t started_ns = 0;  // when the profiler's Start returned
  bool exit_claimed = false;  // counted in launches_awaiting_exit_ until its EXIT
};

constexpr int kYieldsBeforeTimedWait = 16;

// Contexts a thread launched into recently. A program uses a handful of contexts (one per
// device, green contexts); a thread driving more than this takes contexts_mutex_ on misses.
constexpr size_t kCachedContexts = 4;

struct CachedContext {
  CUcontext ctx = nullptr;
  std::shared_ptr<ContextState> state;  // keeps it alive while cached (DestroyContext erases)
};

struct ThreadState {
  // Valid while equal to the owning profiler's contexts_version_. Versions come from one
  // process-wide counter, so a cache filled by another profiler instance never matches.
  uint64_t contexts_version = 0;
  std::array<CachedContext, kCachedContexts> contexts;
  size_t next_context_slot = 0;
  AchievedPolicy::ThreadCache exhausted;
  OuterCorrelation correlation;
  bool in_launch = false;
  PendingLaunch pending;
  // The launch-callback epoch this thread's in_launch and correlation belong to (QuietPark).
  uint64_t callbacks_epoch = 0;
};

thread_local ThreadState t_thread;

// Table versions start at 1: a thread's initial version 0 matches no profiler.
std::atomic<uint64_t> g_next_contexts_version{1};
// Launch-callback epochs, process-wide like table versions.
std::atomic<uint64_t> g_next_callbacks_epoch{1};

class RangeAchievedProfiler final : public AchievedProfiler {
  // A launch that needs its EXIT callback (it holds, or is about to take, a context's mutex
  // until then) counts itself in launches_awaiting_exit_ before it checks that the launch
  // callbacks are on, and stays counted until its EXIT. QuietPark clears that flag first and
  // then switches the callbacks off only if it finds no launch counted; a launch that counted
  // itself and then finds the flag cleared gives up. Both are sequentially consistent, so one of
  // the two always sees the other: no launch loses the EXIT it needs.
  class ExitClaim {
   public:
    explicit ExitClaim(RangeAchievedProfiler* owner, bool held = false)
        : owner_(owner), held_(held) {}
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
    RangeAchievedProfiler* owner_;
    bool held_;
  };

 public:
  RangeAchievedProfiler(AchievedSink sink, AchievedConfig config,
                        std::unique_ptr<ProfilerDevice> device, NanoClock clock, int64_t start_ns)
      : sink_(std::move(sink)),
        device_(std::move(device)),
        clock_(clock),
        policy_(config, std::move(clock), start_ns),
        policy_name_(AchievedModeName(config.mode)),
        context_wait_(config.context_wait_ns) {}

  // Disables what is still enabled; threads' caches may keep a ContextState alive a little
  // longer, but never an enabled profiler.
  ~RangeAchievedProfiler() override { Shutdown(); }

  void EnableCallbacks(CUpti_SubscriberHandle subscriber) override {
    ProfilerError error;
    const bool ok = device_->EnableContextCallbacks(subscriber, &error) &&
                    device_->SetLaunchCallbacks(subscriber, /*on=*/true, &error);
    if (!ok) {
      DisableAll("error: " + error.Message());
      return;
    }
    std::lock_guard<std::mutex> lock(callbacks_mutex_);
    subscriber_ = subscriber;
    callbacks_on_since_ns_.store(clock_(), std::memory_order_relaxed);
  }

  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const void* cbdata) override {
    switch (domain) {
      case CUPTI_CB_DOMAIN_RUNTIME_API:
        if (IsRuntimeLaunchCbid(cbid)) {
          OnRuntimeLaunch(static_cast<const CUpti_CallbackData*>(cbdata));
        }
        break;
      case CUPTI_CB_DOMAIN_DRIVER_API:
        if (IsKernelLaunchCbid(cbid)) {
          OnKernelLaunch(cbid, static_cast<const CUpti_CallbackData*>(cbdata));
        } else if (IsGraphLaunchCbid(cbid)) {
          OnGraphLaunch(static_cast<const CUpti_CallbackData*>(cbdata));
        }
        break;
      case CUPTI_CB_DOMAIN_RESOURCE: {
        const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
          if (!disabled_.load(std::memory_order_acquire)) OnContextCreated(resource->context);
        } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
          DestroyContext(resource->context);
        }
        break;
      }
      default:
        break;
    }
  }

  void OnNewKernelConfigurations() override {
    if (launch_callbacks_on_.load(std::memory_order_relaxed) ||
        disabled_.load(std::memory_order_acquire)) {
      return;
    }
    ListenForLaunches();
  }

  // Returns with no setup thread running, unless one outlived context_wait_ (then the profiler
  // session is left alone, as for a stuck launch; the tracer is never destroyed in a traced
  // program, so the thread cannot outlive the object there).
  void Shutdown() override {
    std::unordered_map<CUcontext, std::shared_ptr<ContextState>> contexts;
    {
      std::lock_guard<std::mutex> lock(contexts_mutex_);
      if (shut_down_) return;
      shut_down_ = true;
      contexts.swap(contexts_);
      BumpContextsVersionLocked();
    }
    disabled_.store(true, std::memory_order_release);
    for (auto& [ctx, state] : contexts) Retire(state.get());
    if (!WaitForSetupThreads()) left_enabled_.store(true, std::memory_order_relaxed);
    // Not under a profiler that a stuck launch may still be using.
    if (!left_enabled_.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(session_mutex_);
      EndProfilerSessionLocked();
    }
  }

  std::vector<std::pair<std::string, std::string>> SessionMeta() const override {
    std::vector<std::pair<std::string, std::string>> meta;
    const AchievedConfig& config = policy_.config();
    std::string status;
    std::string metrics;
    std::string chip;
    {
      std::lock_guard<std::mutex> lock(status_mutex_);
      status = status_;
      metrics = metrics_;
      chip = chip_;
    }
    if (status.empty()) status = policy_.launches_measured() > 0 ? "ok" : "ok: no launch measured";
    meta.emplace_back("achieved_mode", std::string(AchievedModeName(config.mode)));
    meta.emplace_back("achieved_status", status);
    meta.emplace_back("achieved_metrics", metrics);
    meta.emplace_back("achieved_chip", chip);
    meta.emplace_back("achieved_launches_measured", std::to_string(policy_.launches_measured()));
    meta.emplace_back("achieved_launches_not_measured",
                      std::to_string(not_measured_.load(std::memory_order_relaxed)));
    meta.emplace_back("achieved_signatures_measured",
                      std::to_string(policy_.signatures_measured()));
    meta.emplace_back("achieved_signatures_seen", std::to_string(policy_.signatures_seen()));
    meta.emplace_back("achieved_signature_cap", std::to_string(config.max_signatures));
    meta.emplace_back("achieved_launches_over_signature_cap",
                      std::to_string(policy_.launches_over_signature_cap()));
    meta.emplace_back("achieved_samples_per_signature",
                      std::to_string(config.samples_per_signature));
    meta.emplace_back("achieved_sample_budget", std::to_string(config.budget_fraction));
    meta.emplace_back("achieved_budget_applies",
                      config.mode == AchievedMode::kSample ? "1" : "0");
    meta.emplace_back("achieved_profiling_ns", std::to_string(policy_.profiling_ns()));
    meta.emplace_back("achieved_setup_ns", std::to_string(setup_ns_.load()));
    meta.emplace_back("achieved_background_setup", config.background_setup ? "1" : "0");
    meta.emplace_back("achieved_background_setup_ns", std::to_string(background_setup_ns_.load()));
    meta.emplace_back("achieved_budget_pauses", std::to_string(policy_.budget_pauses()));
    meta.emplace_back("achieved_sample_burst_ms", std::to_string(config.burst_ns / 1'000'000));
    meta.emplace_back("achieved_idle_park_s",
                      std::to_string(static_cast<double>(config.idle_park_ns) / 1e9));
    meta.emplace_back("achieved_parks", std::to_string(parks_.load()));
    meta.emplace_back("achieved_unparks", std::to_string(unparks_.load()));
    meta.emplace_back("achieved_park_deinit", config.park_deinitializes ? "1" : "0");
    meta.emplace_back("achieved_quiet_park", config.park_stops_callbacks ? "1" : "0");
    meta.emplace_back("achieved_quiet_park_listen_ms", std::to_string(config.listen_ns / 1'000'000));
    meta.emplace_back("achieved_quiet_parks", std::to_string(quiet_parks_.load()));
    meta.emplace_back("achieved_listens", std::to_string(listens_.load()));
    {
      static constexpr const char* kPhaseNames[kPhases] = {"start", "launch", "stop",
                                                           "decode", "evaluate", "reset"};
      std::string phases;
      for (int i = 0; i < kPhases; ++i) {
        char part[64];
        std::snprintf(part, sizeof(part), "%s%s=%.1f", i > 0 ? "," : "", kPhaseNames[i],
                      static_cast<double>(phase_ns_[static_cast<size_t>(i)].load()) / 1e6);
        phases += part;
      }
      meta.emplace_back("achieved_phase_ms", phases);
    }
    meta.emplace_back("achieved_profiler_session_ends", std::to_string(session_ends_.load()));
    meta.emplace_back("achieved_skipped_for_budget",
                      std::to_string(policy_.skipped_for_budget()));
    meta.emplace_back("achieved_context_wait_timeouts",
                      std::to_string(context_wait_timeouts_.load()));
    return meta;
  }

 private:
  void OnRuntimeLaunch(const CUpti_CallbackData* data) {
    ThreadState& thread = t_thread;
    SyncCallbacksEpoch(&thread);
    thread.correlation.OnRuntimeLaunch(data->callbackSite == CUPTI_API_ENTER,
                                       data->correlationId);
  }

  uint32_t CorrelationId(const CUpti_CallbackData* data) const {
    return t_thread.correlation.ForDriverLaunch(data->correlationId);
  }

  void OnKernelLaunch(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
    ThreadState& thread = t_thread;
    SyncCallbacksEpoch(&thread);
    if (data->callbackSite == CUPTI_API_ENTER) {
      // A pending launch whose EXIT never came keeps in_launch set: this thread's ENTERs are
      // then ignored and its next EXIT closes the pending one (releasing its context).
      if (thread.in_launch || disabled_.load(std::memory_order_acquire)) return;
      thread.in_launch = true;
      OnKernelLaunchEnter(&thread, cbid, data);
    } else if (thread.in_launch) {
      thread.in_launch = false;
      OnKernelLaunchExit(data, &thread.pending);
    }
  }

  void OnKernelLaunchEnter(ThreadState* thread, CUpti_CallbackId cbid,
                           const CUpti_CallbackData* data) {
    const std::shared_ptr<ContextState>* cached = ContextForLaunch(thread, data->context);
    if (cached == nullptr) return;
    ContextState* state = cached->get();
    const LaunchArgs args = ReadLaunchArgs(cbid, data->functionParams);
    const LaunchSignature signature = SignatureOf(data->context, args);

    // While the profiler is enabled, every launch in the context holds its mutex until EXIT, so
    // no launch from another thread lands in a measured range. A parked context has nothing
    // to protect: only a launch that is to be measured takes the mutex (and re-enables).
    std::unique_lock<std::timed_mutex> lock;
    AchievedPolicy::Decision decision;
    bool decided = false;
    ExitClaim claim(this);
    if (!state->parked.load(std::memory_order_acquire)) {
      if (!claim.Take()) return;  // the launch callbacks are being switched off
      lock = LockContext(state);
      if (!lock.owns_lock()) return;  // a stuck holder: go ahead unmeasured (LockContext)
      if (!state->parked.load(std::memory_order_relaxed)) {
        if (!state->profiler) return;  // failed, or its context is being destroyed
        decision = policy_.Decide(signature, &thread->exhausted);
        decided = true;
        if (!decision.measure) {
          if (policy_.config().mode == AchievedMode::kSample &&
              (policy_.BudgetPaused() || policy_.IdleNs() >= policy_.config().idle_park_ns)) {
            Park(state);
            return;
          }
          HoldUntilExit(*cached, std::move(lock), &thread->pending, &claim);
          return;
        }
      } else {
        lock.unlock();  // parked while this launch waited
      }
    }
    if (!decided) {
      decision = policy_.Decide(signature, &thread->exhausted);
      if (!decision.measure) {
        MaybeQuietPark();
        return;
      }
      if (!claim.held() && !claim.Take()) {
        policy_.Release(signature);
        return;
      }
      lock = LockContext(state);
      if (!lock.owns_lock()) {
        policy_.Release(signature);
        return;
      }
    }

    AchievedSample sample;
    sample.correlation_id = CorrelationId(data);
    sample.context_id = data->contextUid;
    sample.policy = policy_name_;
    sample.sample_index = decision.sample_index;

    // Starting the profiler while the stream captures breaks the capture (the app's
    // cudaStreamEndCapture fails): never measure a capturing launch. The sample is given back:
    // the kernel may still run eagerly later.
    if (device_->StreamMayBeCapturing(args.stream)) {
      policy_.Release(signature);
      sample.status = "capturing";
      Emit(std::move(sample), /*measured=*/false);
      if (state->profiler) HoldUntilExit(*cached, std::move(lock), &thread->pending, &claim);
      return;
    }

    // Re-enabling a parked profiler is part of this sample's cost (charged to the budget).
    const int64_t start_ns = clock_();
    ProfilerError error;
    // A setup that failed while this launch waited for the lock (the setup thread's) has
    // stopped measurement: one attempt per run, not another one here.
    if (disabled_.load(std::memory_order_acquire)) {
      policy_.Release(signature);
      return;
    }
    if (state->parked.load(std::memory_order_relaxed) && !Unpark(state, data->context, &error)) {
      policy_.Finish(signature, clock_() - start_ns, false);
      FailContext(state, error);
      return;
    }
    if (!state->profiler) {
      policy_.Release(signature);
      return;
    }
    const int64_t before_start_ns = clock_();
    if (!state->profiler->Start(&error)) {
      policy_.Finish(signature, clock_() - start_ns, false);
      FailContext(state, error);
      return;
    }
    const int64_t started_ns = clock_();
    phase_ns_[kPhaseStart].fetch_add(started_ns - before_start_ns, std::memory_order_relaxed);
    HoldUntilExit(*cached, std::move(lock), &thread->pending, &claim);
    thread->pending.measuring = true;
    thread->pending.signature = signature;
    thread->pending.sample = std::move(sample);
    thread->pending.start_ns = start_ns;
    thread->pending.started_ns = started_ns;
  }

  // The context lock stays held until this thread's EXIT callback for the launch.
  void HoldUntilExit(const std::shared_ptr<ContextState>& state,
                     std::unique_lock<std::timed_mutex> lock, PendingLaunch* pending,
                     ExitClaim* claim) {
    // Its own reference, so that the pending launch does not depend on what the thread's
    // context cache keeps; taken while the lock serializes the context's launches, so the
    // reference count is not contended.
    pending->context = state;
    pending->lock = std::move(lock);
    pending->measuring = false;
    pending->exit_claimed = claim->Hand();
  }

  // Waits for the context's mutex at most context_wait_ns. A holder keeping it longer has most
  // likely lost its EXIT callback (CUPTI finalized or our callbacks disabled by another client)
  // and may never let go: rather than hang the program, the launch goes ahead without the
  // mutex and unmeasured, and while the context is marked stalled later launches do not wait at
  // all. Whoever next gets the mutex clears the mark. If the holder was merely slow (a measured
  // kernel running longer than the bound), a launch that went ahead may run inside its range,
  // which then reads multi-range: lost, never a wrong value.
  std::unique_lock<std::timed_mutex> LockContext(ContextState* state) {
    std::unique_lock<std::timed_mutex> lock(state->mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
      if (state->stalled.load(std::memory_order_acquire)) return lock;
      // Most holds last one launch call (a few us). A timed futex wait arms a kernel timer
      // that costs more than that: yield a few times first (with 4 threads launching into one
      // enabled context, 0.89x the old untimed lock's ns/launch instead of 1.15x).
      for (int i = 0; i < kYieldsBeforeTimedWait && !lock.try_lock(); ++i) {
        std::this_thread::yield();
      }
      if (!lock.owns_lock() && !lock.try_lock_for(context_wait_)) {
        if (!state->stalled.exchange(true, std::memory_order_acq_rel)) NoteContextWaitTimeout();
        return lock;
      }
    }
    if (state->stalled.load(std::memory_order_relaxed)) {
      state->stalled.store(false, std::memory_order_release);
    }
    return lock;
  }

  void NoteContextWaitTimeout() {
    if (context_wait_timeouts_.fetch_add(1, std::memory_order_relaxed) > 0) return;
    LogLine(
        "achieved occupancy: a kernel launch held a context's profiler lock for more than %.1f "
        "s (its EXIT callback may never come, e.g. CUPTI was finalized by another client); "
        "launches in that context go ahead without it and unmeasured",
        static_cast<double>(context_wait_.count()) / 1e9);
  }

  // Called with the context's mutex held.
  void Park(ContextState* state) {
    DropProfiler(state);
    state->parked.store(true, std::memory_order_release);
    parks_.fetch_add(1, std::memory_order_relaxed);
  }

  // Each enabled context profiler counts as a user of CUPTI's profiler session; with
  // park_deinitializes the session ends when the last one parks. session_mutex_ comes after a
  // context's mutex (Park/Unpark hold it) and is never held while taking one.
  void AcquireProfilerSession() {
    std::lock_guard<std::mutex> lock(session_mutex_);
    ++enabled_profilers_;
    enabled_profilers_now_.store(enabled_profilers_, std::memory_order_seq_cst);
  }
  void ReleaseProfilerSession() {
    std::lock_guard<std::mutex> lock(session_mutex_);
    --enabled_profilers_;
    enabled_profilers_now_.store(enabled_profilers_, std::memory_order_seq_cst);
    if (enabled_profilers_ > 0 || !policy_.config().park_deinitializes) return;
    if (EndProfilerSessionLocked()) session_ends_.fetch_add(1, std::memory_order_relaxed);
  }
  bool EndProfilerSessionLocked() {
    if (!profiler_session_) return false;
    device_->Deinitialize();
    profiler_session_ = false;
    return true;
  }
  // Called before creating a context profiler: starts the session if parking ended it.
  bool EnsureProfilerSession(ProfilerError* error) {
    std::lock_guard<std::mutex> lock(session_mutex_);
    if (profiler_session_) return true;
    profiler_session_ = device_->Initialize(error);
    return profiler_session_;
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

  void QuietPark() {
    std::unique_lock<std::mutex> lock(callbacks_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || subscriber_ == nullptr || quiet_park_failed_ ||
        !launch_callbacks_on_.load(std::memory_order_relaxed)) {
      return;
    }
    if (enabled_profilers_now_.load(std::memory_order_seq_cst) != 0) return;
    {
      std::lock_guard<std::mutex> setup(setup_threads_mutex_);
      if (setup_threads_running_ != 0) return;
    }
    launch_callbacks_on_.store(false, std::memory_order_seq_cst);
    if (launches_awaiting_exit_.load(std::memory_order_seq_cst) != 0 ||
        enabled_profilers_now_.load(std::memory_order_seq_cst) != 0) {
      // A launch holds a context until its EXIT: a later launch tries again.
      launch_callbacks_on_.store(true, std::memory_order_seq_cst);
      return;
    }
    ProfilerError error;
    if (!device_->SetLaunchCallbacks(subscriber_, /*on=*/false, &error)) {
      // Some may be off already: all on again, and parking stays at the profiler level.
      ProfilerError ignored;
      device_->SetLaunchCallbacks(subscriber_, /*on=*/true, &ignored);
      quiet_park_failed_ = true;
      NewCallbacksEpoch();
      launch_callbacks_on_.store(true, std::memory_order_seq_cst);
      LogLine("achieved occupancy: switching the launch callbacks off while parked failed (%s); "
              "they stay on", error.Message().c_str());
      return;
    }
    quiet_parks_.fetch_add(1, std::memory_order_relaxed);
  }

  // Switches the launch callbacks on again after QuietPark (a new configuration in the kernel
  // records, a new context). Launches already inside a launch call when they come back see a
  // new epoch and forget the ENTERs they missed the EXITs of (SyncCallbacksEpoch).
  void ListenForLaunches() {
    std::lock_guard<std::mutex> lock(callbacks_mutex_);
    if (launch_callbacks_on_.load(std::memory_order_relaxed) || subscriber_ == nullptr) return;
    NewCallbacksEpoch();
    ProfilerError error;
    if (!device_->SetLaunchCallbacks(subscriber_, /*on=*/true, &error)) {
      LogLine("achieved occupancy: switching the launch callbacks on again failed (%s); no "
              "further launches are measured", error.Message().c_str());
      return;
    }
    callbacks_on_since_ns_.store(clock_(), std::memory_order_relaxed);
    launch_callbacks_on_.store(true, std::memory_order_seq_cst);
    listens_.fetch_add(1, std::memory_order_relaxed);
  }

  void NewCallbacksEpoch() {
    callbacks_epoch_.store(g_next_callbacks_epoch.fetch_add(1, std::memory_order_relaxed),
                           std::memory_order_release);
  }

  // An ENTER whose EXIT came while the launch callbacks were off is forgotten, and so is the
  // runtime launch a missed EXIT left open. None of those held a context (QuietPark waits
  // for such launches), so nothing is left locked.
  void SyncCallbacksEpoch(ThreadState* thread) {
    const uint64_t epoch = callbacks_epoch_.load(std::memory_order_acquire);
    if (thread->callbacks_epoch == epoch) return;
    thread->callbacks_epoch = epoch;
    if (!thread->pending.context) {
      thread->in_launch = false;
      thread->correlation = OuterCorrelation();
    }
  }

  // Sets the parked context's profiler up on this (application) thread. Called with the
  // context's mutex held.
  bool Unpark(ContextState* state, CUcontext ctx, ProfilerError* error) {
    const int64_t start_ns = clock_();
    const bool reenable = state->ever_enabled;
    const bool enabled = Enable(state, ctx, error);
    setup_ns_.fetch_add(clock_() - start_ns, std::memory_order_relaxed);
    if (enabled && reenable) unparks_.fetch_add(1, std::memory_order_relaxed);
    return enabled;
  }

  // Called with the context's mutex held.
  bool Enable(ContextState* state, CUcontext ctx, ProfilerError* error) {
    if (EnsureProfilerSession(error)) {
      state->profiler =
          device_->CreateContextProfiler(ctx, policy_.config().occupancy_metric_only, error);
    }
    if (!state->profiler) return false;
    AcquireProfilerSession();
    state->ever_enabled = true;
    state->parked.store(false, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(status_mutex_);
      chip_ = state->profiler->chip_name();
      metrics_.clear();
      for (const char* metric : state->profiler->metrics()) {
        if (!metrics_.empty()) metrics_ += ",";
        metrics_ += metric;
      }
    }
    return true;
  }

  // CONTEXT_CREATED, on the creating thread: the profiler is set up now, on a setup thread of
  // our own (AchievedConfig::background_setup) or, failing that, here.
  void OnContextCreated(CUcontext ctx) {
    ListenForLaunches();  // a new context's launches are to be measured
    bool created = false;
    std::shared_ptr<ContextState> state = FindOrCreateContext(ctx, nullptr, &created);
    if (!state || !created) return;
    if (policy_.config().background_setup && StartSetupThread(state, ctx)) return;
    std::unique_lock<std::timed_mutex> lock = LockContext(state.get());
    if (!lock.owns_lock() || !state->parked.load(std::memory_order_relaxed)) return;
    ProfilerError error;
    if (!Unpark(state.get(), ctx, &error)) FailContext(state.get(), error);
  }

  bool StartSetupThread(std::shared_ptr<ContextState> state, CUcontext ctx) {
    std::lock_guard<std::mutex> lock(setup_threads_mutex_);
    if (setup_threads_closed_) return false;
    ++setup_threads_running_;
    try {
      std::thread([this, state = std::move(state), ctx]() mutable {
        SetUpInBackground(state.get(), ctx);
        state.reset();  // nothing of this thread touches the context state after this
        std::lock_guard<std::mutex> done(setup_threads_mutex_);
        --setup_threads_running_;
        setup_threads_done_.notify_all();  // under the mutex: the waiter may destroy *this next
      }).detach();
    } catch (const std::system_error&) {
      --setup_threads_running_;  // no thread: the caller sets up on its own thread
      return false;
    }
    return true;
  }

  // On the setup thread. It holds the context's mutex throughout, so a launch that is to be
  // measured meanwhile waits for the setup (bounded, LockContext) and then finds the profiler
  // ready and warm; launches not to be measured go ahead, since a parked context needs no lock
  // and an enabled-but-stopped profiler measures nothing. Enable unparks the context before
  // the warm-up Start, so from then on every launch waits rather than run inside the warm-up
  // range (except one already past its parked check: the known window in the header).
  void SetUpInBackground(ContextState* state, CUcontext ctx) {
    std::unique_lock<std::timed_mutex> lock(state->mutex, std::defer_lock);
    if (!lock.try_lock_for(context_wait_)) return;  // a launch will set it up if it needs it
    // Already set up by a launch that got here first, retired, or measurement stopped.
    if (!state->parked.load(std::memory_order_relaxed) || state->ever_enabled ||
        disabled_.load(std::memory_order_acquire)) {
      return;
    }
    const int64_t start_ns = clock_();
    ProfilerError error;
    const bool ready = Enable(state, ctx, &error) && state->profiler->WarmUp(&error);
    background_setup_ns_.fetch_add(clock_() - start_ns, std::memory_order_relaxed);
    if (!ready) FailContext(state, error);
  }

  bool WaitForSetupThreads() {
    std::unique_lock<std::mutex> lock(setup_threads_mutex_);
    setup_threads_closed_ = true;
    return setup_threads_done_.wait_for(lock, context_wait_,
                                        [this] { return setup_threads_running_ == 0; });
  }

  void OnKernelLaunchExit(const CUpti_CallbackData* data, PendingLaunch* pending) {
    if (!pending->context) return;
    std::shared_ptr<ContextState> state = std::move(pending->context);
    std::unique_lock<std::timed_mutex> lock = std::move(pending->lock);
    ExitClaim claim(this, std::exchange(pending->exit_claimed, false));  // released on return
    if (!pending->measuring) return;
    pending->measuring = false;
    AchievedSample sample = std::move(pending->sample);
    if (!state->profiler) return;

    ContextProfiler::Measurement measurement;
    ProfilerError error;
    const int64_t exit_ns = clock_();
    const bool decoded = state->profiler->StopAndDecode(&measurement, &error);
    const int64_t profiling_ns = clock_() - pending->start_ns;
    phase_ns_[kPhaseLaunch].fetch_add(exit_ns - pending->started_ns, std::memory_order_relaxed);
    phase_ns_[kPhaseStop].fetch_add(measurement.stop_ns, std::memory_order_relaxed);
    phase_ns_[kPhaseDecode].fetch_add(measurement.decode_ns, std::memory_order_relaxed);
    phase_ns_[kPhaseEvaluate].fetch_add(measurement.evaluate_ns, std::memory_order_relaxed);
    phase_ns_[kPhaseReset].fetch_add(measurement.reset_ns, std::memory_order_relaxed);
    const CUresult launch_result = data->functionReturnValue != nullptr
                                       ? *static_cast<const CUresult*>(data->functionReturnValue)
                                       : CUDA_SUCCESS;
    bool measured = false;
    if (!decoded) {
      sample.status = "error";
    } else if (launch_result != CUDA_SUCCESS) {
      sample.status = "launch-failed";
    } else if (measurement.num_ranges == 0) {
      sample.status = "no-range";
    } else if (measurement.num_ranges > 1) {
      // Another kernel ran in the context between Start and Stop (a launch without callback,
      // or one that raced a re-enable): the ranges cannot be told apart.
      sample.status = "multi-range";
    } else if (measurement.occupancy_pct < 0) {
      sample.status = "no-value";
    } else {
      measured = true;
      sample.status = "measured";
      sample.achieved_occupancy_pct = measurement.occupancy_pct;
      sample.warps_active_per_cycle = measurement.warps_per_cycle;
      sample.sm_cycles_active = measurement.cycles_active;
      sample.gpu_time_ns = measurement.gpu_time_ns;
      sample.dram_throughput_pct = measurement.dram_throughput_pct;
      sample.l2_throughput_pct = measurement.l2_throughput_pct;
      sample.l1_throughput_pct = measurement.l1_throughput_pct;
      sample.issue_slots_pct = measurement.issue_slots_pct;
      sample.tensor_pipe_pct = measurement.tensor_pipe_pct;
    }
    policy_.Finish(pending->signature, profiling_ns, measured);
    Emit(std::move(sample), measured);
    if (!decoded) FailContext(state.get(), error);
  }

  void OnGraphLaunch(const CUpti_CallbackData* data) {
    if (data->callbackSite != CUPTI_API_ENTER || disabled_.load(std::memory_order_acquire)) {
      return;
    }
    // Start/Stop around cuGraphLaunch yields no range (cupti-notes.md §5.3): graph kernels are
    // recorded as not measured, one row per graph launch the policy picks.
    const auto* params = static_cast<const cuGraphLaunch_params*>(data->functionParams);
    LaunchSignature signature;
    signature.context = reinterpret_cast<uintptr_t>(data->context);
    signature.function = reinterpret_cast<uintptr_t>(params != nullptr ? params->hGraph : nullptr);
    signature.grid_x = signature.grid_y = signature.grid_z = 0;  // never a kernel's grid
    AchievedPolicy::Decision decision = policy_.Decide(signature, &t_thread.exhausted);
    if (!decision.measure) return;
    policy_.Finish(signature, 0, false);
    AchievedSample sample;
    sample.correlation_id = CorrelationId(data);
    sample.context_id = data->contextUid;
    sample.status = "graph";
    sample.policy = policy_name_;
    sample.sample_index = decision.sample_index;
    Emit(std::move(sample), false);
  }

  void Emit(AchievedSample&& sample, bool measured) {
    if (!measured) not_measured_.fetch_add(1, std::memory_order_relaxed);
    sink_(std::move(sample));
  }

  // The launching thread's view of the context table: its cached entry while the table has not
  // changed (one acquire load), else the table under contexts_mutex_. Null when achieved
  // measurement is off for the context. Points into the thread's cache: valid until this
  // thread's next call.
  const std::shared_ptr<ContextState>* ContextForLaunch(ThreadState* thread, CUcontext ctx) {
    if (ctx == nullptr) return nullptr;
    if (thread->contexts_version == contexts_version_.load(std::memory_order_acquire)) {
      for (const CachedContext& cached : thread->contexts) {
        if (cached.ctx == ctx) return &cached.state;
      }
    }
    uint64_t version = 0;
    std::shared_ptr<ContextState> state = FindOrCreateContext(ctx, &version);
    if (!state) return nullptr;
    if (thread->contexts_version != version) {
      thread->contexts = {};
      thread->next_context_slot = 0;
      thread->contexts_version = version;
    }
    CachedContext& slot = thread->contexts[thread->next_context_slot];
    thread->next_context_slot = (thread->next_context_slot + 1) % kCachedContexts;
    slot.ctx = ctx;
    slot.state = std::move(state);
    return &slot.state;
  }

  // Under contexts_mutex_; any change to contexts_ or shut_down_ invalidates threads' caches.
  void BumpContextsVersionLocked() {
    contexts_version_.store(g_next_contexts_version.fetch_add(1, std::memory_order_relaxed),
                            std::memory_order_release);
  }

  // The context's state, created parked (its profiler is set up by OnContextCreated, or by the
  // first launch to be measured); nullptr after shutdown. *version: the table version the
  // answer belongs to; *created: whether this call added it.
  std::shared_ptr<ContextState> FindOrCreateContext(CUcontext ctx, uint64_t* version = nullptr,
                                                    bool* created = nullptr) {
    if (ctx == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(contexts_mutex_);
    if (shut_down_) return nullptr;
    auto [it, inserted] = contexts_.try_emplace(ctx);
    if (inserted) {
      it->second = std::make_shared<ContextState>();
      BumpContextsVersionLocked();
    }
    if (version != nullptr) *version = contexts_version_.load(std::memory_order_relaxed);
    if (created != nullptr) *created = inserted;
    return it->second;
  }

  void DestroyContext(CUcontext ctx) {
    std::shared_ptr<ContextState> state;
    {
      std::lock_guard<std::mutex> lock(contexts_mutex_);
      auto it = contexts_.find(ctx);
      if (it == contexts_.end()) return;
      state = std::move(it->second);
      contexts_.erase(it);
      BumpContextsVersionLocked();
    }
    Retire(state.get());
  }

  // A context going away (destroyed, or everything at shutdown): its profiler is dropped, and a
  // launch that already holds the state must not re-enable it. A stuck holder (a lost EXIT
  // callback) keeps its profiler rather than hang the program here.
  void Retire(ContextState* state) {
    std::unique_lock<std::timed_mutex> lock(state->mutex, std::defer_lock);
    if (!lock.try_lock_for(context_wait_)) {
      NoteContextWaitTimeout();
      left_enabled_.store(true, std::memory_order_relaxed);
      return;
    }
    DropProfiler(state);
    state->parked.store(false, std::memory_order_release);
  }

  // Called with the context's mutex held.
  void DropProfiler(ContextState* state) {
    if (!state->profiler) return;
    state->profiler->Disable();
    state->profiler.reset();
    ReleaseProfilerSession();
  }

  // A CUPTI profiler error during measurement: stop measuring everywhere, keep tracing.
  // Called with the context's mutex held.
  void FailContext(ContextState* state, const ProfilerError& error) {
    DropProfiler(state);
    ReportFailure(error);
  }

  void ReportFailure(const ProfilerError& error) {
    std::string status;
    std::string message;
    if (error.insufficient_privileges()) {
      status = "no-permission: " + error.Message();
      message =
          "achieved occupancy not measured: no permission to read GPU performance "
          "counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); tracing continues. To enable: run as "
          "root or with CAP_PERFMON / CAP_SYS_ADMIN, or load the nvidia module with "
          "NVreg_RestrictProfilingToAdminUsers=0 "
          "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    } else if (error.result == CUPTI_ERROR_NOT_SUPPORTED ||
               error.result == CUPTI_ERROR_NOT_COMPATIBLE) {
      status = "unsupported: " + error.Message();
      message = "achieved occupancy not measured on this device: " + error.Message() +
                "; tracing continues";
    } else {
      status = "error: " + error.Message();
      message = "achieved occupancy measurement stopped: " + error.Message() +
                "; tracing continues";
    }
    disabled_.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> lock(status_mutex_);
    if (!status_.empty()) return;  // one line per run
    status_ = status;
    LogLine("%s", message.c_str());
  }

  void DisableAll(const std::string& status) {
    disabled_.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> lock(status_mutex_);
    if (status_.empty()) {
      status_ = status;
      LogLine("achieved occupancy not measured: %s", status.c_str());
    }
  }

  const AchievedSink sink_;
  const std::unique_ptr<ProfilerDevice> device_;
  const NanoClock clock_;
  AchievedPolicy policy_;
  const std::string policy_name_;
  const std::chrono::nanoseconds context_wait_;

  std::atomic<bool> disabled_{false};
  std::mutex session_mutex_;     // guards the two below: CUPTI's profiler session and its users
  bool profiler_session_ = false;  // cuptiProfilerInitialize done and not yet undone
  int enabled_profilers_ = 0;
  std::atomic<int64_t> session_ends_{0};
  // Where measured launches spend their time (OCC_META.achieved_phase_ms): the profiler's
  // Start, the launch call itself while profiled, then StopAndDecode's phases.
  enum Phase { kPhaseStart, kPhaseLaunch, kPhaseStop, kPhaseDecode, kPhaseEvaluate, kPhaseReset, kPhases };
  std::array<std::atomic<int64_t>, kPhases> phase_ns_{};
  std::atomic<int64_t> setup_ns_{0};             // on application threads
  std::atomic<int64_t> background_setup_ns_{0};  // on setup threads (StartSetupThread)
  std::atomic<int64_t> not_measured_{0};
  std::atomic<int64_t> parks_{0};
  // QuietPark / ListenForLaunches. callbacks_mutex_ serializes switching the launch callbacks
  // and is taken with no other lock held (it takes setup_threads_mutex_ inside).
  std::mutex callbacks_mutex_;
  CUpti_SubscriberHandle subscriber_ = nullptr;  // guarded by callbacks_mutex_
  bool quiet_park_failed_ = false;               // guarded by callbacks_mutex_
  std::atomic<bool> launch_callbacks_on_{true};
  std::atomic<int64_t> launches_awaiting_exit_{0};
  std::atomic<int> enabled_profilers_now_{0};  // enabled_profilers_, readable without its mutex
  std::atomic<uint64_t> callbacks_epoch_{g_next_callbacks_epoch.fetch_add(1)};
  std::atomic<int64_t> callbacks_on_since_ns_{0};
  std::atomic<int64_t> quiet_parks_{0};
  std::atomic<int64_t> listens_{0};
  std::atomic<int64_t> unparks_{0};
  std::atomic<int64_t> context_wait_timeouts_{0};
  // A context's profiler could not be disabled (its lock never came free).
  std::atomic<bool> left_enabled_{false};

  std::mutex contexts_mutex_;
  std::unordered_map<CUcontext, std::shared_ptr<ContextState>> contexts_;
  bool shut_down_ = false;
  // Version of contexts_ (see ThreadState::contexts_version); written under contexts_mutex_.
  std::atomic<uint64_t> contexts_version_{
      g_next_contexts_version.fetch_add(1, std::memory_order_relaxed)};

  // Setup threads are detached; Shutdown waits (bounded) until none runs. A leaf lock.
  std::mutex setup_threads_mutex_;
  std::condition_variable setup_threads_done_;
  int setup_threads_running_ = 0;
  bool setup_threads_closed_ = false;

  mutable std::mutex status_mutex_;
  std::string status_;  // empty while fine
  std::string metrics_;
  std::string chip_;
};

}  // namespace

std::unique_ptr<AchievedProfiler> CreateAchievedProfiler(AchievedSink sink) {
  std::vector<std::string> warnings;
  const AchievedConfig config = ParseAchievedConfig(ProcessEnvironment(), &warnings);
  for (const std::string& warning : warnings) LogLine("%s", warning.c_str());
  if (config.mode == AchievedMode::kOff) return nullptr;
  return CreateRangeAchievedProfiler(std::move(sink), config, CreateCuptiProfilerDevice(),
                                     BootTimeNs, ProcessStartBootTimeNs());
}

std::unique_ptr<AchievedProfiler> CreateRangeAchievedProfiler(
    AchievedSink sink, AchievedConfig config, std::unique_ptr<ProfilerDevice> device,
    NanoClock clock, int64_t start_ns) {
  return std::make_unique<RangeAchievedProfiler>(std::move(sink), config, std::move(device),
                                                 std::move(clock), start_ns);
}

}  // namespace occ::inj
